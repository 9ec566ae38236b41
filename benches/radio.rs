//! Throughput of each stage of the receive chain (`gpufec::dsp`) on one
//! thread, in million input samples per second, and of the whole chain: the
//! BY70-1 setting (48 kHz SSB audio, 5 samples per symbol, BPSK) and the
//! loopback one (complex baseband, 4 samples per symbol, QPSK). The symbol
//! rate a real-time chain keeps up with is its samples per second over its
//! samples per symbol.
//!
//! `cargo bench --bench radio [-- SECONDS_PER_POINT]`
//!
//! Each stage repeats on a shaped, noisy signal of 2^16 samples for about the
//! given time (default 0.5 s) and reports the mean rate.

use gpufec::dsp::*;
use std::time::{Duration, Instant};

const SAMPLES: usize = 1 << 16;

/// Mean million input samples per second of `f` over `budget`, `n` samples a call.
fn rate(n: usize, budget: Duration, mut f: impl FnMut()) -> f64 {
    f();
    let (t, mut done) = (Instant::now(), 0usize);
    while t.elapsed() < budget {
        f();
        done += n;
    }
    done as f64 / t.elapsed().as_secs_f64() / 1e6
}

/// A QPSK or BPSK signal at `sps` through a mild channel.
fn signal(constellation: Constellation, sps: usize) -> Vec<Complex32> {
    let bits: Vec<u8> = (0..SAMPLES as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 31) as u8).collect();
    let mut symbols = Vec::new();
    SymbolMapper::new(constellation).process(&bits[..SAMPLES / sps * constellation.bits()], &mut symbols);
    let mut shaped = Vec::new();
    PulseShaper::new(sps, 0.35, 10).unwrap().process(&symbols, &mut shaped);
    let params = ChannelParams { es_n0_db: Some(12.0), cfo: 0.001, timing: 0.3, ..Default::default() };
    let mut out = Vec::new();
    ChannelModel::new(params).unwrap().process(&shaped, &mut out);
    out
}

fn row(name: &str, rate: f64, sps: usize) {
    println!("| {name} | {rate:.1} | {:.0} |", rate * 1e6 / sps as f64 / 1e3);
}

fn main() {
    let seconds: f64 = std::env::args().skip(1).find(|a| !a.starts_with('-')).and_then(|a| a.parse().ok()).unwrap_or(0.5);
    let budget = Duration::from_secs_f64(seconds);
    let settings = ReceiverSettings { constellation: Constellation::Qpsk, ..Default::default() };
    let sps = settings.sps;
    let x = signal(settings.constellation, sps);
    let audio: Vec<f32> = x.iter().map(|s| s.re).collect();
    let mut out = Vec::with_capacity(2 * SAMPLES);
    let mut llrs = Vec::with_capacity(2 * SAMPLES);
    println!("| stage (one thread) | M input samples/s | k symbols/s it keeps up with at {sps} samples per symbol |");
    println!("|---|---|---|");
    let mut r2c = RealToComplex::new(48_000.0, 11_500.0, 8_000.0, 1).unwrap();
    row("RealToComplex (48 kHz, 8 kHz each side: 25 taps)", rate(SAMPLES, budget, || { out.clear(); r2c.process(&audio, &mut out) }), sps);
    let mut agc = Agc::new(1e-3, 1.0).unwrap();
    let mut y = x.clone();
    row("Agc", rate(SAMPLES, budget, || agc.process(&mut y)), sps);
    let mut mf = Fir::new(rrc_taps(sps, 0.35, 10).unwrap(), 1).unwrap();
    row("MatchedFilter (41 taps)", rate(SAMPLES, budget, || { out.clear(); mf.process(&x, &mut out) }), sps);
    let mut filtered = Vec::new();
    Fir::new(rrc_taps(sps, 0.35, 10).unwrap(), 1).unwrap().process(&x, &mut filtered);
    let mut gardner = Gardner::new(sps as f64, 0.002, 0.707).unwrap();
    row("TimingRecovery (Gardner)", rate(SAMPLES, budget, || { out.clear(); gardner.process(&filtered, &mut out) }), sps);
    let mut symbols = Vec::new();
    Gardner::new(sps as f64, 0.002, 0.707).unwrap().process(&filtered, &mut symbols);
    let n = symbols.len();
    let mut carrier = CarrierRecovery::new(settings.constellation, 0.01, 0.707, 0.001).unwrap();
    let mut s = symbols.clone();
    row("CarrierRecovery (per symbol, × sps)", rate(n * sps, budget, || carrier.process(&mut s)), sps);
    let mut demap = SoftDemapper::new(settings.constellation, 0.005).unwrap();
    row("SoftDemapper (per symbol, × sps)", rate(n * sps, budget, || { llrs.clear(); demap.process(&symbols, &mut llrs) }), sps);
    let mut rx = PskReceiver::new(settings).unwrap();
    row("PskReceiver (all of the above but RealToComplex)", rate(SAMPLES, budget, || { llrs.clear(); rx.process(&x, &mut llrs) }), sps);
    let mut shaper = PulseShaper::new(sps, 0.35, 10).unwrap();
    row("PulseShaper (per symbol, × sps)", rate(n * sps, budget, || { out.clear(); shaper.process(&symbols, &mut out) }), sps);
    let mut channel = ChannelModel::new(ChannelParams { es_n0_db: Some(10.0), cfo: 0.001, clock_ppm: 100.0, ..Default::default() }).unwrap();
    row("ChannelModel", rate(SAMPLES, budget, || { out.clear(); channel.process(&x, &mut out) }), sps);
}
