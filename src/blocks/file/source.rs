//! The file source block.

use super::format::{FileFormat, Pod, bytes_of_mut, check_format};
use crate::blocks::stream;
use crate::blocks::{FirstError, Reporting};
use futuresdr::runtime::dev::prelude::*;
use rayon::prelude::*;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileExt, FileTypeExt};
use std::path::{Path, PathBuf};

/// Bytes of the stream buffer behind the source: large, because a file is
/// read as fast as memory allows and every buffer turn costs a work call.
const BUFFER_BYTES: usize = 64 << 20;
/// Pieces read in parallel from a regular file: the free room of the
/// buffer, often one batch of the block after it, split over every thread
/// in pieces of this range (on the lent H200, page-cache reads of 1–16 MiB
/// run at 7–8 GB/s per reader, and 4 readers reach 29 GB/s, 16 reach 40).
const MIN_PIECE_BYTES: usize = 1 << 20;
const MAX_PIECE_BYTES: usize = 16 << 20;

/// Reads the items of a raw file ([`FileFormat`]: bits, packed bits, `i8` or
/// `f32` LLRs, `cf32` or `ci16` samples), byte-compatible with GNU Radio's
/// file sink for those types; with `repeat`, from the start again at its end.
///
/// A missing file, an empty file to repeat, or a regular file whose length is
/// not a whole number of items is refused when the block is made; a file that
/// ends inside an item while it is read (a pipe, or a file cut short meanwhile)
/// fails the flowgraph with the count of items read. Regular files are read
/// in pieces on all cores; from pipes and devices, whatever one read
/// gives (completed to whole items) goes on at once. The block runs on its
/// own thread, since a pipe's reads block. With `repeat`, a file is read
/// round and round within one call until the output buffer is full; a pipe
/// is opened again at its end, which waits for a new writer.
///
/// # Stream Inputs
///
/// None.
///
/// # Stream Outputs
///
/// `output`: the items (`u8` bits for `bits` and `packed`, `i8`, `f32`, or
/// `Complex32` for `cf32` and `ci16`).
///
/// # Usage
/// ```no_run
/// use gpufec::blocks::{FileFormat, FileSource};
/// let src = FileSource::<i8>::new("llrs.i8", FileFormat::I8, false)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
#[type_name(FileSource)]
#[blocking]
pub struct FileSource<T: Pod + CpuSample> {
    reader: Reader,
    format: FileFormat,
    packed_stream: bool,
    repeat: bool,
    emitted: u64,
    scratch: Vec<u8>,
    errors: FirstError,
    #[output]
    output: DefaultCpuWriter<T>,
}

impl<T: Pod + CpuSample> FileSource<T> {
    /// Read `path` as `format` (which must hold `T` items), repeating it at
    /// its end if `repeat`.
    pub fn new(path: impl AsRef<Path>, format: FileFormat, repeat: bool) -> anyhow::Result<Self> {
        check_format::<T>(format)?;
        let path = path.as_ref().to_path_buf();
        anyhow::ensure!(!path.as_os_str().is_empty(), "the path is empty: name a file");
        let meta = std::fs::metadata(&path).map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?;
        anyhow::ensure!(!meta.is_dir(), "{} is a directory, not a file", path.display());
        // A FIFO's open waits for a writer: it is opened when the run starts,
        // saying so if it waits, not while the flowgraph is built.
        let file = if meta.file_type().is_fifo() {
            None
        } else {
            Some(File::open(&path).map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?)
        };
        let length = meta.is_file().then_some(meta.len());
        if let Some(len) = length {
            let group = format.group_bytes() as u64;
            anyhow::ensure!(
                len % group == 0,
                "{} is {len} bytes, not a whole number of {group}-byte {} items ({} bytes left over)",
                path.display(),
                format.name(),
                len % group
            );
            anyhow::ensure!(!(repeat && len == 0), "{} is empty: there is nothing to repeat", path.display());
        }
        let mut output = stream::output::<T>();
        output.set_min_buffer_size_in_items(BUFFER_BYTES / size_of::<T>());
        // A short file to repeat is read once and then copied round and round,
        // not read again every few bytes.
        let cache = match length {
            Some(len) if repeat && len <= BUFFER_BYTES as u64 => {
                let mut bytes = vec![0u8; len as usize];
                file.as_ref().expect("a regular file is open").read_exact_at(&mut bytes, 0).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
                Some(bytes)
            }
            _ => None,
        };
        let reader = Reader { path, file, length, offset: 0, cache };
        Ok(Self { reader, format, packed_stream: false, repeat, emitted: 0, scratch: Vec::new(), errors: FirstError::default(), output })
    }

    /// The stream carries the file's packed bytes as they are (a packed-bit
    /// stream, as a decoder with packed output writes), not one bit per item;
    /// only for the `packed` format.
    pub fn packed_stream(mut self) -> anyhow::Result<Self> {
        anyhow::ensure!(self.format == FileFormat::Packed, "a packed stream reads a packed file, not {}", self.format.name());
        self.packed_stream = true;
        Ok(self)
    }

    /// Stream items per group of file bytes.
    fn group_items(&self) -> usize {
        if self.packed_stream { 1 } else { self.format.items_per_group() }
    }

    /// At the end of the file: start again (`repeat`), or finish.
    fn at_end(&mut self) -> anyhow::Result<bool> {
        if !self.repeat {
            return Ok(true);
        }
        let r = &mut self.reader;
        anyhow::ensure!(r.offset > 0, "{} is empty: there is nothing to repeat", r.path.display());
        // A regular file is read at offsets: back to 0. A pipe is opened again.
        if r.length.is_none() {
            r.file = None;
            r.open()?;
        }
        r.offset = 0;
        Ok(false)
    }

