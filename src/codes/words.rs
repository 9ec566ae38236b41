//! Counts as people write them: "1 thread", "2 threads", "3 batches".

/// `n` and `noun`, the noun plural unless `n` is 1 ("es" after -ch, -s,
/// -x, otherwise "s").
pub fn count_of(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        return format!("1 {noun}");
    }
    let es = ["ch", "s", "x"].iter().any(|e| noun.ends_with(e));
    format!("{n} {noun}{}", if es { "es" } else { "s" })
}

/// `sizes` with repeats gathered, in order: `6144`, `16 × 6144`,
/// `3 × 6080 + 13 × 6144` (a transport block's 172 code blocks take one line).
pub fn runs_of(sizes: &[usize]) -> String {
    if let [one] = sizes {
        return one.to_string();
    }
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &s in sizes {
        match runs.last_mut() {
            Some((size, n)) if *size == s => *n += 1,
            _ => runs.push((s, 1)),
        }
    }
    runs.iter().map(|(s, n)| format!("{n} × {s}")).collect::<Vec<_>>().join(" + ")
}

#[cfg(test)]
mod tests {
    use super::{count_of, runs_of};

    #[test]
    fn runs_gather_repeats_in_order() {
        assert_eq!(runs_of(&[6144]), "6144");
        assert_eq!(runs_of(&[6144; 16]), "16 × 6144");
        assert_eq!(runs_of(&[6080, 6080, 6144, 6144, 6144]), "2 × 6080 + 3 × 6144");
        assert_eq!(runs_of(&[40, 48, 40]), "1 × 40 + 1 × 48 + 1 × 40");
        assert_eq!(runs_of(&[]), "");
    }

    #[test]
    fn one_is_singular_and_the_rest_plural() {
        assert_eq!(count_of(1u32, "thread"), "1 thread");
        assert_eq!(count_of(2u32, "thread"), "2 threads");
        assert_eq!(count_of(0u32, "unit"), "0 units");
        assert_eq!(count_of(1u64, "batch"), "1 batch");
        assert_eq!(count_of(16u64, "batch"), "16 batches");
    }
}
