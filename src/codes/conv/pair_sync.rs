//! Where a stage's outputs begin in a received LLR stream (node
//! synchronisation): a receiver's soft bits start wherever its loops
//! locked, so the first LLR may be any output of a stage. Each candidate
//! offset is decoded over a window and the decision re-encoded: at the
//! right offset the re-encoded bits agree with the received hard decisions
//! but for the channel's errors; a wrong one reads the stream as another
//! code's (the outputs shifted by a stage), and many more disagree (for
//! K=7 171/133 with 3.5 % of the hard decisions wrong: 12 % against 3.5 %).
//!
//! A QPSK receiver's Costas loop locks at any of four phases: a rate-1/2
//! code's stage is one symbol's (I, Q) LLR pair, and at 90° the pair comes
//! as (Q, −I). With `rotations`, each offset is also tried with the pairs
//! turned back by 90°, (a, b) → (−b, a); what is left, 180°, complements
//! both outputs, which a code whose generators all have odd weight (171/133,
//! inverted outputs or not) decodes as the complemented bits: the marker
//! search after the decoder finds the complemented marker and turns the
//! frame back, as for BPSK.

use super::{ConvEncoder, CpuViterbi, EncoderMode, FrameConfig, Trellis, ViterbiMode};
use crate::codes::decode::{Batch, BatchDecoder, Decoded};
use crate::codes::error::{CodeResult, invalid};
use std::sync::Arc;

/// Fewest stages a decision is taken on: fewer leave the two offsets'
/// disagreements too close to tell apart.
pub const MIN_PAIR_SYNC_STAGES: usize = 64;
/// Most stages of a window.
pub const MAX_PAIR_SYNC_STAGES: usize = 1 << 20;

/// The offset decision over one window of stages.
#[derive(Debug, Clone, PartialEq)]
pub struct PairOffset {
    /// LLRs to drop before the first stage.
    pub offset: usize,
    /// Whether the stages' LLR pairs are to be turned back by 90° ([`rotate_pairs`]).
    pub rotated: bool,
    /// For each candidate, the share of re-encoded bits that disagree with
    /// the received hard decisions: offsets 0..n as they came, then (with
    /// rotations) offsets 0..n turned back.
    pub disagreement: Vec<f64>,
}

impl PairOffset {
    /// Whether the decision is clear: every other candidate disagrees at
    /// least twice as often (a window of noise, before a signal, is not).
    pub fn confident(&self) -> bool {
        let n = if self.rotated { self.disagreement.len() / 2 } else { 0 };
        let chosen = n + self.offset;
        let best = self.disagreement[chosen];
        self.disagreement.iter().enumerate().all(|(o, &d)| o == chosen || d >= 2.0 * best)
    }
}

/// Turns QPSK's (I, Q) LLR pairs back by 90°: (a, b) → (−b, a), in place
/// (a last unpaired LLR is left).
pub fn rotate_pairs(llrs: &mut [f32]) {
    for pair in llrs.chunks_exact_mut(2) {
        let (a, b) = (pair[0], pair[1]);
        pair[0] = -b;
        pair[1] = a;
    }
}

/// Finds the stage boundary of a convolutional code's LLR stream.
#[derive(Debug, Clone)]
pub struct PairSync {
    trellis: Arc<Trellis>,
    stages: usize,
    rotations: bool,
}

impl PairSync {
    /// Decisions over windows of `stages` stages
    /// ([`MIN_PAIR_SYNC_STAGES`]..=[`MAX_PAIR_SYNC_STAGES`]) of the code of `trellis`.
    pub fn new(trellis: Arc<Trellis>, stages: usize) -> CodeResult<Self> {
        if !(MIN_PAIR_SYNC_STAGES..=MAX_PAIR_SYNC_STAGES).contains(&stages) {
            return Err(invalid!("a window of {stages} stages; give {MIN_PAIR_SYNC_STAGES}..={MAX_PAIR_SYNC_STAGES}"));
        }
        Ok(Self { trellis, stages, rotations: false })
    }

    /// Also tries each offset with the pairs turned back by 90° (QPSK's
    /// ambiguity); only a rate-1/2 code's stage is one QPSK symbol.
    pub fn with_rotations(mut self) -> CodeResult<Self> {
        if self.trellis.n() != 2 {
            return Err(invalid!("QPSK's rotations need a rate-1/2 code (a stage of two outputs, one symbol), not {} outputs", self.trellis.n()));
        }
        self.rotations = true;
        Ok(self)
    }

    /// Stages of a window.
    pub fn stages(&self) -> usize {
        self.stages
    }

    /// LLRs of a stage.
    pub fn n(&self) -> usize {
        self.trellis.n()
    }

    /// LLRs a decision wants: a window at every offset.
    pub fn wants(&self) -> usize {
        (self.stages + 1) * self.trellis.n() - 1
    }

