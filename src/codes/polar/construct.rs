//! How a polar code's frozen set is chosen: the 5G reliability sequence,
//! Gaussian approximation at a design Eb/N0, or a file.

use super::code::{PolarCode, check_sizes};
use super::ga::ga_reliability;
use super::sequence::nr_reliability;
use crate::codes::error::{CodeResult, invalid};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest frozen-set file read: 1 MiB holds the 2^16 indices of the
/// longest code, written in decimal, several times over.
pub const MAX_FROZEN_FILE_BYTES: u64 = 1 << 20;

/// The rule that picks a code's frozen bits.
///
/// # Example
/// ```
/// use gpufec::codes::polar::Construction;
/// let c: Construction = "ga:2.5".parse().unwrap();
/// assert_eq!(c, Construction::Ga { design_ebn0_db: 2.5 });
/// assert_eq!(c.build(256, 128).unwrap().k(), 128);
/// assert_eq!("5g".parse::<Construction>().unwrap().build(1024, 512).unwrap().n(), 1024);
/// assert!("ga:hot".parse::<Construction>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Construction {
    /// The 5G NR reliability sequence (TS 38.212 Table 5.3.1.2-1), N ≤ 1024.
    Nr,
    /// Gaussian approximation at a design Eb/N0 (dB, per information bit
    /// of the code's own rate K/N).
    Ga {
        /// The Eb/N0 the code is designed for.
        design_ebn0_db: f64,
    },
    /// The frozen bit indices listed in a file (see [`read_frozen_file`]).
    File(PathBuf),
}

impl Construction {
    /// The code of N = `n` bits with K = `k` information bits.
    pub fn build(&self, n: usize, k: usize) -> CodeResult<PolarCode> {
        let m = check_sizes(n, k)?;
        match self {
            Construction::Nr => PolarCode::from_reliability(n, k, &nr_reliability(n)?),
            Construction::Ga { design_ebn0_db } => PolarCode::from_reliability(n, k, &ga_reliability(m, *design_ebn0_db, k as f64 / n as f64)?),
            Construction::File(path) => PolarCode::from_frozen(n, &read_frozen_file(path, n, k)?),
        }
    }
}

impl std::str::FromStr for Construction {
    type Err = crate::codes::error::CodeError;

    /// `5g`, `ga:DB` (a design Eb/N0 in dB), or the path of a frozen-set file.
    fn from_str(s: &str) -> CodeResult<Self> {
        let s = s.trim();
        if s == "5g" {
            return Ok(Construction::Nr);
        }
        if let Some(db) = s.strip_prefix("ga:") {
            let design_ebn0_db: f64 = db.trim().parse().map_err(|_| invalid!("construction '{s}': ga:DB takes a design Eb/N0 in dB, not '{db}'"))?;
            crate::codes::channel::noise_variance(design_ebn0_db, 0.5)?;
            return Ok(Construction::Ga { design_ebn0_db });
        }
        if s.is_empty() || s == "ga" {
            return Err(invalid!("construction '{s}': give 5g, ga:DB (a design Eb/N0 in dB) or a frozen-set file"));
        }
        Ok(Construction::File(PathBuf::from(s)))
    }
}

impl std::fmt::Display for Construction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Construction::Nr => f.write_str("5g"),
            Construction::Ga { design_ebn0_db } => write!(f, "ga:{design_ebn0_db}"),
            Construction::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// The frozen bit indices of a code of N = `n` bits with K = `k`
