//! The file sink block.

use super::format::{FileFormat, Pod, bytes_of, check_bits, check_format};
use crate::blocks::{FirstError, Reporting};
use futuresdr::runtime::dev::prelude::*;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Bytes of the stream buffer in front of the sink.
const BUFFER_BYTES: usize = 16 << 20;

/// Writes its input to a raw file ([`FileFormat`]: bits, packed bits, `i8` or
/// `f32` LLRs, `cf32` or `ci16` samples), byte-compatible with GNU Radio's
/// file source for those types. The file is opened for writing (and created
/// if missing) when the block is made, so a path that cannot be written is
/// refused before the flowgraph runs, and a regular file is truncated only
/// when the flowgraph starts: a flowgraph that fails to build leaves an
/// existing file as it was. Pipes and devices (`/dev/null`) are written as
/// they are; opening a named pipe waits for its reader. The block runs on its
/// own thread, since writes to a pipe block.
///
/// Packed bits go eight to a byte, the first in the most significant place;
/// a stream that ends inside a byte has that byte completed with zero bits
/// (the run's bit count says how many are real; a file source reading it back
/// gives them too, so a repeated file of such bits is not the stream repeated). A bit other than 0 or 1, or
/// a `ci16` sample that is not finite, fails the flowgraph; `ci16` samples
/// are rounded and saturated.
///
/// # Stream Inputs
///
/// `input`: the items (`u8` bits for `bits` and `packed`, `i8`, `f32`, or
/// `Complex32` for `cf32` and `ci16`).
///
/// # Stream Outputs
///
/// None.
///
/// # Usage
/// ```no_run
/// use gpufec::blocks::{FileFormat, FileSink};
/// let snk = FileSink::<u8>::new("decoded.bits", FileFormat::Packed)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
#[type_name(FileSink)]
#[blocking]
pub struct FileSink<T: Pod + CpuSample> {
    writer: Writer<T>,
    taken: u64,
    errors: FirstError,
    #[input]
    input: DefaultCpuReader<T>,
}

impl<T: Pod + CpuSample> FileSink<T> {
    /// Write to `path` (opened now, truncated when the flowgraph starts) as
    /// `format`, which must hold `T` items.
    pub fn new(path: impl AsRef<Path>, format: FileFormat) -> anyhow::Result<Self> {
        check_format::<T>(format)?;
        let path = path.as_ref().to_path_buf();
        anyhow::ensure!(!path.as_os_str().is_empty(), "the path is empty: name a file");
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        let file = BufWriter::with_capacity(4 << 20, file);
        Ok(Self {
            writer: Writer { path, file, format, raw: format.is_raw(), partial: Vec::new(), scratch: Vec::new() },
            taken: 0,
            errors: FirstError::default(),
            input: {
                // Large writes: a GPU decoder's packed bits come a batch of megabytes at a time.
                let mut input = DefaultCpuReader::default();
                input.set_min_buffer_size_in_items(BUFFER_BYTES / size_of::<T>());
                input
            },
        })
    }

    /// The stream carries packed bytes (as a decoder with packed output
    /// writes them), written as they are; only for the `packed` format.
    pub fn packed_stream(mut self) -> anyhow::Result<Self> {
        anyhow::ensure!(self.writer.format == FileFormat::Packed, "a packed stream is written as a packed file, not {}", self.writer.format.name());
        self.writer.raw = true;
        Ok(self)
    }

    fn step(&mut self, io: &mut WorkIo) -> anyhow::Result<()> {
        let items = self.input.slice();
        let n = items.len();
        if n > 0 {
            self.writer.write(items, self.taken)?;
            self.input.consume(n);
            self.taken += n as u64;
        }
        if self.input.finished() && self.input.slice().is_empty() {
            self.writer.finish(self.taken)?;
            io.finished = true;
        }
        Ok(())
    }
}

/// A file being written.
struct Writer<T> {
    path: PathBuf,
    file: BufWriter<File>,
    format: FileFormat,
    /// Items written as they are in memory.
    raw: bool,
    /// Items of an incomplete group (packed bits), waiting for the rest.
    partial: Vec<T>,
    scratch: Vec<u8>,
}

impl<T: Pod> Writer<T> {
    /// Write `items`, stream items `first`, `first + 1`, ...
    fn write(&mut self, items: &[T], first: u64) -> anyhow::Result<()> {
        let failed = |e: std::io::Error| anyhow::anyhow!("writing {}: {e}", self.path.display());
        if self.raw {
            if self.format == FileFormat::Bits {
                // Bits are 0 or 1 (the items are u8: the one Pod type of this format).
                check_bits(bytes_of(items), first)?;
            }
            return self.file.write_all(bytes_of(items)).map_err(failed);
        }
        let group = self.format.items_per_group();
        self.scratch.clear();
        let (mut items, mut first) = (items, first);
        if !self.partial.is_empty() {
            let held = self.partial.len() as u64;
            let fill = (group - self.partial.len()).min(items.len());
            self.partial.extend_from_slice(&items[..fill]);
            items = &items[fill..];
            if self.partial.len() == group {
                T::encode(self.format, &self.partial, first - held, &mut self.scratch)?;
                self.partial.clear();
            }
            first += fill as u64;
        }
        let whole = items.len() / group * group;
        T::encode(self.format, &items[..whole], first, &mut self.scratch)?;
        self.partial.extend_from_slice(&items[whole..]);
        self.file.write_all(&self.scratch).map_err(failed)
    }

    /// End of input after `total` items: complete a partial group with
    /// default items (zero bits), and flush.
    fn finish(&mut self, total: u64) -> anyhow::Result<()> {
        if !self.partial.is_empty() {
            let (group, held) = (self.format.items_per_group(), self.partial.len() as u64);
            self.partial.resize(group, T::default());
            self.scratch.clear();
            T::encode(self.format, &self.partial, total - held, &mut self.scratch)?;
            self.partial.clear();
            let scratch = std::mem::take(&mut self.scratch);
            self.file.write_all(&scratch).map_err(|e| anyhow::anyhow!("writing {}: {e}", self.path.display()))?;
        }
        self.file.flush().map_err(|e| anyhow::anyhow!("writing {}: {e}", self.path.display()))
    }

}

impl<T: Pod + CpuSample> Reporting for FileSink<T> {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl<T: Pod + CpuSample> crate::blocks::Counted for FileSink<T> {
    fn items(&self) -> u64 {
        self.taken
    }
}

#[doc(hidden)]
impl<T: Pod + CpuSample> Kernel for FileSink<T> {
    async fn init(&mut self, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let w = &mut self.writer;
        let file = w.file.get_mut();
        let regular = file.metadata().map(|m| m.is_file()).unwrap_or(false);
        let r = if regular { file.set_len(0) } else { Ok(()) };
        let r = r.map_err(|e| anyhow::anyhow!("truncating {}: {e}", w.path.display()));
        self.errors.keep(meta, r)
    }

    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.step(io);
        self.errors.keep(meta, r)
    }
}
