//! Prints the paper's Tables II and III for this implementation: the Eb/N0
//! loss (dB) of the tiled CPU decoder against the full-frame reference, K=7
//! r=1/2, f32 LLRs, measured on the same bits and noise.
//!
//! `cargo run --release --example tile_loss_tables [EBN0_DB] [BITS]`

use gpufec::codes::BatchDecoder;
use gpufec::codes::conv::tile_loss::TileLosses;
use gpufec::codes::conv::*;
use std::sync::Arc;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let ebn0: f64 = args.get(1).map_or(Ok(3.0), |s| s.parse())?;
    let bits: u64 = args.get(2).map_or(Ok(10_000_000.0), |s| s.parse::<f64>())? as u64;
    let seed = 2026;
    let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
    let p = PuncturePattern::none(2);
    let dec = |t: TileConfig| -> gpufec::codes::CodeResult<Box<dyn BatchDecoder<f32>>> {
        Ok(Box::new(CpuViterbi::<f32>::new(trellis.clone(), ViterbiMode::Tiled(t), 0)?))
    };
    let at = TileLosses { trellis: trellis.clone(), puncture: p, ebn0_db: ebn0, bits, seed, decoder: &dec };
    let reference = at.reference()?;
    println!("Eb/N0 {ebn0} dB, {bits} bits per cell, reference BER {:.3e}, slope {:.2} decades/dB", reference.0, reference.1);
    let fs = [32usize, 64, 128, 256, 512];
    println!("\nTable II (serial traceback, v1 = 20): loss in dB\n| v2 \\ f | {} |", fs.map(|f| f.to_string()).join(" | "));
    println!("|---|{}", "---|".repeat(fs.len()));
    for v2 in [10usize, 20, 30, 40] {
        let row = fs
            .iter()
            .map(|&f| at.loss(TileConfig::new(f, 20, v2, Traceback::Serial)?, reference))
            .collect::<gpufec::codes::CodeResult<Vec<_>>>()?;
        println!("| {v2} | {} |", row.iter().map(|l| format!("{:.3}", l.loss_db)).collect::<Vec<_>>().join(" | "));
    }
    let f0s = [8usize, 16, 24, 32, 40, 48, 56];
    println!("\nTable III (parallel traceback, f = 256, v1 = 20): loss in dB\n| v2 \\ f0 | {} |", f0s.map(|f| f.to_string()).join(" | "));
    println!("|---|{}", "---|".repeat(f0s.len()));
    for v2 in [25usize, 30, 35, 40, 45] {
        let row = f0s
            .iter()
            .map(|&f0| at.loss(TileConfig::new(256, 20, v2, Traceback::Parallel { f0 })?, reference))
            .collect::<gpufec::codes::CodeResult<Vec<_>>>()?;
        println!("| {v2} | {} |", row.iter().map(|l| format!("{:.3}", l.loss_db)).collect::<Vec<_>>().join(" | "));
    }
    Ok(())
}
