//! Counts as people write them on a command line: `20000000`, `2e7`, `1.5e6`.

/// Parse a whole number ≥ 0, written out or in scientific notation.
///
/// # Example
/// ```
/// use gpufec::cli::parse_count;
/// assert_eq!(parse_count("2e7").unwrap(), 20_000_000);
/// assert_eq!(parse_count("1.5e3").unwrap(), 1500);
/// assert_eq!(parse_count("12").unwrap(), 12);
/// assert!(parse_count("1.5").is_err());
/// assert!(parse_count("-3").is_err());
/// assert!(parse_count("lots").is_err());
/// ```
pub fn parse_count(text: &str) -> anyhow::Result<u64> {
    let t = text.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Ok(n);
    }
    match t.parse::<f64>() {
        // Beyond 2^53 a float no longer names every whole number.
        Ok(x) if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= 9_007_199_254_740_992.0 => Ok(x as u64),
        Ok(x) if x.is_finite() && x > 9_007_199_254_740_992.0 => anyhow::bail!("'{text}' is above the largest count, 2^53 (9007199254740992)"),
        _ => anyhow::bail!("'{text}' is not a count: write a whole number such as 20000000 or 2e7"),
    }
}

/// [`parse_count`] as a `usize`.
pub fn count_usize(text: &str) -> anyhow::Result<usize> {
    usize::try_from(parse_count(text)?).map_err(|_| anyhow::anyhow!("'{text}' is too large for this machine"))
}
