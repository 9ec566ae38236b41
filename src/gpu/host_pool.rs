//! The host threads that stage GPU input and unpack GPU output, shared by
//! every GPU decoder of the process.
//!
//! Two decoders that each started a pool of three quarters of the cores would
//! oversubscribe the host and fight over the memory bandwidth the copy engine
//! needs; decoders asking for the same number of threads share one pool.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Most host threads a pipeline may ask for.
pub const MAX_HOST_THREADS: usize = 1024;

/// Threads for the host's copies unless told: three quarters of the cores.
/// Staging only has to outrun the copy engine (13–15 GB/s a core with
/// streaming stores, against 55 GB/s of PCIe), and every thread more takes host
/// memory bandwidth the copy engine needs. Over six leases of the lent 16-core
/// H200 and H100 VMs, 12 threads gave 19.7–21.0 Gb/s end to end, 8 gave
/// 18.2–22.6 and 16 gave 16.7–20.6 (BENCHMARKS.md, version 4).
pub fn default_host_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| (n.get() * 3 / 4).max(1))
}

/// The process's pool of `threads` threads (0: [`default_host_threads`]),
/// started on first use and kept while a pipeline holds it.
pub(crate) fn host_pool(threads: usize) -> anyhow::Result<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Weak<rayon::ThreadPool>>>> = OnceLock::new();
    let threads = if threads == 0 { default_host_threads() } else { threads };
    anyhow::ensure!(threads <= MAX_HOST_THREADS, "{threads} host threads for the GPU pipeline; at most {MAX_HOST_THREADS}");
    let mut pools = POOLS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(pool) = pools.get(&threads).and_then(Weak::upgrade) {
        return Ok(pool);
    }
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("gpufec-stage-{i}"))
            .build()
            .map_err(|e| anyhow::anyhow!("could not start {threads} host threads for the GPU pipeline: {e}"))?,
    );
    pools.insert(threads, Arc::downgrade(&pool));
    Ok(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoders_asking_for_the_same_threads_share_one_pool() {
        let a = host_pool(3).unwrap();
        let b = host_pool(3).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.current_num_threads(), 3);
        let c = host_pool(2).unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert!(host_pool(MAX_HOST_THREADS + 1).unwrap_err().to_string().contains("at most"));
        // Once nobody holds it, the next request starts a new pool.
        let weak = Arc::downgrade(&c);
        drop(c);
        assert!(weak.upgrade().is_none());
    }
}
