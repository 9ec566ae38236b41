//! The same seed gives the same noise and LLRs whatever the number of threads
//! the channel runs on (the same errors, whatever the decoder's: every
//! family's link in `families.rs`).

use gpufec::codes::channel::{BpskAwgn, Channel, Quantizer};

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
