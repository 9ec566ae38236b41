//! Run-time compilation of the embedded kernels with NVRTC, for the device's
//! own architecture, with the code parameters as compile-time constants. Each
//! loaded module is kept for the life of the process, and each compiled image
//! on disk across processes ([`super::kernel_cache`]): a kernel takes NVRTC a
//! few seconds, and families compile one kernel per block size.

use super::device::cuda;
use super::kernel_cache;
use super::sources::source;
use cudarc::driver::{CudaContext, CudaFunction};
use cudarc::nvrtc::{result as nvrtc, sys as nvrtc_sys};
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Arc, Mutex, OnceLock};

/// `#include "x"` of an embedded file replaced by its text, so that NVRTC needs
/// no include path; each file's text once, as `#pragma once` would have it
/// (a kernel may include two headers that both include `common.cuh`).
fn expand(file: &str) -> anyhow::Result<String> {
    expand_once(file, &mut std::collections::HashSet::new())
}

fn expand_once(file: &str, seen: &mut std::collections::HashSet<String>) -> anyhow::Result<String> {
    let text = source(file).ok_or_else(|| anyhow::anyhow!("kernel source {file} is not embedded"))?;
    seen.insert(file.to_string());
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        match line.trim().strip_prefix("#include \"").and_then(|r| r.strip_suffix('"')) {
            Some(inc) if seen.contains(inc) => {}
            Some(inc) => out.push_str(&expand_once(inc, seen)?),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    Ok(out)
}

fn nvrtc_err(what: &'static str) -> impl FnOnce(nvrtc::NvrtcError) -> anyhow::Error {
    move |e| anyhow::anyhow!("NVRTC {what} failed: {e:?}")
}

/// `Ok` when NVRTC, CUDA's run-time compiler, can be loaded; otherwise why not.
pub fn nvrtc_available() -> anyhow::Result<()> {
    // SAFETY: only tries to open the library.
    if !unsafe { nvrtc_sys::is_culib_present() } {
        anyhow::bail!("NVRTC (libnvrtc.so.13), CUDA's run-time compiler, was not found; it is needed to build the GPU kernels");
    }
    Ok(())
}

/// NVRTC's options for `arch` (e.g. `sm_90`) and `defines`, in the order they
/// are passed (the order is part of the cache key).
fn options(arch: &str, defines: &[(String, String)]) -> Vec<String> {
    let mut opts = vec![format!("--gpu-architecture={arch}"), "-std=c++17".into(), "--device-as-default-execution-space".into()];
    opts.extend(defines.iter().map(|(k, v)| format!("-D{k}={v}")));
    opts
}

/// NVRTC's (major, minor) version, asked once per process.
fn nvrtc_version() -> anyhow::Result<(i32, i32)> {
    static VERSION: OnceLock<(i32, i32)> = OnceLock::new();
    if let Some(v) = VERSION.get() {
        return Ok(*v);
    }
    nvrtc_available()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two ints; the library is present (checked above).
    unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) }.result().map_err(nvrtc_err("nvrtcVersion"))?;
    Ok(*VERSION.get_or_init(|| (major, minor)))
}

/// Compile `file` (an embedded kernel) for `arch` (e.g. `sm_90`) with `defines`
/// and return the CUBIN image. A compile error carries NVRTC's log.
pub(crate) fn compile_cubin(file: &str, arch: &str, defines: &[(String, String)]) -> anyhow::Result<Vec<u8>> {
    nvrtc_available()?;
    compile_text(file, &expand(file)?, &options(arch, defines))
}

/// Compile the expanded source `text` of `file` with `opts` to a CUBIN image.
fn compile_text(file: &str, text: &str, opts: &[String]) -> anyhow::Result<Vec<u8>> {
    let src = CString::new(text)?;
    let name = CString::new(file)?;
    let prog = nvrtc::create_program(&src, Some(&name)).map_err(nvrtc_err("nvrtcCreateProgram"))?;
    // SAFETY: `prog` is a live program; it is destroyed on every path below.
    let result = unsafe {
        match nvrtc::compile_program(prog, opts) {
            Ok(()) => {
                let mut size = 0usize;
                nvrtc_sys::nvrtcGetCUBINSize(prog, &mut size).result().map_err(nvrtc_err("nvrtcGetCUBINSize")).and_then(|()| {
                    let mut image = vec![0u8; size];
                    nvrtc_sys::nvrtcGetCUBIN(prog, image.as_mut_ptr() as *mut _).result().map_err(nvrtc_err("nvrtcGetCUBIN"))?;
                    Ok(image)
                })
            }
            Err(e) => {
                let log = nvrtc::get_program_log(prog)
                    .map(|l| String::from_utf8_lossy(&l.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect::<Vec<_>>()).into_owned())
                    .unwrap_or_default();
                Err(anyhow::anyhow!("NVRTC could not compile {file} ({e:?}) with {}:\n{log}", opts.join(" ")))
            }
        }
    };
    // SAFETY: created above, destroyed once.
    let _ = unsafe { nvrtc::destroy_program(prog) };
    result
}

/// The kernel `entry` of `file` compiled for the device of `ctx` with `defines`:
/// loaded once per process and parameter set, compiled only when the disk cache
/// has no image for it.
pub(crate) fn kernel(ctx: &Arc<CudaContext>, file: &str, entry: &str, defines: &[(String, String)]) -> anyhow::Result<CudaFunction> {
    let mut f = kernels(ctx, file, &[entry], defines)?;
    Ok(f.remove(0))
}

/// Several kernels of `file` from one compilation (a family whose decoder
/// launches more than one kernel): as [`kernel`], in the order of `entries`.
/// The image is keyed by the entries joined with commas, so that one entry
/// keys as [`kernel`] keys it.
pub(crate) fn kernels(ctx: &Arc<CudaContext>, file: &str, entries: &[&str], defines: &[(String, String)]) -> anyhow::Result<Vec<CudaFunction>> {
    type Key = (usize, String, String, Vec<(String, String)>);
    static CACHE: OnceLock<Mutex<HashMap<Key, Vec<CudaFunction>>>> = OnceLock::new();
    let entry = entries.join(",");
    let key = (ctx.ordinal(), file.to_string(), entry.clone(), defines.to_vec());
    if let Some(f) = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(f.clone());
    }
    let (major, minor) = ctx.compute_capability().map_err(cuda("cuDeviceGetAttribute"))?;
    let arch = format!("sm_{major}{minor}");
    let text = expand(file)?;
    let opts = options(&arch, defines);
    let disk_key = kernel_cache::key_text(file, &entry, &arch, nvrtc_version()?, &opts, &text);
    let module = kernel_cache::global().module(
        &disk_key,
        || compile_text(file, &text, &opts),
        |image| ctx.load_module(cudarc::nvrtc::Ptx::from_binary(image.to_vec())).map_err(cuda("cuModuleLoadData")),
    )?;
    let f = entries.iter().map(|e| module.load_function(e).map_err(cuda("cuModuleGetFunction"))).collect::<anyhow::Result<Vec<_>>>()?;
    CACHE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner()).insert(key, f.clone());
    Ok(f)
}

#[cfg(test)]
mod tests {
    #[test]
    fn includes_of_embedded_headers_are_expanded() {
        let s = super::expand("conv.cu").unwrap();
        assert!(!s.contains("#include \"common.cuh\""));
        assert!(s.contains("typedef signed char i8;"));
        // Through link.cuh and polar.cuh both: the shared header's text once.
        assert_eq!(super::expand("polar_link.cu").unwrap().matches("typedef signed char i8;").count(), 1);
    }
}
