//! A family lives in its own rooms, checked on the source tree so that it
//! stays true: no file of one family names another family, and no shared
//! file names a family, in code (comments and string literals aside; the
//! code of doc examples counted). A family's rooms are `src/codes/<f>/`,
//! `src/gpu/<f>/`, `src/blocks/<f>/` (or `<f>.rs`),
//! `src/flowgraph/registry/<f>.rs`, `src/cli/<f>.rs`, `kernels/<f>.cu` and
//! `tests/`, `benches/`, `examples/` files named `<f>_*.rs`; the lists that
//! name every family are the five `mod.rs` of `codes`, `gpu`, `blocks`,
//! `registry` and `cli`.

use gpufec::flowgraph::family::families;
use std::path::{Path, PathBuf};

/// The lists, which may name every family.
const LISTS: [&str; 5] = ["src/codes/mod.rs", "src/gpu/mod.rs", "src/blocks/mod.rs", "src/flowgraph/registry/mod.rs", "src/cli/mod.rs"];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "cu" || e == "cuh") {
            out.push(path);
        }
    }
}

/// The family whose room `path` (relative to the repository) is in, if any.
fn room_of(path: &str, names: &[&'static str]) -> Option<&'static str> {
    names.iter().copied().find(|f| {
        [format!("src/codes/{f}/"), format!("src/gpu/{f}/"), format!("src/blocks/{f}/")].iter().any(|d| path.starts_with(d))
            || [format!("src/blocks/{f}.rs"), format!("src/flowgraph/registry/{f}.rs"), format!("src/cli/{f}.rs"), format!("kernels/{f}.cu")].iter().any(|p| path == p)
            || ["tests", "benches", "examples"].iter().any(|d| path.starts_with(&format!("{d}/{f}_")))
    })
}

/// The code of a source file: comments and string and character literals
/// blanked, the code of doc examples kept.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut in_fence = false;
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(doc) = t.strip_prefix("///").or_else(|| t.strip_prefix("//!")) {
            if doc.trim_start().starts_with("```") {
                in_fence = !in_fence;
            } else if in_fence {
                out.push_str(doc);
            }
            out.push('\n');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    // Blank comments and literals of what remains.
    let chars: Vec<char> = out.chars().collect();
    let mut code = String::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied().unwrap_or('\0');
        if c == '/' && next == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == '*' {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == 'r' && (next == '"' || next == '#') && !chars.get(i.wrapping_sub(1)).is_some_and(|p| p.is_alphanumeric() || *p == '_') {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                code.push(c);
                i += 1;
                continue;
            }
            j += 1;
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            while j < chars.len() && !chars[j..].iter().take(close.len()).copied().eq(close.chars()) {
                j += 1;
            }
            i = j + close.len();
            code.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            code.push_str("\"\"");
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
        } else if c == '\'' && next == '\\' {
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else {
            code.push(c);
            i += 1;
        }
    }
    code
}

/// Whether `code` holds `word` as a whole word (or path segment).
fn has_word(code: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices(word).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// The names a family's rooms export through a list: `pub use f::{A, B};`.
fn exported(list: &str, family: &str) -> Vec<String> {
    let text = code_of(&std::fs::read_to_string(list).unwrap());
    let flat = text.replace('\n', " ");
    let mut names = Vec::new();
    for part in flat.split(&format!("pub use {family}::")).skip(1) {
        let item = part.split(';').next().unwrap_or_default();
        let item = item.trim().trim_start_matches('{').trim_end_matches('}');
        names.extend(item.split(',').map(|n| n.split_whitespace().last().unwrap_or_default().to_string()).filter(|n| !n.is_empty() && n != "self"));
    }
    names
}

/// What names family `g` in code: its module paths, and the names it exports through the lists.
fn marks_of(g: &str) -> Vec<String> {
    let mut marks: Vec<String> = ["codes", "gpu", "blocks", "registry", "cli", "super"].iter().map(|m| format!("{m}::{g}")).collect();
    for list in ["src/gpu/mod.rs", "src/blocks/mod.rs"] {
        marks.extend(exported(list, g));
    }
    marks.push(format!("{g}.cu"));
    marks
}

#[test]
fn no_family_names_another_and_no_shared_file_names_a_family() {
    let names: Vec<&'static str> = families().map(|f| f.name).collect();
    let marks: Vec<(&str, Vec<String>)> = names.iter().map(|&g| (g, marks_of(g))).collect();
    assert!(marks.iter().all(|(_, m)| m.len() > 7), "every family exports something through the lists: {marks:?}");
    let mut all = Vec::new();
    for dir in ["src", "kernels", "tests", "benches", "examples"] {
        files(Path::new(dir), &mut all);
    }
    let mut faults = Vec::new();
    for path in &all {
        let rel = path.to_string_lossy().replace('\\', "/");
        if LISTS.contains(&rel.as_str()) {
            continue;
        }
        let own = room_of(&rel, &names);
        let code = code_of(&std::fs::read_to_string(path).unwrap());
        for (g, ms) in &marks {
            if Some(*g) == own {
                continue;
            }
            if let Some(m) = ms.iter().find(|m| has_word(&code, m)) {
                let who = own.map_or("a shared file".to_string(), |f| format!("a file of the {f} family"));
                faults.push(format!("{rel}: {who} names the {g} family ({m})"));
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn the_check_sees_what_it_must() {
    let code = code_of("use crate::codes::conv::Tiler; // codes::turbo\nlet s = \"codes::turbo\";\n/// ```\n/// use gpufec::gpu::GpuTurbo;\n/// ```\n/// prose about GpuViterbi\n");
    assert!(has_word(&code, "codes::conv") && has_word(&code, "GpuTurbo"));
    assert!(!has_word(&code, "codes::turbo") && !has_word(&code, "GpuViterbi"));
    assert!(!has_word("codes::convolution", "codes::conv"));
    assert_eq!(room_of("src/gpu/turbo/bench.rs", &["conv", "turbo"]), Some("turbo"));
    assert_eq!(room_of("tests/conv_gpu.rs", &["conv", "turbo"]), Some("conv"));
    assert_eq!(room_of("src/gpu/pipeline.rs", &["conv", "turbo"]), None);
    assert!(exported("src/blocks/mod.rs", "turbo").contains(&"TurboDecoder".to_string()));
}
