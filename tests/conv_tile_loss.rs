//! The tiled decoder's loss against the full-frame decoder follows the paper's
//! trend (its Tables II and III), measured on the same bits and noise.

use gpufec::codes::BatchDecoder;
use gpufec::codes::conv::tile_loss::TileLosses;
use gpufec::codes::conv::*;
use std::sync::Arc;

const EBN0: f64 = 3.0;
const BITS: u64 = 3_000_000;
const SEED: u64 = 17;

fn cpu(trellis: &Arc<Trellis>) -> impl Fn(TileConfig) -> gpufec::codes::CodeResult<Box<dyn BatchDecoder<f32>>> + '_ {
    move |t| Ok(Box::new(CpuViterbi::<f32>::new(trellis.clone(), ViterbiMode::Tiled(t), 0)?))
}

#[test]
fn loss_shrinks_with_v2_and_meets_the_paper_points() {
    let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
    let p = PuncturePattern::none(2);
    let dec = cpu(&trellis);
    let at = TileLosses { trellis: trellis.clone(), puncture: p, ebn0_db: EBN0, bits: BITS, seed: SEED, decoder: &dec };
    let reference = at.reference().unwrap();
    let loss = |tile: TileConfig| at.loss(tile, reference).unwrap();
    let serial: Vec<f64> = [10, 20, 32, 45]
        .iter()
        .map(|&v2| loss(TileConfig::new(256, 20, v2, Traceback::Serial).unwrap()).loss_db)
        .collect();
    eprintln!("f=256 serial, v2 = 10/20/32/45: {serial:?} dB");
    for w in serial.windows(2) {
        assert!(w[1] <= w[0] + 0.01, "loss does not shrink as v2 grows: {serial:?}");
    }
    assert!(serial[0] > 0.08, "v2=10 should cost clearly (paper: 0.18 dB): {serial:?}");
    assert!(serial[2] <= 0.05, "v2=32 loss {} dB exceeds 0.05 dB", serial[2]);
    let par = loss(TileConfig::new(256, 20, 45, Traceback::Parallel { f0: 32 }).unwrap()).loss_db;
    eprintln!("f=256 parallel f0=32 v2=45: {par} dB");
    assert!(par <= 0.1, "parallel traceback f0=32 v2=45 loss {par} dB exceeds 0.1 dB");
}
