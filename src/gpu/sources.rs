//! The CUDA sources of `kernels/`, embedded at build time by `build.rs`.

include!(concat!(env!("OUT_DIR"), "/kernel_sources.rs"));

/// The text of one embedded kernel file, or `None` if there is no such file.
pub fn source(name: &str) -> Option<&'static str> {
    SOURCES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_shared_header_is_embedded() {
        assert!(super::source("common.cuh").is_some_and(|s| s.contains("LLR")));
        assert!(super::source("nope.cu").is_none());
    }
}
