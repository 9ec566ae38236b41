//! The WAV file source block.

use crate::blocks::stream;
use crate::blocks::{FirstError, Reporting};
use crate::dsp::{WavFormat, WavReader};
use futuresdr::runtime::dev::prelude::*;
use num_complex::Complex32;
use std::io::BufReader;
use std::path::Path;

/// What a recording's source emits and its sink takes: real samples (a
/// mono WAV file, a real SigMF datatype), or complex samples (a stereo WAV
/// file, I left and Q right; a complex SigMF datatype).
pub trait WavItem: CpuSample + Copy {
    /// The values each item is made of: 1 (real) or 2 (I, Q).
    const CHANNELS: u16;
    /// What the stream is, for messages.
    const WHAT: &'static str;
    /// Items from interleaved samples (a whole number of frames).
    fn from_frames(samples: &[f32], out: &mut [Self]);
    /// Appends the interleaved values of `items` to `out`.
    fn to_frames(items: &[Self], out: &mut Vec<f32>);
}

impl WavItem for f32 {
    const CHANNELS: u16 = 1;
    const WHAT: &'static str = "real (f32) samples";
    fn from_frames(samples: &[f32], out: &mut [Self]) {
        out.copy_from_slice(samples);
    }
    fn to_frames(items: &[Self], out: &mut Vec<f32>) {
        out.extend_from_slice(items);
    }
}

impl WavItem for Complex32 {
    const CHANNELS: u16 = 2;
    const WHAT: &'static str = "complex (cf32) samples";
    fn from_frames(samples: &[f32], out: &mut [Self]) {
        for (o, f) in out.iter_mut().zip(samples.chunks_exact(2)) {
            *o = Complex32::new(f[0], f[1]);
        }
    }
    fn to_frames(items: &[Self], out: &mut Vec<f32>) {
        out.extend(items.iter().flat_map(|c| [c.re, c.im]));
    }
}

/// Fills the room of `output` with the items `read` gives (it appends up
/// to the given number of interleaved values to the vector and says how
/// many), counts them in `emitted`, and ends the stream when `read` gives
/// none: a source's work call.
pub(super) fn emit<T: WavItem>(
    output: &mut DefaultCpuWriter<T>,
    values: &mut Vec<f32>,
    io: &mut WorkIo,
    emitted: &mut u64,
    read: impl FnOnce(&mut Vec<f32>, usize) -> anyhow::Result<usize>,
) -> anyhow::Result<()> {
    let room = output.slice().len();
    if room == 0 {
        return Ok(());
    }
    values.clear();
    let channels = T::CHANNELS as usize;
    let items = read(values, room * channels)? / channels;
    T::from_frames(&values[..items * channels], &mut output.slice()[..items]);
    output.produce(items);
    *emitted += items as u64;
    if items == 0 {
        io.finished = true;
    } else {
        io.call_again = true;
    }
    Ok(())
}

/// Reads a WAV file (16-bit PCM or 32-bit float, scaled to −1..1): a mono
/// file as real samples, a stereo file as complex samples (I left, Q right).
///
/// A file that is not a WAV of those formats, or whose channels do not match
/// the stream, is refused when the block is made; a file that ends before
/// its data chunk says fails the flowgraph, naming the file.
///
/// # Stream Inputs
///
/// None.
///
/// # Stream Outputs
///
/// `output`: samples (`f32` or `Complex32`).
///
/// # Usage
/// ```no_run
/// use gpufec::blocks::WavSource;
/// let src = WavSource::<f32>::new("by70-1.wav")?;
/// println!("{} Hz", src.format().sample_rate);
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
#[type_name(WavSource)]
#[blocking]
pub struct WavSource<T: WavItem> {
    reader: WavReader<BufReader<std::fs::File>>,
    path: String,
    samples: Vec<f32>,
    emitted: u64,
    errors: FirstError,
    #[output]
    output: DefaultCpuWriter<T>,
}

impl<T: WavItem> WavSource<T> {
    /// Opens `path` and checks its header.
    pub fn new(path: impl AsRef<Path>) -> anyhow::Result<Self> {
        let path = path.as_ref();
        let file = std::fs::File::open(path).map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?;
        let reader = WavReader::new(BufReader::new(file)).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let channels = reader.format().channels;
        anyhow::ensure!(
            channels == T::CHANNELS,
            "{} has {channels} channel{}, but the stream is {} (from a {} file)",
            path.display(),
            if channels == 1 { "" } else { "s" },
            T::WHAT,
            if T::CHANNELS == 1 { "mono" } else { "stereo I/Q" }
        );
        Ok(Self {
            reader,
            path: path.display().to_string(),
            samples: Vec::new(),
            emitted: 0,
            errors: FirstError::default(),
            output: stream::output(),
        })
    }

    /// The file's format.
    pub fn format(&self) -> WavFormat {
        self.reader.format()
    }

    fn step(&mut self, io: &mut WorkIo) -> anyhow::Result<()> {
        let (reader, path) = (&mut self.reader, &self.path);
        emit(&mut self.output, &mut self.samples, io, &mut self.emitted, |out, max| reader.read(out, max).map_err(|e| anyhow::anyhow!("{path}: {e}")))
    }
}

impl<T: WavItem> Reporting for WavSource<T> {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl<T: WavItem> crate::blocks::Counted for WavSource<T> {
    fn items(&self) -> u64 {
        self.emitted
    }
}

#[doc(hidden)]
impl<T: WavItem> Kernel for WavSource<T> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.step(io);
        self.errors.keep(meta, r)
    }
}