    fn step(&mut self, io: &mut WorkIo) -> anyhow::Result<()> {
        let group_items = self.group_items();
        // A short file repeated fills the buffer in one call, not one pass per call.
        loop {
            let room = self.output.slice().len() / group_items;
            if room == 0 {
                return Ok(());
            }
            let end = self.fill(room)?;
            let pipe = self.reader.length.is_none();
            if end {
                if self.at_end()? {
                    io.finished = true;
                    return Ok(());
                }
                // A pipe opened again: let the others run meanwhile.
                io.call_again |= pipe;
            }
            if pipe {
                // Read again at once: a pipe's read waits for data by itself,
                // and waiting for the reader to free room instead paced a
                // live stream at one read per latency bound of the block
                // after it (0.32 Mb/s where the file ran 65).
                io.call_again = true;
                return Ok(());
            }
        }
    }

    /// Read up to `room` groups of items into the output; whether the file
    /// ended (a regular file that gave less than asked, a pipe that gave
    /// nothing: a pipe's short read only means that is all there is yet).
    fn fill(&mut self, room: usize) -> anyhow::Result<bool> {
        let (group_bytes, group_items) = (self.format.group_bytes(), self.group_items());
        let bytes = room * group_bytes;
        let n = if self.packed_stream || self.format.is_raw() {
            self.reader.read(&mut bytes_of_mut(self.output.slice())[..bytes], group_bytes)?
        } else {
            self.scratch.resize(bytes, 0);
            let n = self.reader.read(&mut self.scratch, group_bytes)?;
            let whole = n - n % group_bytes;
            T::decode(self.format, &self.scratch[..whole], &mut self.output.slice()[..whole / group_bytes * group_items]);
            n
        };
        anyhow::ensure!(
            n % group_bytes == 0,
            "{} ends inside an item: {} {} items read, then {} bytes",
            self.reader.path.display(),
            self.emitted + (n / group_bytes * group_items) as u64,
            self.format.name(),
            n % group_bytes
        );
        let items = n / group_bytes * group_items;
        self.output.produce(items);
        self.emitted += items as u64;
        Ok(if self.reader.length.is_some() { n < bytes } else { n == 0 })
    }
}

/// A file being read, and where.
struct Reader {
    path: PathBuf,
    /// `None` until a FIFO is opened.
    file: Option<File>,
    /// Bytes of a regular file (read in parallel at offsets), or `None` for a stream.
    length: Option<u64>,
    offset: u64,
    /// The whole of a short regular file that repeats.
    cache: Option<Vec<u8>>,
}

impl Reader {
    /// Open the file if it is not yet (a FIFO waits for its writer here).
    fn open(&mut self) -> anyhow::Result<&File> {
        if self.file.is_none() {
            let path = &self.path;
            let what = format!("a writer of {}", path.display());
            let file = crate::files::open_saying(&what, || File::open(path)).map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?;
            self.file = Some(file);
        }
        Ok(self.file.as_ref().expect("opened"))
    }

    /// Fill `bytes` from the file, from the current offset; the bytes read
    /// (fewer only at the end of the file).
    fn read(&mut self, bytes: &mut [u8], group: usize) -> anyhow::Result<usize> {
        self.open()?;
        let (path, file) = (&self.path, self.file.as_ref().expect("opened"));
        let failed = |e: std::io::Error| anyhow::anyhow!("reading {}: {e}", path.display());
        let n = match (self.length, &self.cache) {
            (Some(_), Some(cache)) => {
                let rest = &cache[self.offset as usize..];
                let n = bytes.len().min(rest.len());
                bytes[..n].copy_from_slice(&rest[..n]);
                n
            }
            (Some(len), None) if bytes.len() <= MIN_PIECE_BYTES => {
                let n = bytes.len().min((len - self.offset) as usize);
                file.read_exact_at(&mut bytes[..n], self.offset).map_err(failed)?;
                n
            }
            (Some(len), None) => {
                let n = bytes.len().min((len - self.offset) as usize);
                let at = self.offset;
                let piece = (n / rayon::current_num_threads()).clamp(MIN_PIECE_BYTES, MAX_PIECE_BYTES);
                bytes[..n].par_chunks_mut(piece).enumerate().try_for_each(|(i, chunk)| {
                    file.read_exact_at(chunk, at + (i * piece) as u64).map_err(|e| {
                        if e.kind() == std::io::ErrorKind::UnexpectedEof {
                            anyhow::anyhow!("{} became shorter while it was read", path.display())
                        } else {
                            failed(e)
                        }
                    })
                })?;
                n
            }
            (None, _) => {
                // Whatever arrives, completed to whole items (`group` bytes).
                let mut n = 0;
                let mut file = file;
                while n < bytes.len() && (n == 0 || n % group != 0) {
                    match file.read(&mut bytes[n..]) {
                        Ok(0) => break,
                        Ok(k) => n += k,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(failed(e)),
                    }
                }
                n
            }
        };
        self.offset += n as u64;
        Ok(n)
    }

}

impl<T: Pod + CpuSample> Reporting for FileSource<T> {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl<T: Pod + CpuSample> crate::blocks::Counted for FileSource<T> {
    fn items(&self) -> u64 {
        self.emitted
    }
}

#[doc(hidden)]
impl<T: Pod + CpuSample> Kernel for FileSource<T> {
    async fn init(&mut self, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.reader.open().map(drop);
        self.errors.keep(meta, r)
    }

    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.step(io);
        self.errors.keep(meta, r)
    }
}
