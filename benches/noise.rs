//! Gaussian channel noise throughput, in million samples per second:
//! `GaussianNoise::fill` and `add_scaled` on one thread (the best SIMD path
//! this CPU runs), `par_add_scaled` on all cores, and the whole channel of the
//! chains (`BpskAwgn<i8>`: bits to quantized LLRs, on all cores), for a buffer
//! that stays in cache and one that does not.
//!
//! `cargo bench --bench noise [-- SECONDS_PER_POINT]`
//!
//! Each point repeats the call for about the given time (default 0.5 s) and
//! reports the mean rate.

use gpufec::codes::channel::{BpskAwgn, GaussianNoise, Quantizer};
use std::time::{Duration, Instant};

/// Mean million samples per second of `f(first, buffer)` over `budget` on a buffer of `n`.
fn rate(n: usize, budget: Duration, f: &mut dyn FnMut(u64, &mut [f32])) -> f64 {
    let mut y = vec![1.0f32; n];
    f(0, &mut y);
    let (t, mut done) = (Instant::now(), 0u64);
    while t.elapsed() < budget {
        f(done, &mut y);
        done += n as u64;
    }
    done as f64 / t.elapsed().as_secs_f64() / 1e6
}

fn main() {
    let seconds: f64 = std::env::args().skip(1).find(|a| !a.starts_with('-')).and_then(|a| a.parse().ok()).unwrap_or(0.5);
    let budget = Duration::from_secs_f64(seconds);
    let noise = GaussianNoise::new(1);
    let threads = rayon::current_num_threads();
    println!("| samples | fill, 1 thread | add_scaled, 1 thread | par_add_scaled, {threads} threads | BpskAwgn<i8>, {threads} threads |");
    println!("|---|---|---|---|---|");
    for n in [1usize << 14, 1 << 22] {
        let fill = rate(n, budget, &mut |first, y| noise.fill(first, y));
        let add = rate(n, budget, &mut |first, y| noise.add_scaled(first, 0.5, y));
        let par = rate(n, budget, &mut |first, y| noise.par_add_scaled(first, 0.5, y));
        let bits: Vec<u8> = (0..n as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 31) as u8).collect();
        let (mut channel, mut llrs) = (BpskAwgn::<i8>::with_quantizer(4.0, 0.5, 1, Quantizer::new(6.37).unwrap()).unwrap(), vec![0i8; n]);
        let fused = rate(n, budget, &mut |_, _| channel.transmit_into(&bits, &mut llrs).unwrap());
        println!("| {n} | {fill:.0} | {add:.0} | {par:.0} | {fused:.0} |");
    }
}
