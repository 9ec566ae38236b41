//! Embeds every CUDA source in `kernels/` into the crate, so the binary carries
//! its device code and compiles it with NVRTC on the machine it runs on.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new("kernels");
    println!("cargo:rerun-if-changed=kernels");
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("kernels/ is missing")
        .map(|e| e.expect("unreadable entry in kernels/").path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("cu" | "cuh")))
        .collect();
    entries.sort();
    let mut out = String::from("/// Every file of `kernels/`: (file name, source text).\npub const SOURCES: &[(&str, &str)] = &[\n");
    for p in &entries {
        println!("cargo:rerun-if-changed={}", p.display());
        let name = p.file_name().unwrap().to_str().expect("kernel file names are UTF-8");
        let abs = std::fs::canonicalize(p).expect("kernel path");
        writeln!(out, "    ({name:?}, include_str!({:?})),", abs.display().to_string()).unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("kernel_sources.rs");
    std::fs::write(dest, out).expect("write kernel_sources.rs");
}
