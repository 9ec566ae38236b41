//! Where a stage's outputs begin in a received LLR stream (node
//! synchronisation): a receiver's soft bits start wherever its loops
//! locked, so the first LLR may be any output of a stage. Each candidate
//! offset is decoded over a window and the decision re-encoded: at the
//! right offset the re-encoded bits agree with the received hard decisions
//! but for the channel's errors; a wrong one reads the stream as another
//! code's (the outputs shifted by a stage), and many more disagree (for
//! K=7 171/133 with 3.5 % of the hard decisions wrong: 12 % against 3.5 %).

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
    /// For each candidate offset, the share of re-encoded bits that
    /// disagree with the received hard decisions.
    pub disagreement: Vec<f64>,
}

impl PairOffset {
    /// Whether the decision is clear: every other offset disagrees at least
    /// twice as often (a window of noise, before a signal, is not).
    pub fn confident(&self) -> bool {
        let best = self.disagreement[self.offset];
        self.disagreement.iter().enumerate().all(|(o, &d)| o == self.offset || d >= 2.0 * best)
    }
}

/// Finds the stage boundary of a convolutional code's LLR stream.
#[derive(Debug, Clone)]
pub struct PairSync {
    trellis: Arc<Trellis>,
    stages: usize,
}

impl PairSync {
    /// Decisions over windows of `stages` stages
    /// ([`MIN_PAIR_SYNC_STAGES`]..=[`MAX_PAIR_SYNC_STAGES`]) of the code of `trellis`.
    pub fn new(trellis: Arc<Trellis>, stages: usize) -> CodeResult<Self> {
        if !(MIN_PAIR_SYNC_STAGES..=MAX_PAIR_SYNC_STAGES).contains(&stages) {
            return Err(invalid!("a window of {stages} stages; give {MIN_PAIR_SYNC_STAGES}..={MAX_PAIR_SYNC_STAGES}"));
        }
        Ok(Self { trellis, stages })
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
        let disagreement = (0..n)
            .map(|o| {
                let window = &llrs[o..o + n * stages];
                let mut decoded = Decoded::default();
                decoder.decode(&Batch::uniform(window, n * stages)?, &mut decoded)?;
                let mut coded = Vec::with_capacity(n * stages);
                ConvEncoder::new(self.trellis.clone(), EncoderMode::Streaming)?.encode(&decoded.bits, &mut coded)?;
                let wrong = coded.iter().zip(window).filter(|&(&c, &l)| (c == 1) != (l < 0.0)).count();
                Ok(wrong as f64 / coded.len() as f64)
            })
            .collect::<CodeResult<Vec<f64>>>()?;
        let offset = (0..n).min_by(|&a, &b| disagreement[a].total_cmp(&disagreement[b])).unwrap_or(0);
        Ok(PairOffset { offset, disagreement })
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
