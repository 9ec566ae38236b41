//! Stage synchronisation block.

use crate::blocks::stream::{self, Backlog, Relay, Transform};
use crate::blocks::{FirstError, Reporting};
use crate::codes::conv::{PairSync as Finder, rotate_pairs};
use futuresdr::runtime::dev::prelude::*;

/// Keeps a received LLR stream on whole trellis stages
/// ([`crate::codes::conv::PairSync`]): it holds each window of LLRs, decodes
/// it at every offset, and where the offset whose re-encoded bits agree
/// best with the received ones is a clear choice
/// ([`crate::codes::conv::PairOffset::confident`]: a window of noise before
/// the signal is not) drops the LLRs before it, saying so on stderr when
/// that moves the stages (the first lock, or after a receiver slipped a
/// symbol); a window without a clear choice passes as it came. Between a
/// receiver and the Viterbi decoder, whose stages a receiver's first symbol
/// need not begin. A finder with rotations (QPSK) also turns the pairs back
/// by 90° where that decodes best, and keeps doing so until a clear
/// decision says otherwise. Every window is decoded twice more on the CPU (at rate
/// 1/2), and held: a window of latency.
///
/// # Stream Inputs
///
/// `input`: LLRs (`f32`) of the code's outputs, from anywhere in a stage.
///
/// # Stream Outputs
///
/// `output`: the same LLRs from the first whole stage on.
///
/// # Usage
/// ```
/// use gpufec::blocks::PairSync;
/// use gpufec::codes::conv::{ConvCode, PairSync as Finder, Trellis};
/// use std::sync::Arc;
///
/// let finder = Finder::new(Arc::new(Trellis::new(&ConvCode::k7_171_133())), 1024)?;
/// let block = PairSync::new(finder);
/// # Ok::<(), gpufec::codes::CodeError>(())
/// ```
#[derive(Block)]
pub struct PairSync {
    sync: Syncing,
    relay: Relay<f32>,
    errors: FirstError,
    #[input]
    input: DefaultCpuReader<f32>,
    #[output]
    output: DefaultCpuWriter<f32>,
}

/// The window being held, and where the stream stands.
struct Syncing {
    finder: Finder,
    held: Vec<f32>,
    /// LLRs taken so far, before `held`.
    taken: usize,
    /// Whether a clear decision was taken yet.
    locked: bool,
    /// Whether the last clear decision turned the pairs back by 90° (QPSK).
    rotated: bool,
}

impl Syncing {
    /// Decide on the window held and hand on its whole stages: from the
    /// offset on a clear choice (saying so when it moves the stages: the
    /// first lock, or a receiver's slip), else as they came; what follows
    /// them stays held, so that the next window starts on a stage (`last`:
    /// the stream ended, hand on everything).
    fn decide(&mut self, out: &mut Backlog<f32>, last: bool) {
        let offset = match self.finder.offset(&self.held) {
            Ok(d) if d.confident() => {
                if d.offset != 0 || d.rotated != self.rotated || !self.locked {
                    let shares: Vec<String> = d.disagreement.iter().map(|x| format!("{:.1} %", 100.0 * x)).collect();
                    eprintln!(
                        "stage sync: stages {} {} LLRs into the stream{} (re-encoded bits disagreeing at each {}: {})",
                        if self.locked { "move to" } else { "begin" },
                        self.taken + d.offset,
                        if d.rotated { ", the pairs turned back by 90°" } else { "" },
                        if d.disagreement.len() > self.finder.n() { "offset, then each turned back" } else { "offset" },
                        shares.join(", ")
                    );
                }
                self.locked = true;
                self.rotated = d.rotated;
                d.offset
            }
            // Noise, or too short to tell: as it came (turned as last decided).
            _ => 0,
        };
        let end = if last { self.held.len() } else { (offset + self.finder.stages() * self.finder.n()).min(self.held.len()) };
        let at = out.items.len();
        out.items.extend_from_slice(&self.held[offset..end]);
        if self.rotated {
            rotate_pairs(&mut out.items[at..]);
        }
        self.taken += end;
        self.held.drain(..end);
    }
}

impl Transform<f32, f32> for Syncing {
    fn process(&mut self, mut input: &[f32], _tags: &[ItemTag], out: &mut Backlog<f32>) -> anyhow::Result<()> {
        while !input.is_empty() {
            let take = (self.finder.wants() - self.held.len()).min(input.len());
            self.held.extend_from_slice(&input[..take]);
            input = &input[take..];
            if self.held.len() == self.finder.wants() {
                self.decide(out, false);
            }
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Backlog<f32>) -> anyhow::Result<()> {
        self.decide(out, true);
        Ok(())
    }
}

impl PairSync {
    /// The block deciding with `finder`.
    pub fn new(finder: Finder) -> Self {
        let held = Vec::with_capacity(finder.wants());
        Self {
            sync: Syncing { finder, held, taken: 0, locked: false, rotated: false },
            relay: Relay::default(),
            errors: FirstError::default(),
            input: DefaultCpuReader::default(),
            output: stream::output(),
        }
    }
}

impl Reporting for PairSync {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl crate::blocks::Counted for PairSync {
    fn items(&self) -> u64 {
        self.relay.taken()
    }
}

#[doc(hidden)]
impl Kernel for PairSync {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.relay.work(&mut self.sync, &mut self.input, &mut self.output, io);
        self.errors.keep(meta, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::testing::run_through;
    use crate::codes::conv::{ConvCode, ConvEncoder, EncoderMode, Trellis};
    use std::sync::Arc;

    #[test]
    fn the_stream_goes_on_from_the_first_whole_stage() {
        let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
        let info: Vec<u8> = (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11 & 1) as u8).collect();
        let mut coded = Vec::new();
        ConvEncoder::new(trellis.clone(), EncoderMode::Streaming).unwrap().encode(&info, &mut coded).unwrap();
        let llrs: Vec<f32> = coded.iter().map(|&c| if c == 1 { -3.0 } else { 3.0 }).collect();
        // Noise first (no clear choice: passed as it came), then the code.
        let noise: Vec<f32> = (0..5001u32).map(|i| if i.wrapping_mul(2_654_435_761) >> 13 & 1 == 1 { -1.0 } else { 1.0 }).collect();
        for skip in [0, 1, 3] {
            let errors = FirstError::default();
            let sent: Vec<f32> = noise.iter().chain(&llrs[skip..]).copied().collect();
            let finder = Finder::new(trellis.clone(), 1024).unwrap();
            let got: Vec<f32> = run_through(sent, &errors, |fg| fg.add(PairSync::new(finder).report_to(&errors)).into()).unwrap();
            // The noise's windows pass whole; the code's stages then begin on a whole stage.
            let from = skip.div_ceil(2) * 2;
            let tail = &got[got.len() - (llrs.len() - from)..];
            assert_eq!(tail, &llrs[from..], "{skip} LLRs skipped");
            let dropped = noise.len() + llrs.len() - skip - got.len();
            assert!(dropped < 2, "{dropped} LLRs dropped");
        }
        // Too short to decide: as it came.
        let errors = FirstError::default();
        let finder = Finder::new(trellis, 1024).unwrap();
        let got: Vec<f32> = run_through(llrs[1..50].to_vec(), &errors, |fg| fg.add(PairSync::new(finder).report_to(&errors)).into()).unwrap();
        assert_eq!(got, llrs[1..50]);
    }
}