    /// The offset of `llrs` (at least [`MIN_PAIR_SYNC_STAGES`] stages and one
    /// LLR; up to [`Self::wants`] are used): the candidate whose decoded and
    /// re-encoded bits disagree least with the received ones.
    pub fn offset(&self, llrs: &[f32]) -> CodeResult<PairOffset> {
        let n = self.trellis.n();
        let stages = (llrs.len().saturating_sub(n - 1) / n).min(self.stages);
        if stages < MIN_PAIR_SYNC_STAGES {
            return Err(invalid!("{} LLRs: a stage boundary needs {} stages at every offset", llrs.len(), MIN_PAIR_SYNC_STAGES));
        }
        let frame = FrameConfig::new(stages, false)?;
        let mut decoder = CpuViterbi::<f32>::new(self.trellis.clone(), ViterbiMode::Frame(frame), 1)?;
        let candidates = if self.rotations { 2 * n } else { n };
        let mut window = Vec::with_capacity(n * stages);
        let disagreement = (0..candidates)
            .map(|c| {
                let o = c % n;
                window.clear();
                window.extend_from_slice(&llrs[o..o + n * stages]);
                if c >= n {
                    rotate_pairs(&mut window);
                }
                let mut decoded = Decoded::default();
                decoder.decode(&Batch::uniform(&window, n * stages)?, &mut decoded)?;
                let mut coded = Vec::with_capacity(n * stages);
                ConvEncoder::new(self.trellis.clone(), EncoderMode::Streaming)?.encode(&decoded.bits, &mut coded)?;
                let wrong = coded.iter().zip(&window).filter(|&(&c, &l)| (c == 1) != (l < 0.0)).count();
                Ok(wrong as f64 / coded.len() as f64)
            })
            .collect::<CodeResult<Vec<f64>>>()?;
        let best = (0..candidates).min_by(|&a, &b| disagreement[a].total_cmp(&disagreement[b])).unwrap_or(0);
        Ok(PairOffset { offset: best % n, rotated: best >= n, disagreement })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::conv::ConvCode;

    /// BPSK LLRs of the code's output for random bits, with a few wrong.
    fn received(trellis: &Arc<Trellis>, bits: usize, flip_every: usize) -> Vec<f32> {
        let info: Vec<u8> = (0..bits as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 9 & 1) as u8).collect();
        let mut coded = Vec::new();
        ConvEncoder::new(trellis.clone(), EncoderMode::Streaming).unwrap().encode(&info, &mut coded).unwrap();
        coded.iter().enumerate().map(|(i, &c)| if (c == 1) != (i % flip_every == 7) { -2.0 } else { 2.0 }).collect()
    }

    #[test]
    fn the_stage_boundary_is_found_at_every_offset_of_every_code() {
        for (code, name) in [
            (ConvCode::k7_171_133(), "171,133"),
            (ConvCode::k7_171_133().with_inverted(0b10).unwrap(), "CCSDS inverted"),
            (ConvCode::new(7, &[0o133, 0o171, 0o165]).unwrap(), "rate 1/3"),
        ] {
            let trellis = Arc::new(Trellis::new(&code));
            let llrs = received(&trellis, 3000, 29);
            let sync = PairSync::new(trellis.clone(), 512).unwrap();
            for skip in 0..2 * trellis.n() {
                let got = sync.offset(&llrs[skip..]).unwrap();
                let want = (trellis.n() - skip % trellis.n()) % trellis.n();
                assert_eq!(got.offset, want, "{name}, {skip} LLRs skipped: {got:?}");
                assert!(got.disagreement[want] < 0.06, "{name}: {got:?}");
                // A wrong offset reads the pairs of another code (the outputs
                // shifted a stage), so it disagrees less than half, yet clearly more.
                assert!(got.disagreement.iter().enumerate().all(|(o, &d)| o == want || d > 2.0 * got.disagreement[want] + 0.03), "{name}: {got:?}");
                assert!(got.confident(), "{name}: {got:?}");
            }
        }
    }

    #[test]
    fn a_qpsk_rotation_is_found_with_the_offset() {
        let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133().with_inverted(0b10).unwrap()));
        let llrs = received(&trellis, 3000, 29);
        let sync = PairSync::new(trellis.clone(), 512).unwrap().with_rotations().unwrap();
        // (a, b) at 90° is (b', −a'): the receiver's pairs are the sent ones turned by 90°, k times.
        for quarter in 0..4 {
            let mut turned = llrs.clone();
            for _ in 0..quarter {
                for p in turned.chunks_exact_mut(2) {
                    let (a, b) = (p[0], p[1]);
                    p[0] = b;
                    p[1] = -a;
                }
            }
            for skip in 0..2 {
                let got = sync.offset(&turned[skip..]).unwrap();
                assert_eq!((got.offset, got.rotated), (skip, quarter % 2 == 1), "{quarter}×90°, {skip} skipped: {got:?}");
                assert!(got.confident() && got.disagreement.len() == 4, "{got:?}");
                // Turned back, it decodes: 180° leaves complemented pairs, which the code takes as they come.
                let mut back = turned[skip + got.offset..].to_vec();
                if got.rotated {
                    rotate_pairs(&mut back);
                }
                let flip = quarter >= 2;
                assert!(back.iter().zip(&llrs[skip + got.offset..]).all(|(a, b)| (*a == *b) != flip));
            }
        }
        let rate_third = Arc::new(Trellis::new(&ConvCode::new(7, &[0o133, 0o171, 0o165]).unwrap()));
        assert!(PairSync::new(rate_third, 512).unwrap().with_rotations().unwrap_err().to_string().contains("rate-1/2"));
    }

    #[test]
    fn noise_gives_no_confident_decision() {
        let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
        let noise: Vec<f32> = (0..4096u32).map(|i| if i.wrapping_mul(2_654_435_761) >> 13 & 1 == 1 { -1.0 } else { 1.0 }).collect();
        let got = PairSync::new(trellis, 1024).unwrap().offset(&noise).unwrap();
        assert!(!got.confident(), "{got:?}");
    }

    #[test]
    fn short_streams_and_bad_windows_are_refused() {
        let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
        assert!(PairSync::new(trellis.clone(), 10).is_err());
        assert!(PairSync::new(trellis.clone(), MAX_PAIR_SYNC_STAGES + 1).is_err());
        let sync = PairSync::new(trellis, 128).unwrap();
        assert_eq!(sync.wants(), 129 * 2 - 1);
        let e = sync.offset(&[1.0; 100]).unwrap_err();
        assert!(e.to_string().contains("needs 64 stages"), "{e}");
    }
}
