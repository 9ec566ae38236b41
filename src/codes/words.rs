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

#[cfg(test)]
mod tests {
    use super::count_of;

    #[test]
    fn one_is_singular_and_the_rest_plural() {
        assert_eq!(count_of(1u32, "thread"), "1 thread");
        assert_eq!(count_of(2u32, "thread"), "2 threads");
        assert_eq!(count_of(0u32, "unit"), "0 units");
        assert_eq!(count_of(1u64, "batch"), "1 batch");
        assert_eq!(count_of(16u64, "batch"), "16 batches");
    }
}
