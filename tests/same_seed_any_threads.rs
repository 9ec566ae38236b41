//! The same seed gives the same noise, LLRs and errors whatever the number of
//! threads the channel and the decoder run on.

use gpufec::codes::channel::{BpskAwgn, Channel, Quantizer};
use gpufec::codes::conv::{ConvCode, ConvLink, ConvSetup, CpuViterbi, PuncturePattern, TileConfig, Traceback, Trellis, ViterbiMode};
use gpufec::codes::sim::{StopRule, run_point};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

#[test]
fn llrs_do_not_depend_on_the_thread_count() {
    let bits: Vec<u8> = (0..1_000_003u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 31) as u8).collect();
    let llrs = |threads| {
        on_threads(threads, || {
            let mut ch = BpskAwgn::<i8>::with_quantizer(2.0, 0.5, 42, Quantizer::new(5.0).unwrap()).unwrap();
            let mut out = Vec::new();
            for c in bits.chunks(300_007) {
                ch.transmit(c, &mut out).unwrap();
            }
            out
        })
    };
    let one = llrs(1);
    assert_eq!(one.len(), bits.len());
    assert_eq!(llrs(3), one);
    assert_eq!(llrs(8), one);
}

#[test]
fn errors_do_not_depend_on_the_thread_count() {
    let count = |threads: usize| {
        on_threads(threads, || {
            let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
            let tile = TileConfig::new(256, 20, 20, Traceback::Serial).unwrap().with_group(64).unwrap();
            let mode = ViterbiMode::Tiled(tile);
            let setup = ConvSetup { trellis: trellis.clone(), puncture: PuncturePattern::none(2), mode, frame_bits: 256, i8_scale: None };
            let decoder = CpuViterbi::<i8>::new(trellis, mode, threads).unwrap();
            let mut link = ConvLink::new(setup, Box::new(decoder)).unwrap();
            let stop = StopRule { max_bits: 2_000_000, max_errors: u64::MAX };
            let p = run_point(&mut link, 3.0, 9, stop, &AtomicBool::new(false), Duration::MAX, |_| {}).unwrap();
            (p.bits, p.bit_errors, p.frame_errors)
        })
    };
    let one = count(1);
    assert!(one.1 >= 20, "too few errors to mean anything: {one:?}");
    assert_eq!(count(2), one);
    assert_eq!(count(5), one);
}
