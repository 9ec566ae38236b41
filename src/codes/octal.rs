//! Generator polynomials written in octal, as code tables and standards
//! write them (171,133 for the K=7 convolutional code, 13,15 for LTE's
//! constituent code): read by every family that takes generators.

use crate::codes::error::{CodeResult, invalid};

/// Parse one generator written in octal digits (at most 4, an optional `0o`).
///
/// # Example
/// ```
/// use gpufec::codes::octal::parse_octal;
/// assert_eq!(parse_octal("171").unwrap(), 0o171);
/// assert!(parse_octal("18").is_err());
/// ```
pub fn parse_octal(s: &str) -> CodeResult<u32> {
    let t = s.trim();
    let t = t.strip_prefix("0o").unwrap_or(t);
    if t.is_empty() || t.len() > 4 || !t.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return Err(invalid!("generator polynomial '{s}' is not an octal number of at most 4 digits"));
    }
    u32::from_str_radix(t, 8).map_err(|e| invalid!("generator polynomial '{s}': {e}"))
}

/// Generators as comma-separated octal, e.g. `171,133`.
pub fn format_octal(polys: &[u32]) -> String {
    polys.iter().map(|p| format!("{p:o}")).collect::<Vec<_>>().join(",")
}
