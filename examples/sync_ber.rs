//! Symbol, bit and frame error rates of the sync family's CPU MAP decoder
//! against Pi = Pd (Ps = 0, hard bits), a stream of frames decoded back to
//! back through the shared window cutter.
//!
//! ```text
//! cargo run --release --example sync_ber -- q n N [max_bits] [max_errors] [p ...]
//! ```
//! With `SYNC_FRAMES=1` in the environment, each frame's received block is
//! handed whole instead (its end known), for comparison.
//! Defaults: 2^21 information bits or 300 bit errors per point, Pi = Pd in
//! {1e-1, 3e-2, 1e-2, 3e-3, 1e-3}, random codebooks per index (seed 1),
//! exclusion probability 1e-10, every core.

use gpufec::codes::sim::{StopRule, run_point};
use gpufec::codes::sync::{BsidParams, DecoderConfig, Framing, StateLimits, Sweep, SyncCode, SyncLink};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: f64| args.get(i).map_or(Ok(default), |a| a.parse::<f64>()).map_err(|e| format!("argument {i}: {e}"));
    let (q, n, symbols) = (arg(0, 16.0)? as usize, arg(1, 8.0)? as usize, arg(2, 210.0)? as usize);
    let stop = StopRule { max_bits: arg(3, (1u64 << 21) as f64)? as u64, max_errors: arg(4, 300.0)? as u64 };
    let mut points: Vec<f64> = args.iter().skip(5).map(|a| a.parse()).collect::<Result<_, _>>()?;
    if points.is_empty() {
        points = vec![1e-1, 3e-2, 1e-2, 3e-3, 1e-3];
    }
    let code = SyncCode::random(q, n, symbols, 1)?;
    let framing = if std::env::var_os("SYNC_FRAMES").is_some() { Framing::Frames } else { Framing::Stream };
    let cfg = DecoderConfig { framing, ..DecoderConfig::default() };
    let mut link = SyncLink::hard(code.clone(), BsidParams::new(0.0, 0.0, 0.0)?, Sweep::PiPd, cfg, 0);
    let how = match framing {
        Framing::Stream => "a stream of frames through the window cutter",
        Framing::Frames => "whole received frames (ends known)",
    };
    println!("{}; {how}; stop at {} bits or {} bit errors", code.describe(), stop.max_bits, stop.max_errors);
    println!("| Pi=Pd | limits | frames | symbols | SER | BER | FER | frames beyond limits (detected) | seconds |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for p in points {
        let point = run_point(&mut link, p, 1, stop, &AtomicBool::new(false), Duration::from_secs(3600), |_| {})?;
        let limits = StateLimits::new(&BsidParams::new(p, p, 0.0)?, n, symbols, cfg.exclusion)?.describe();
        let ser = point.symbol_errors as f64 / point.symbols as f64;
        println!(
            "| {p:e} | {limits} | {} | {} | {ser:.3e} | {:.3e} | {:.3e} | {} | {:.1} |",
            point.frames,
            point.symbols,
            point.ber(),
            point.fer(),
            point.detected,
            point.seconds
        );
    }
    Ok(())
}
