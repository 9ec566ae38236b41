//! CCSDS framing blocks: the marker and Reed–Solomon frame before the
//! channel code ([`CcsdsEncoder`]), the frame synchroniser after its decoder
//! ([`AsmSync`]), derandomizing and Reed–Solomon ([`CcsdsDecoder`]), and the
//! frames as hex lines ([`HexFrameSink`]). Frames travel between them as
//! bytes (the flowgraph's packed stream: eight bits to a byte, the first the
//! most significant), one whole frame after another. The marker also frames
//! another code's blocks: [`MarkerInserter`] before them, [`SoftAsmSync`] in
//! the receiver's soft bits before their decoder.

use super::encoder::encoder_block;
use super::stream::{self, Backlog, Relay, Transform};
use super::{FileWritten, FirstError, Reporting};
use crate::codes::ccsds::{AsmSearch, FrameCodec, FrameFile, FrameOutcome, FrameSync, MarkerSync, SyncedFrame};
use crate::codes::words::count_of;
use futuresdr::runtime::dev::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Declares a block of one input and one output of the same item type (`u8`
/// unless named) around a [`Transform`] driven by a [`Relay`];
/// `with(transform)` makes it.
macro_rules! relayed_block {
    ($(#[$doc:meta])* $name:ident, $transform:ty) => {
        relayed_block!($(#[$doc])* $name, $transform, u8);
    };
    ($(#[$doc:meta])* $name:ident, $transform:ty, $item:ty) => {
        $(#[$doc])*
        #[derive(Block)]
        pub struct $name {
            transform: $transform,
            relay: Relay<$item>,
            errors: FirstError,
            #[input]
            input: DefaultCpuReader<$item>,
            #[output]
            output: DefaultCpuWriter<$item>,
        }

        impl $name {
            fn with(transform: $transform) -> Self {
                Self { transform, relay: Relay::default(), errors: FirstError::default(), input: DefaultCpuReader::default(), output: stream::output() }
            }
        }

        impl Reporting for $name {
            fn first_error(&mut self) -> &mut FirstError {
                &mut self.errors
            }
        }

        impl super::Counted for $name {
            fn items(&self) -> u64 {
                self.relay.taken()
            }
        }

        #[doc(hidden)]
        impl Kernel for $name {
            async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
                let r = self.relay.work(&mut self.transform, &mut self.input, &mut self.output, io);
                self.errors.keep(meta, r)
            }
        }
    };
}

encoder_block! {
    /// Puts CCSDS frames on a bit stream for the channel code
    /// ([`AsmFramer`](crate::codes::ccsds::AsmFramer)): each frame's data
    /// bits get their Reed–Solomon parity, are randomized, and follow the
    /// 32-bit marker 0x1ACFFC1D.
    ///
    /// A stream that ends inside a frame's data fails the flowgraph.
    ///
    /// # Stream Inputs
    ///
    /// `input`: information bits (`u8` 0/1), `8 · data_len` per frame, the
    /// first the most significant bit of the first byte.
    ///
    /// # Stream Outputs
    ///
    /// `output`: the marker's and the frame's bits (`u8` 0/1), `32 + 8 · frame_len` per frame.
    ///
    /// # Usage
    /// ```
    /// use gpufec::blocks::CcsdsEncoder;
    /// use gpufec::codes::ccsds::{AsmFramer, Basis, FrameCodec, ReedSolomon};
    /// let codec = FrameCodec::new(ReedSolomon::new(146, 1, Basis::Conventional)?, true);
    /// let block = CcsdsEncoder::new(AsmFramer::new(codec));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    CcsdsEncoder, crate::codes::ccsds::AsmFramer
}

encoder_block! {
    /// Puts the attached sync marker before every frame of another code's
    /// channel bits ([`AsmInserter`](crate::codes::ccsds::AsmInserter)), for
    /// [`SoftAsmSync`] to find in the receiver's soft bits.
    ///
    /// A stream that ends inside a frame fails the flowgraph.
    ///
    /// # Stream Inputs
    ///
    /// `input`: channel bits (`u8` 0/1), `frame_bits` per frame.
    ///
    /// # Stream Outputs
    ///
    /// `output`: the marker's 32 bits and then the frame's, for each frame.
    ///
    /// # Usage
    /// ```
    /// use gpufec::blocks::MarkerInserter;
    /// use gpufec::codes::ccsds::{ASM, AsmInserter};
    /// let block = MarkerInserter::new(AsmInserter::new(ASM, 18360)?);
    /// # Ok::<(), gpufec::codes::CodeError>(())
    /// ```
    MarkerInserter, crate::codes::ccsds::AsmInserter
}

/// What the framing blocks of a chain counted, read while it runs and after.
#[derive(Debug, Default)]
pub struct FrameCounts {
    /// Markers found (frames begun).
    pub found: AtomicU64,
    /// Of those, markers found complemented.
    pub inverted: AtomicU64,
    /// Bit errors in all markers found.
    pub marker_errors: AtomicU64,
    /// A frame begun when the stream ended.
    pub cut_short: AtomicU64,
    /// Frames Reed–Solomon passed.
    pub passed: AtomicU64,
    /// Symbols it corrected in them.
    pub corrected: AtomicU64,
    /// Frames it could not correct (dropped).
    pub failed: AtomicU64,
}

impl FrameCounts {
    /// One line for a run's summary: the synchroniser's counts or the decoder's, whichever are there.
    pub fn line(&self) -> String {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut parts = Vec::new();
        if get(&self.found) > 0 || get(&self.passed) + get(&self.failed) == 0 {
            parts.push(format!(
                "{} found ({} inverted, {} in their markers), {} cut short by the stream's end",
                count_of(get(&self.found), "frame"),
                get(&self.inverted),
                count_of(get(&self.marker_errors), "bit error"),
                get(&self.cut_short)
            ));
        }
        if get(&self.passed) + get(&self.failed) > 0 {
            parts.push(format!(
                "{} passed Reed–Solomon ({} corrected), {} failed",
                count_of(get(&self.passed), "frame"),
                count_of(get(&self.corrected), "symbol"),
                get(&self.failed)
            ));
        }
        parts.join("; ")
    }
}

/// The synchroniser's side of [`AsmSync`].
struct Finding {
    finder: FrameSync,
    frames: Vec<SyncedFrame>,
    counts: Arc<FrameCounts>,
}

impl Transform<u8, u8> for Finding {
    fn process(&mut self, input: &[u8], _tags: &[ItemTag], out: &mut Backlog<u8>) -> anyhow::Result<()> {
        self.finder.push(input, &mut self.frames);
        for f in self.frames.drain(..) {
            count_found(&self.counts, f.found);
            out.items.extend_from_slice(&f.bytes);
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut Backlog<u8>) -> anyhow::Result<()> {
        self.counts.cut_short.fetch_add(u64::from(self.finder.in_frame()), Ordering::Relaxed);
        Ok(())
    }
}

relayed_block! {
/// The frame synchroniser: finds the attached sync marker in a stream of
/// hard bits (a Viterbi decoder's output) with at most a given number of bit
/// errors, or its complement (the whole stream inverted, BPSK's phase
/// ambiguity: the frame's bits are complemented back), and passes on the
/// frame of a fixed length after each ([`FrameSync`]). A stream with no
/// marker passes nothing and ends cleanly; the counts say what was found.
///
/// # Stream Inputs
///
/// `input`: bits (`u8` 0/1; only the lowest bit is read).
///
/// # Stream Outputs
///
/// `output`: each frame's bytes, whole frames back to back.
///
/// # Usage
/// ```
/// use gpufec::blocks::AsmSync;
/// use gpufec::codes::ccsds::{ASM, AsmSearch};
/// let block = AsmSync::new(AsmSearch::new(ASM, 4)?, 146)?;
/// let counts = block.counts(); // frames found, inverted, cut short
/// # Ok::<(), anyhow::Error>(())
/// ```
AsmSync, Finding
}

impl AsmSync {
    /// Frames of `frame_bytes` after each marker `search` finds.
    pub fn new(search: AsmSearch, frame_bytes: usize) -> anyhow::Result<Self> {
        Ok(Self::with(Finding { finder: FrameSync::new(search, frame_bytes)?, frames: Vec::new(), counts: Arc::default() }))
    }

    /// Its counts, live.
    pub fn counts(&self) -> Arc<FrameCounts> {
        self.transform.counts.clone()
    }
}

/// The synchroniser's side of [`SoftAsmSync`].
struct SoftFinding {
    finder: MarkerSync<f32>,
    counts: Arc<FrameCounts>,
}

impl Transform<f32, f32> for SoftFinding {
    fn process(&mut self, input: &[f32], _tags: &[ItemTag], out: &mut Backlog<f32>) -> anyhow::Result<()> {
        let counts = &self.counts;
        self.finder.push(input, |found, llrs| {
            count_found(counts, found);
            out.items.extend_from_slice(llrs);
        });
        Ok(())
    }

    fn finish(&mut self, _out: &mut Backlog<f32>) -> anyhow::Result<()> {
        self.counts.cut_short.fetch_add(u64::from(self.finder.in_frame()), Ordering::Relaxed);
        Ok(())
    }
}

relayed_block! {
/// The frame synchroniser of soft bits: finds the attached sync marker in
/// the hard decisions of a stream of LLRs (a receiver's, before a block
/// code's decoder) with at most a given number of bit errors, or its
/// complement (BPSK's 180° ambiguity: the frame's LLRs change sign), and
/// passes on the `frame_len` LLRs after each ([`MarkerSync`]), whole frames
/// back to back, for a decoder that cuts its input into blocks of that
/// length. A stream with no marker passes nothing and ends cleanly; the
/// counts say what was found.
///
/// # Stream Inputs
///
/// `input`: LLRs (`f32`, positive for bit 0).
///
/// # Stream Outputs
///
/// `output`: each frame's LLRs.
///
/// # Usage
/// ```
/// use gpufec::blocks::SoftAsmSync;
/// use gpufec::codes::ccsds::{ASM, AsmSearch};
/// let block = SoftAsmSync::new(AsmSearch::new(ASM, 4)?, 18360)?;
/// let counts = block.counts(); // frames found, inverted, cut short
/// # Ok::<(), anyhow::Error>(())
/// ```
SoftAsmSync, SoftFinding, f32
}

impl SoftAsmSync {
    /// Frames of `frame_len` LLRs after each marker `search` finds.
    pub fn new(search: AsmSearch, frame_len: usize) -> anyhow::Result<Self> {
        Ok(Self::with(SoftFinding { finder: MarkerSync::new(search, frame_len)?, counts: Arc::default() }))
    }

    /// Its counts, live.
    pub fn counts(&self) -> Arc<FrameCounts> {
        self.transform.counts.clone()
    }
}

/// Counts a frame found.
fn count_found(counts: &FrameCounts, found: crate::codes::ccsds::Found) {
    counts.found.fetch_add(1, Ordering::Relaxed);
    counts.inverted.fetch_add(u64::from(found.inverted), Ordering::Relaxed);
    counts.marker_errors.fetch_add(found.errors.into(), Ordering::Relaxed);
}

/// The decoder's side of [`CcsdsDecoder`].
struct Checking {
    codec: FrameCodec,
    frame: Vec<u8>,
    counts: Arc<FrameCounts>,
}

impl Transform<u8, u8> for Checking {
    fn process(&mut self, input: &[u8], _tags: &[ItemTag], out: &mut Backlog<u8>) -> anyhow::Result<()> {
        let len = self.codec.frame_len();
        let mut rest = input;
        while !rest.is_empty() {
            let take = rest.len().min(len - self.frame.len());
            self.frame.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.frame.len() < len {
                break;
            }
            match self.codec.decode(&mut self.frame) {
                FrameOutcome::Corrected(n) => {
                    self.counts.passed.fetch_add(1, Ordering::Relaxed);
                    self.counts.corrected.fetch_add(n as u64, Ordering::Relaxed);
                    out.items.extend_from_slice(&self.frame[..self.codec.data_len()]);
                }
                FrameOutcome::Failed(_) => {
                    self.counts.failed.fetch_add(1, Ordering::Relaxed);
                }
            }
            self.frame.clear();
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut Backlog<u8>) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.frame.is_empty(),
            "the stream ended inside a frame: {} of its {} bytes came",
            self.frame.len(),
            self.codec.frame_len()
        );
        Ok(())
    }
}

relayed_block! {
/// Derandomizes each frame and corrects it with Reed–Solomon
/// ([`FrameCodec::decode`]): frames that pass go on as their data bytes,
/// frames with more errors than the code corrects are counted and dropped.
///
/// # Stream Inputs
///
/// `input`: whole frames' bytes (after their markers), as [`AsmSync`] sends
/// them; a stream that ends inside a frame fails the flowgraph.
///
/// # Stream Outputs
///
/// `output`: the data bytes of each frame that passed.
///
/// # Usage
/// ```
/// use gpufec::blocks::CcsdsDecoder;
/// use gpufec::codes::ccsds::{Basis, FrameCodec, ReedSolomon};
/// let block = CcsdsDecoder::new(FrameCodec::new(ReedSolomon::new(146, 1, Basis::Conventional)?, true));
/// # Ok::<(), anyhow::Error>(())
/// ```
CcsdsDecoder, Checking
}

impl CcsdsDecoder {
    /// Frames of `codec`.
    pub fn new(codec: FrameCodec) -> Self {
        Self::with(Checking { codec, frame: Vec::new(), counts: Arc::default() })
    }

    /// Its counts, live.
    pub fn counts(&self) -> Arc<FrameCounts> {
        self.transform.counts.clone()
    }
}

/// Writes frames to a file ([`FrameFile`]): as hex lines, one frame a
/// line (lowercase, no spaces), as gr-satellites' frames are listed; as
/// KISS, each a data frame on port 0 with FEND and FESC escaped, for
/// packet software that reads a TNC's stream; or as their bytes back to
/// back. The file is written whole when the stream ends
/// ([`crate::files::replace`]): a run stopped midway leaves the file as it
/// was.
///
/// # Stream Inputs
///
/// `input`: whole frames' bytes, back to back; a stream that ends inside a
/// frame fails the flowgraph.
///
/// # Stream Outputs
///
/// None.
///
/// # Usage
/// ```no_run
/// use gpufec::blocks::HexFrameSink;
/// use gpufec::codes::ccsds::FrameFile;
/// let sink = HexFrameSink::new("frames.hex", 114)?;
/// let kiss = HexFrameSink::new("frames.kiss", 114)?.file(FrameFile::Kiss);
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
#[blocking]
pub struct HexFrameSink {
    path: PathBuf,
    frame_bytes: usize,
    file: FrameFile,
    text: Vec<u8>,
    partial: Vec<u8>,
    written: Arc<FileWritten>,
    errors: FirstError,
    #[input]
    input: DefaultCpuReader<u8>,
}

impl HexFrameSink {
    /// Lines of `frame_bytes` (1..=[`MAX_FRAME_BYTES`](crate::codes::ccsds::MAX_FRAME_BYTES)) into `path`, checked writable now.
    pub fn new(path: impl Into<PathBuf>, frame_bytes: usize) -> anyhow::Result<Self> {
        let path = path.into();
        anyhow::ensure!(
            (1..=crate::codes::ccsds::MAX_FRAME_BYTES).contains(&frame_bytes),
            "a frame of {frame_bytes} bytes is outside 1..={}",
            crate::codes::ccsds::MAX_FRAME_BYTES
        );
        crate::files::check_writable(&path)?;
        Ok(Self { path, frame_bytes, file: FrameFile::Hex, text: Vec::new(), partial: Vec::new(), written: Arc::default(), errors: FirstError::default(), input: DefaultCpuReader::default() })
    }

    /// Writes the frames as `file` says (hex lines unless told).
    pub fn file(mut self, file: FrameFile) -> Self {
        self.file = file;
        self
    }

    /// What it has taken (items: bytes) and written (bytes, at the end).
    pub fn written(&self) -> Arc<FileWritten> {
        self.written.clone()
    }

    fn step(&mut self, io: &mut WorkIo) -> anyhow::Result<()> {
        let items = self.input.slice();
        let n = items.len();
        for &b in items {
            self.partial.push(b);
            if self.partial.len() == self.frame_bytes {
                self.file.append(&self.partial, &mut self.text);
                self.partial.clear();
            }
        }
        self.input.consume(n);
        self.written.items.fetch_add(n as u64, Ordering::Relaxed);
        if self.input.finished() && self.input.slice().is_empty() {
            anyhow::ensure!(self.partial.is_empty(), "the stream ended inside a frame: {} of its {} bytes came", self.partial.len(), self.frame_bytes);
            crate::files::replace(&self.path, &self.text)?;
            self.written.bytes.store(self.text.len() as u64, Ordering::Relaxed);
            io.finished = true;
        }
        Ok(())
    }
}


impl Reporting for HexFrameSink {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl super::Counted for HexFrameSink {
    fn items(&self) -> u64 {
        self.written.items.load(Ordering::Relaxed)
    }
}

#[doc(hidden)]
impl Kernel for HexFrameSink {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.step(io);
        self.errors.keep(meta, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::runtime;
    use crate::blocks::testing::run_through;
    use crate::codes::ccsds::{ASM, AsmFramer, Basis, ReedSolomon};
    use futuresdr::blocks::VectorSource;
    use futuresdr::runtime::Flowgraph;

    fn codec() -> FrameCodec {
        FrameCodec::new(ReedSolomon::new(60, 2, Basis::Dual).unwrap(), true)
    }

    #[test]
    fn frames_go_out_found_and_corrected_block_by_block() {
        let data: Vec<u8> = (0..3 * 56u32).map(|i| (i * 37 % 251) as u8).collect();
        let bits: Vec<u8> = data.iter().flat_map(|b| (0..8).rev().map(move |i| b >> i & 1)).collect();
        let errors = FirstError::default();
        let sent: Vec<u8> = run_through(bits, &errors, |fg| fg.add(CcsdsEncoder::new(AsmFramer::new(codec()))).into()).unwrap();
        assert_eq!(sent.len(), 3 * (32 + 8 * 120));
        // Junk before, a marker bit and a frame byte wrong, the stream inverted.
        let mut received: Vec<u8> = [1, 0, 1].into_iter().chain(sent).map(|b| b ^ 1).collect();
        received[3 + 5] ^= 1;
        received[3 + 32 + 80..3 + 32 + 88].iter_mut().for_each(|b| *b ^= 1);
        let sync = AsmSync::new(AsmSearch::new(ASM, 2).unwrap(), 120).unwrap();
        let found = sync.counts();
        let frames: Vec<u8> = run_through(received, &errors, |fg| fg.add(sync).into()).unwrap();
        assert_eq!(frames.len(), 3 * 120);
        let decoder = CcsdsDecoder::new(codec());
        let checked = decoder.counts();
        let mut broken = frames.clone();
        broken[120..150].iter_mut().for_each(|b| *b ^= 0x3c); // 15 errors in each codeword of frame 1: still corrected
        broken[240..300].iter_mut().for_each(|b| *b ^= 0x3c); // 30 in each of frame 2: too many
        let got: Vec<u8> = run_through(broken, &errors, |fg| fg.add(decoder).into()).unwrap();
        assert_eq!(got, data[..112], "frames 0 and 1 pass, 56 data bytes each");
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        assert_eq!((l(&found.found), l(&found.inverted), l(&found.marker_errors)), (3, 3, 1));
        assert_eq!((l(&checked.passed), l(&checked.corrected), l(&checked.failed)), (2, 1 + 30, 1));
        assert!(checked.line().contains("2 frames passed Reed–Solomon (31 symbols corrected), 1 failed"), "{}", checked.line());
    }

    #[test]
    fn a_stream_ending_inside_a_frame_fails_saying_so() {
        let errors = FirstError::default();
        let e = run_through::<u8, u8>(vec![0; 130], &errors, |fg| fg.add(CcsdsDecoder::new(codec()).report_to(&errors)).into()).unwrap_err();
        assert!(e.contains("ended inside a frame: 10 of its 120 bytes"), "{e}");
        let dir = std::env::temp_dir().join(format!("gpufec-hexsink-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.hex");
        let run = |bytes: Vec<u8>| {
            let errors = FirstError::default();
            let mut fg = Flowgraph::new();
            let snk = fg.add(HexFrameSink::new(&path, 3).unwrap().report_to(&errors));
            let src = fg.add(VectorSource::<u8>::new(bytes));
            fg.stream(&src, |b| b.output(), &snk, |b| b.input()).unwrap();
            let r = runtime().run(fg);
            errors.message().map_or(r.map(drop).map_err(|e| e.to_string()), Err)
        };
        run(vec![0xab, 0, 1, 2, 3, 0xff]).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "ab0001\n0203ff\n");
        let e = run(vec![1, 2, 3, 4]).unwrap_err();
        assert!(e.contains("ended inside a frame: 1 of its 3 bytes"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "ab0001\n0203ff\n", "a failed run leaves the file as it was");
        assert!(HexFrameSink::new(&path, 0).is_err());
        // KISS and binary files of frames holding FEND and FESC.
        let frames = vec![0xC0, 0xDB, 0x01, 0x02, 0xC0, 0xDB];
        for (file, want) in [
            (FrameFile::Kiss, vec![0xC0, 0x00, 0xDB, 0xDC, 0xDB, 0xDD, 0x01, 0xC0, 0xC0, 0x00, 0x02, 0xDB, 0xDC, 0xDB, 0xDD, 0xC0]),
            (FrameFile::Binary, frames.clone()),
        ] {
            let errors = FirstError::default();
            let mut fg = Flowgraph::new();
            let snk = fg.add(HexFrameSink::new(&path, 3).unwrap().file(file).report_to(&errors));
            let src = fg.add(VectorSource::<u8>::new(frames.clone()));
            fg.stream(&src, |b| b.output(), &snk, |b| b.input()).unwrap();
            runtime().run(fg).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), want, "{file:?}");
            if file == FrameFile::Kiss {
                assert_eq!(crate::codes::ccsds::kiss_frames(&want).unwrap(), [frames[..3].to_vec(), frames[3..].to_vec()]);
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
