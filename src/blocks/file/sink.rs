//! The file sink block.

use super::format::{FileFormat, Pod, bytes_of, check_bits, check_format};
use crate::blocks::{FirstError, Reporting};
use futuresdr::runtime::dev::prelude::*;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of the stream buffer in front of the sink.
const BUFFER_BYTES: usize = 16 << 20;

/// Writes its input to a raw file ([`FileFormat`]: bits, packed bits, `i8` or
/// `f32` LLRs, `cf32` or `ci16` samples), byte-compatible with GNU Radio's
/// file source for those types. A path that cannot be written is refused
/// when the block is made, but the file is created (or truncated) only when
/// the flowgraph starts: a flowgraph that fails to build or to start leaves
/// an existing file as it was and makes no new one. Pipes and devices
/// (`/dev/null`) are written as they are; a named pipe is opened when the
/// run starts, saying on stderr if it waits for a reader. Whatever the block
/// has when its input runs dry is written out at once, so a reader of a live
/// output sees each piece as it is decoded. The block runs on its own
/// thread, since writes to a pipe block.
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
    written: Arc<FileWritten>,
    errors: FirstError,
    #[input]
    input: DefaultCpuReader<T>,
}

impl<T: Pod + CpuSample> FileSink<T> {
    /// Write to `path` (checked now, created or truncated when the flowgraph starts) as
    /// `format`, which must hold `T` items.
    pub fn new(path: impl AsRef<Path>, format: FileFormat) -> anyhow::Result<Self> {
        check_format::<T>(format)?;
        let path = path.as_ref().to_path_buf();
        anyhow::ensure!(!path.as_os_str().is_empty(), "the path is empty: name a file");
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => anyhow::bail!("{} is a directory, not a file", path.display()),
            // Opened to learn that it can be, and closed unchanged.
            Ok(m) if m.is_file() => drop(OpenOptions::new().write(true).open(&path).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?),
            Ok(_) => {}
            Err(_) => crate::files::check_writable(&path)?,
        }
        Ok(Self {
            writer: Writer { path, file: None, format, raw: format.is_raw(), partial: Vec::new(), scratch: Vec::new() },
            taken: 0,
            written: Arc::default(),
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

    /// A handle on what it has written, readable while the flowgraph runs
    /// and after it ended.
    pub fn written(&self) -> Arc<FileWritten> {
        self.written.clone()
    }

    fn step(&mut self, io: &mut WorkIo) -> anyhow::Result<()> {
        let items = self.input.slice();
        let n = items.len();
        if n > 0 {
            let bytes = self.writer.write(items, self.taken)?;
            self.input.consume(n);
            self.taken += n as u64;
            self.written.items.store(self.taken, Ordering::Relaxed);
            self.written.bytes.fetch_add(bytes, Ordering::Relaxed);
            if self.input.slice().is_empty() {
                // Caught up: what is buffered goes out now, not when 4 MiB gathered.
                self.writer.flush()?;
            }
        }
        if self.input.finished() && self.input.slice().is_empty() {
            let bytes = self.writer.finish(self.taken)?;
            self.written.bytes.fetch_add(bytes, Ordering::Relaxed);
            io.finished = true;
        }
        Ok(())
    }
}

/// What a [`FileSink`] has written so far.
#[derive(Debug, Default)]
pub struct FileWritten {
    /// Stream items taken.
    pub items: AtomicU64,
    /// Bytes handed to the file (a packed byte's last bits included).
    pub bytes: AtomicU64,
}

/// A file being written.
struct Writer<T> {
    path: PathBuf,
    /// Opened when the flowgraph starts.
    file: Option<BufWriter<File>>,
    format: FileFormat,
    /// Items written as they are in memory.
    raw: bool,
    /// Items of an incomplete group (packed bits), waiting for the rest.
    partial: Vec<T>,
    scratch: Vec<u8>,
}

impl<T: Pod> Writer<T> {
    /// Create or truncate a regular file, or open a FIFO or device as it is
    /// (a FIFO waits for its reader, saying so).
    fn open(&mut self) -> anyhow::Result<()> {
        let path = &self.path;
        let meta = std::fs::metadata(path).ok();
        let fifo = meta.as_ref().is_some_and(|m| m.file_type().is_fifo());
        let regular = meta.as_ref().is_none_or(|m| m.is_file());
        let open = || OpenOptions::new().write(true).create(regular).truncate(regular).open(path);
        let file = if fifo { crate::files::open_saying(&format!("a reader of {}", path.display()), open) } else { open() };
        let file = file.map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        self.file = Some(BufWriter::with_capacity(4 << 20, file));
        Ok(())
    }

    fn file(&mut self) -> &mut BufWriter<File> {
        self.file.as_mut().expect("the sink's file is opened when the flowgraph starts")
    }

    /// Write out what is buffered.
    fn flush(&mut self) -> anyhow::Result<()> {
        let path = self.path.display().to_string();
        self.file().flush().map_err(|e| anyhow::anyhow!("writing {path}: {e}"))
    }

    /// Write `items`, stream items `first`, `first + 1`, ...: the bytes written.
    fn write(&mut self, items: &[T], first: u64) -> anyhow::Result<u64> {
        let failed = |e: std::io::Error| anyhow::anyhow!("writing {}: {e}", self.path.display());
        if self.raw {
            if self.format == FileFormat::Bits {
                // Bits are 0 or 1 (the items are u8: the one Pod type of this format).
                check_bits(bytes_of(items), first)?;
            }
            let bytes = bytes_of(items);
            self.file.as_mut().expect("opened at the start").write_all(bytes).map_err(failed)?;
            return Ok(bytes.len() as u64);
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
        self.file.as_mut().expect("opened at the start").write_all(&self.scratch).map_err(failed)?;
        Ok(self.scratch.len() as u64)
    }

    /// End of input after `total` items: complete a partial group with
    /// default items (zero bits), and flush; the bytes that added.
    fn finish(&mut self, total: u64) -> anyhow::Result<u64> {
        let mut bytes = 0;
        if !self.partial.is_empty() {
            let (group, held) = (self.format.items_per_group(), self.partial.len() as u64);
            self.partial.resize(group, T::default());
            self.scratch.clear();
            T::encode(self.format, &self.partial, total - held, &mut self.scratch)?;
            self.partial.clear();
            let scratch = std::mem::take(&mut self.scratch);
            let path = self.path.display().to_string();
            self.file().write_all(&scratch).map_err(|e| anyhow::anyhow!("writing {path}: {e}"))?;
            bytes = scratch.len() as u64;
        }
        self.flush()?;
        Ok(bytes)
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
        let r = self.writer.open();
        self.errors.keep(meta, r)
    }

    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.step(io);
        self.errors.keep(meta, r)
    }
}
