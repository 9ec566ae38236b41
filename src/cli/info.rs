//! `gpufec info`: the CPU and its SIMD level, the GPUs and their limits, the
//! kernel cache; or a plain statement that there is no usable GPU and why.

use super::bench::cpu_model;
use crate::codes::simd::SimdLevel;

/// Bytes of the copy that measures each device's host→device rate.
const H2D_BYTES: usize = 256 << 20;

/// Print what `gpufec info` shows.
pub fn info() -> anyhow::Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("CPU: {}, {cores} cores; CPU decoders run at SIMD level {}", cpu_model(), SimdLevel::detect());
    match crate::gpu::devices() {
        Err(why) => println!("no GPU usable here ({why:#}): every decoder runs on the CPU"),
        Ok(devices) if devices.is_empty() => println!("no GPU here: the CUDA driver found no device"),
        Ok(devices) => {
            if let Some(d) = devices.first() {
                println!("CUDA driver {}.{}", d.driver_version / 1000, d.driver_version % 1000 / 10);
            }
            let count = devices.len();
            for d in devices {
                println!(
                    "GPU {}: {}, {} SMs, {:.1} GiB, compute capability {}.{}, {} KiB shared memory per SM ({} KiB per block), {} MiB L2",
                    d.index,
                    d.name,
                    d.sms,
                    d.memory_bytes as f64 / (1u64 << 30) as f64,
                    d.compute_capability.0,
                    d.compute_capability.1,
                    d.smem_per_sm / 1024,
                    d.smem_per_block_optin / 1024,
                    d.l2_bytes >> 20
                );
            }
            match crate::gpu::nvrtc_available() {
                Ok(()) => {
                    println!("{}", crate::gpu::kernel_cache_status());
                    // Every device on its own; a failure is reported, not
                    // fatal: the listing above stands.
                    for d in 0..count {
                        match crate::gpu::pipeline_selftest(d) {
                            Ok(line) => println!("GPU {d}: {line}"),
                            Err(e) => println!("GPU {d}: pipeline self-test FAILED: {e:#}"),
                        }
                        match crate::gpu::bench::pinned_h2d_gbps(d, H2D_BYTES) {
                            Ok(gb) => println!("GPU {d}: host→device {gb:.1} GB/s from pinned memory ({} MiB)", H2D_BYTES >> 20),
                            Err(e) => println!("GPU {d}: host→device copy FAILED: {e:#}"),
                        }
                    }
                }
                Err(why) => println!("{why:#}"),
            }
        }
    }
    Ok(())
}
