//! LTE turbo encoder throughput, in information bits per second: the
//! transport-block chain (`TransportEncoder`: CRC24A, segmentation with
//! CRC24B, turbo coding, rate matching) and bare code blocks
//! (`TurboEncoder`), on one thread and on all cores, given many blocks per
//! call and one transport block per call.
//!
//! `cargo bench --bench turbo_encoder [-- SECONDS_PER_POINT]`
//!
//! Each point encodes the same 2^22 or so information bits (whole blocks)
//! repeatedly for about the given time (default 1 s) and reports the best
//! repetition, the least disturbed by other work on the machine. Every
//! point's channel bits are checked against the one-thread run's.

use gpufec::codes::bits::BitSource;
use gpufec::codes::encode::Encoder;
use gpufec::codes::turbo::{TransportBlock, TransportEncoder, TurboCode, TurboEncoder};
use std::time::{Duration, Instant};

/// Information bits per repetition, rounded down to whole blocks.
const BITS: usize = 1 << 22;

/// One encoder under test: its name, a fresh encoder, its block of information bits.
struct Case {
    name: String,
    make: Box<dyn Fn() -> Box<dyn Encoder> + Send + Sync>,
    unit: usize,
}

fn cases() -> anyhow::Result<Vec<Case>> {
    let mut out = Vec::new();
    for (a, g) in [(6120, 18360), (97896, 195816)] {
        let tb = TransportBlock::new(a, g, 0)?;
        let name = format!("TransportEncoder A {a} G {g} ({} code blocks)", tb.segmentation().c);
        out.push(Case { name, make: Box::new(move || Box::new(TransportEncoder::new(tb.clone()))), unit: a });
    }
    let code = TurboCode::lte(6144)?;
    out.push(Case { name: "TurboEncoder K 6144".into(), make: Box::new(move || Box::new(TurboEncoder::new(code.clone()))), unit: 6144 });
    Ok(out)
}

/// Best Mb/s over repetitions filling about `budget`, feeding `piece` bits
/// per call, and the channel bits.
fn measure(case: &Case, info: &[u8], piece: usize, budget: Duration) -> anyhow::Result<(f64, Vec<u8>)> {
    let (start, mut best, mut reps, mut out) = (Instant::now(), f64::INFINITY, 0, Vec::new());
    while reps < 3 || start.elapsed() < budget {
        let mut enc = (case.make)();
        out.clear();
        let t = Instant::now();
        for chunk in info.chunks(piece) {
            enc.encode(chunk, &mut out)?;
        }
        best = best.min(t.elapsed().as_secs_f64());
        reps += 1;
    }
    Ok((info.len() as f64 / best / 1e6, out))
}

fn main() -> anyhow::Result<()> {
    let budget = std::env::args().skip(1).find_map(|a| a.parse::<f64>().ok()).map_or(Duration::from_secs(1), Duration::from_secs_f64);
    let cores = gpufec::codes::threads::cores();
    println!("{cores} hardware threads; best of ≥3 repetitions over {budget:?}\n");
    println!("| encoder | bits per call | threads | Mb/s |\n|---|---|---|---|");
    for case in cases()? {
        let mut info = vec![0u8; BITS / case.unit * case.unit];
        BitSource::new(26).fill(&mut info);
        let mut reference = None;
        for (piece, per_call) in [(info.len(), "all"), (case.unit, "one block")] {
            for threads in [1, cores] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
                let (mbps, out) = pool.install(|| measure(&case, &info, piece, budget))?;
                anyhow::ensure!(reference.get_or_insert_with(|| out.clone()) == &out, "{}: other channel bits on {threads} threads", case.name);
                println!("| {} | {per_call} | {threads} | {mbps:.1} |", case.name);
            }
        }
    }
    Ok(())
}
