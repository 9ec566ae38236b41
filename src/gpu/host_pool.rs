//! The host threads that stage GPU input and unpack GPU output: one pool per
//! process, shared by every GPU decoder.
//!
//! Two decoders that each started a pool of three quarters of the cores would
//! oversubscribe the host and fight over the memory bandwidth the copy engine
//! needs. The pool lives while a decoder holds it; its size is fixed by the
//! decoder that starts it, and a decoder asking for another size while it
//! lives is refused (one that asks for 0 takes it as it is).

use std::sync::{Arc, Mutex, Weak};

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

/// The process's pool: the running one when `threads` is 0 or its size, a new
/// one of `threads` threads (0: [`default_host_threads`]) when none runs.
pub(crate) fn host_pool(threads: usize) -> anyhow::Result<Arc<rayon::ThreadPool>> {
    static POOL: Mutex<Weak<rayon::ThreadPool>> = Mutex::new(Weak::new());
    anyhow::ensure!(threads <= MAX_HOST_THREADS, "{threads} host threads for the GPU pipeline; at most {MAX_HOST_THREADS}");
    let mut slot = POOL.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(pool) = slot.upgrade() {
        let size = pool.current_num_threads();
        anyhow::ensure!(
            threads == 0 || threads == size,
            "the GPU decoders of a process share one pool of host threads, which has {size}; a decoder asks for {threads} (give all the same, or 0)"
        );
        return Ok(pool);
    }
    let threads = if threads == 0 { default_host_threads() } else { threads };
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("gpufec-stage-{i}"))
            .build()
            .map_err(|e| anyhow::anyhow!("could not start {threads} host threads for the GPU pipeline: {e}"))?,
    );
    *slot = Arc::downgrade(&pool);
    Ok(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_decoder_of_a_process_shares_one_pool() {
        let a = host_pool(3).unwrap();
        let b = host_pool(0).unwrap();
        let c = host_pool(3).unwrap();
        assert!(Arc::ptr_eq(&a, &b) && Arc::ptr_eq(&a, &c));
        assert_eq!(a.current_num_threads(), 3);
        let e = host_pool(2).unwrap_err().to_string();
        assert!(e.contains("share one pool of host threads, which has 3"), "{e}");
        assert!(host_pool(MAX_HOST_THREADS + 1).unwrap_err().to_string().contains("at most"));
        // Once no decoder holds it, the next one starts a pool of its own size.
        drop((a, b, c));
        assert_eq!(host_pool(2).unwrap().current_num_threads(), 2);
    }
}