/// information bits, read from the text file at `path`: exactly N − K
/// distinct decimal indices below N, separated by white space or commas;
/// `#` starts a comment that runs to the end of its line.
///
/// Every limit is checked before anything the file controls is allocated:
/// N and K first, the file's size (at most [`MAX_FROZEN_FILE_BYTES`]),
/// then each index as it is read (its range, a repeat, one more than N − K).
pub fn read_frozen_file(path: &Path, n: usize, k: usize) -> CodeResult<Vec<usize>> {
    check_sizes(n, k)?;
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| invalid!("frozen-set file {shown}: {e}"))?;
    let size = file.metadata().map_err(|e| invalid!("frozen-set file {shown}: {e}"))?.len();
    if size > MAX_FROZEN_FILE_BYTES {
        return Err(invalid!("frozen-set file {shown} has {size} bytes, more than the {MAX_FROZEN_FILE_BYTES} accepted"));
    }
    let mut text = String::new();
    file.take(MAX_FROZEN_FILE_BYTES).read_to_string(&mut text).map_err(|e| invalid!("frozen-set file {shown}: {e}"))?;
    parse_frozen(&text, n, k).map_err(|e| invalid!("frozen-set file {shown}: {e}"))
}

/// The indices of a frozen-set file's text (see [`read_frozen_file`]).
fn parse_frozen(text: &str, n: usize, k: usize) -> Result<Vec<usize>, String> {
    let want = n - k;
    let mut seen = vec![false; n];
    let mut frozen = Vec::with_capacity(want);
    for (line_no, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default();
        for word in line.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()) {
            let at = line_no + 1;
            let i: usize = word.parse().map_err(|_| format!("line {at}: '{word}' is not a bit index"))?;
            if i >= n {
                return Err(format!("line {at}: index {i} is outside a code of N = {n} bits"));
            }
            if std::mem::replace(&mut seen[i], true) {
                return Err(format!("line {at}: index {i} is frozen twice"));
            }
            if frozen.len() == want {
                return Err(format!("line {at}: more than the N − K = {want} frozen indices of an ({n}, {k}) code"));
            }
            frozen.push(i);
        }
    }
    if frozen.len() != want {
        return Err(format!("{} frozen indices for an ({n}, {k}) code, which has N − K = {want}", frozen.len()));
    }
    Ok(frozen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_checks_every_index() {
        assert_eq!(parse_frozen("0, 1 2 # the rest\n4", 8, 4).unwrap(), vec![0, 1, 2, 4]);
        for (text, says) in [
            ("0 1 2", "3 frozen indices"),
            ("0 1 2 4 5", "more than the N − K = 4"),
            ("0 1 2 2", "frozen twice"),
            ("0 1 2 8", "outside a code of N = 8"),
            ("0 1 2 -4", "not a bit index"),
            ("0 1 2 99999999999999999999999", "not a bit index"),
        ] {
            let e = parse_frozen(text, 8, 4).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn files_are_checked_before_they_are_read() {
        let dir = std::env::temp_dir().join(format!("gpufec-polar-frozen-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.txt");
        std::fs::write(&good, "0 1 2 4\n").unwrap();
        let code = Construction::File(good.clone()).build(8, 4).unwrap();
        assert_eq!(code.info(), &[3, 5, 6, 7]);
        let e = Construction::File(good).build(8, 5).unwrap_err().to_string();
        assert!(e.contains("more than the N − K = 3"), "{e}");
        let big = dir.join("big.txt");
        std::fs::write(&big, vec![b' '; MAX_FROZEN_FILE_BYTES as usize + 1]).unwrap();
        let e = read_frozen_file(&big, 8, 4).unwrap_err().to_string();
        assert!(e.contains("more than the 1048576 accepted"), "{e}");
        let e = read_frozen_file(&dir.join("missing.txt"), 8, 4).unwrap_err().to_string();
        assert!(e.contains("missing.txt"), "{e}");
        let e = read_frozen_file(&dir, 8, 4).unwrap_err().to_string();
        assert!(e.contains("frozen-set file"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn names_parse_and_print_back() {
        for s in ["5g", "ga:1.5", "ga:-2", "codes/frozen.txt"] {
            assert_eq!(s.parse::<Construction>().unwrap().to_string(), s);
        }
        for s in ["", "ga", "ga:", "ga:x", "ga:1e9"] {
            assert!(s.parse::<Construction>().is_err(), "{s}");
        }
        let e = Construction::Nr.build(2048, 1024).unwrap_err().to_string();
        assert!(e.contains("1024"), "{e}");
    }
}
