use super::*;
use crate::blocks::testing::collect_from;
use crate::blocks::{FirstError, Reporting, runtime};
use futuresdr::blocks::VectorSource;
use futuresdr::runtime::Flowgraph;
use num_complex::Complex32;
use std::path::PathBuf;

fn temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpufec-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Write `items` through a FileSink to a new file; its bytes, or the error.
fn sink<T: Pod + futuresdr::runtime::dev::CpuSample>(name: &str, items: Vec<T>, format: FileFormat) -> Result<Vec<u8>, String> {
    let path = temp(name, b"old contents");
    let errors = FirstError::default();
    let mut fg = Flowgraph::new();
    let snk = fg.add(FileSink::<T>::new(&path, format).unwrap().report_to(&errors));
    let src = fg.add(VectorSource::<T>::new(items));
    fg.stream_dyn(src, "output", snk, "input").unwrap();
    runtime().run(fg).map_err(|e| errors.message().unwrap_or(e.to_string()))?;
    Ok(std::fs::read(path).unwrap())
}

fn source<T: Pod + futuresdr::runtime::dev::CpuSample>(path: &std::path::Path, format: FileFormat, repeat: bool, take: usize) -> Result<Vec<T>, String> {
    let errors = FirstError::default();
    let block = FileSource::<T>::new(path, format, repeat).map_err(|e| e.to_string())?.report_to(&errors);
    if repeat {
        // An endless source: keep the first `take` items through a head block.
        let mut fg = Flowgraph::new();
        let snk = fg.add(futuresdr::blocks::VectorSink::<T>::new(take));
        let head = fg.add(futuresdr::blocks::Head::<T>::new(take as u64));
        let src = fg.add(block);
        fg.stream_dyn(src, "output", head, "input").unwrap();
        fg.stream_dyn(head, "output", snk, "input").unwrap();
        let fg = runtime().run(fg).map_err(|e| errors.message().unwrap_or(e.to_string()))?;
        return Ok(snk.get(&fg).unwrap().items().clone());
    }
    Ok(collect_from(|fg| fg.add(block).into()))
}

#[test]
fn every_format_round_trips_with_gnu_radio_layout() {
    let bits: Vec<u8> = (0..100_003u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 31) as u8).collect();
    // Unpacked bits: one byte each.
    let bytes = sink("bits", bits.clone(), FileFormat::Bits).unwrap();
    assert_eq!(bytes, bits);
    // Packed: MSB first, the last byte completed with zeros.
    let packed = sink("packed", bits.clone(), FileFormat::Packed).unwrap();
    assert_eq!(packed.len(), 100_003usize.div_ceil(8));
    let first: u8 = bits[..8].iter().fold(0, |a, &b| (a << 1) | b);
    assert_eq!(packed[0], first);
    let path = temp("packed-in", &packed);
    let back: Vec<u8> = source(&path, FileFormat::Packed, false, 0).unwrap();
    assert_eq!(&back[..bits.len()], &bits[..]);
    assert!(back[bits.len()..].iter().all(|&b| b == 0) && back.len() == packed.len() * 8);
    // i8 and f32: native bytes.
    let llrs: Vec<i8> = (0..70_001).map(|i| (i % 255 - 127) as i8).collect();
    let bytes = sink("i8", llrs.clone(), FileFormat::I8).unwrap();
    assert_eq!(bytes.iter().map(|&b| b as i8).collect::<Vec<_>>(), llrs);
    let back: Vec<i8> = source(&temp("i8-in", &bytes), FileFormat::I8, false, 0).unwrap();
    assert_eq!(back, llrs);
    let f: Vec<f32> = (0..50_000).map(|i| i as f32 * 0.25 - 7.0).collect();
    let bytes = sink("f32", f.clone(), FileFormat::F32).unwrap();
    assert_eq!(&bytes[4..8], &f[1].to_ne_bytes());
    assert_eq!(source::<f32>(&temp("f32-in", &bytes), FileFormat::F32, false, 0).unwrap(), f);
    // Complex: cf32 as two f32, ci16 rounded and saturated.
    let c: Vec<Complex32> = (0..20_000).map(|i| Complex32::new(i as f32 * 3.4 - 30_000.0, -(i as f32) * 0.6)).collect();
    let bytes = sink("cf32", c.clone(), FileFormat::Cf32).unwrap();
    assert_eq!(source::<Complex32>(&temp("cf32-in", &bytes), FileFormat::Cf32, false, 0).unwrap(), c);
    let bytes = sink("ci16", c.clone(), FileFormat::Ci16).unwrap();
    assert_eq!(bytes.len(), 4 * c.len());
    let back: Vec<Complex32> = source(&temp("ci16-in", &bytes), FileFormat::Ci16, false, 0).unwrap();
    for (b, x) in back.iter().zip(&c) {
        assert_eq!(b.re, x.re.round().clamp(-32768.0, 32767.0));
        assert_eq!(b.im, x.im.round());
    }
}

#[test]
fn repeat_starts_again_and_an_empty_file_is_refused() {
    let path = temp("rep", &[1u8, 2, 3]);
    let got: Vec<i8> = source(&path, FileFormat::I8, true, 10).unwrap();
    assert_eq!(got, vec![1, 2, 3, 1, 2, 3, 1, 2, 3, 1]);
    let empty = temp("empty", &[]);
    let e = FileSource::<i8>::new(&empty, FileFormat::I8, true).err().unwrap().to_string();
    assert!(e.contains("is empty: there is nothing to repeat"), "{e}");
    // Without repeat an empty file is an empty stream.
    assert!(source::<i8>(&empty, FileFormat::I8, false, 0).unwrap().is_empty());
}

#[test]
fn bad_files_and_values_are_refused_with_their_reason() {
    let missing = std::env::temp_dir().join("gpufec-no-such-dir/none.i8");
    let e = FileSource::<i8>::new(&missing, FileFormat::I8, false).err().unwrap().to_string();
    assert!(e.contains("cannot open") && e.contains("none.i8"), "{e}");
    let e = FileSink::<u8>::new(&missing, FileFormat::Bits).err().unwrap().to_string();
    assert!(e.contains("cannot write") && e.contains("none.i8"), "{e}");
    // 10 bytes are not whole f32 items.
    let odd = temp("odd.f32", &[0u8; 10]);
    let e = FileSource::<f32>::new(&odd, FileFormat::F32, false).err().unwrap().to_string();
    assert!(e.contains("is 10 bytes, not a whole number of 4-byte f32 items (2 bytes left over)"), "{e}");
    // A format that does not hold the stream's items.
    let e = FileSource::<i8>::new(&odd, FileFormat::F32, false).err().unwrap().to_string();
    assert!(e.contains("format f32 does not hold this stream's items (it takes i8)"), "{e}");
    // Bits that are not bits, samples that are not finite.
    let e = sink("badbits", vec![0u8, 1, 2], FileFormat::Packed).unwrap_err();
    assert!(e.contains("bit 2 of the stream is 2, not 0 or 1"), "{e}");
    let e = sink("badbits2", vec![0u8, 9], FileFormat::Bits).unwrap_err();
    assert!(e.contains("bit 1 of the stream is 9, not 0 or 1"), "{e}");
    let e = sink("nan", vec![Complex32::new(f32::NAN, 0.0)], FileFormat::Ci16).unwrap_err();
    assert!(e.contains("sample 0 of the stream is not finite"), "{e}");
}

#[test]
fn a_sink_that_is_never_started_leaves_the_file_as_it_was() {
    let path = temp("keep", b"precious");
    drop(FileSink::<u8>::new(&path, FileFormat::Bits).unwrap());
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");
}

#[test]
fn a_fifo_is_written_as_it_is_every_byte() {
    // A FIFO (as a device) cannot be truncated; the sink writes to it all the
    // same, and a reader at the other end gets every byte.
    let path = temp("fifo", b"").with_extension("pipe");
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo only reads it.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
    let reading = path.clone();
    let reader = std::thread::spawn(move || std::fs::read(reading).unwrap());
    let errors = FirstError::default();
    let mut fg = Flowgraph::new();
    let snk = fg.add(FileSink::<u8>::new(&path, FileFormat::Packed).unwrap().report_to(&errors));
    let src = fg.add(VectorSource::<u8>::new(vec![1u8; 100_001]));
    fg.stream_dyn(src, "output", snk, "input").unwrap();
    runtime().run(fg).map_err(|e| errors.message().unwrap_or(e.to_string())).unwrap();
    let got = reader.join().unwrap();
    std::fs::remove_file(&path).unwrap();
    // 100 001 one-bits, eight to a byte, the last byte's 7 spare bits zero.
    assert_eq!(got.len(), 12_501);
    assert!(got[..12_500].iter().all(|&b| b == 0xFF) && got[12_500] == 0x80, "{:?}", &got[12_495..]);
}

#[test]
fn a_pipe_is_read_one_read_at_a_time() {
    // /dev/zero is no regular file: read sequentially, endless.
    let got: Vec<u8> = source(std::path::Path::new("/dev/zero"), FileFormat::Bits, true, 5_000_000).unwrap();
    assert_eq!(got.len(), 5_000_000);
}

/// A packed stream is the file's bytes as they are, both ways; and only a
/// packed file carries one.
#[test]
fn a_packed_stream_is_the_files_bytes() {
    let bytes: Vec<u8> = (0..100_003u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let path = temp("packed-stream.packed", &bytes);
    let block = FileSource::<u8>::new(&path, FileFormat::Packed, false).unwrap().packed_stream().unwrap();
    let got: Vec<u8> = collect_from(|fg| fg.add(block).into());
    assert_eq!(got, bytes);
    let out = temp("packed-stream-out.packed", b"old contents");
    let errors = FirstError::default();
    let mut fg = Flowgraph::new();
    let snk = fg.add(FileSink::<u8>::new(&out, FileFormat::Packed).unwrap().packed_stream().unwrap().report_to(&errors));
    let src = fg.add(VectorSource::<u8>::new(bytes.clone()));
    fg.stream_dyn(src, "output", snk, "input").unwrap();
    runtime().run(fg).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), bytes);
    let e = FileSink::<u8>::new(&out, FileFormat::Bits).unwrap().packed_stream().err().unwrap().to_string();
    assert!(e.contains("packed file, not bits"), "{e}");
    let e = FileSource::<u8>::new(&path, FileFormat::Bits, false).unwrap().packed_stream().err().unwrap().to_string();
    assert!(e.contains("packed file, not bits"), "{e}");
}

/// A sink that takes nothing until its input holds `want` items (or ends):
/// a reader that frees no room, as a decoder waiting for a full batch.
mod hoarder {
    use futuresdr::runtime::dev::prelude::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Block)]
    pub(super) struct Hoarder {
        want: usize,
        got: Arc<AtomicUsize>,
        #[input]
        input: DefaultCpuReader<u8>,
    }

    impl Hoarder {
        pub(super) fn new(want: usize, got: Arc<AtomicUsize>) -> Self {
            let mut input = DefaultCpuReader::default();
            input.set_min_buffer_size_in_items(2 * want);
            Self { want, got, input }
        }
    }

    impl Kernel for Hoarder {
        async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, _meta: &mut BlockMeta) -> Result<()> {
            let n = self.input.slice().len();
            if n >= self.want || self.input.finished() {
                self.input.consume(n);
                self.got.fetch_add(n, Ordering::SeqCst);
                io.finished = self.input.finished();
            }
            Ok(())
        }
    }
}

/// A pipe is read as its data comes, whether or not the reader after the
/// source frees room: reading only when it did paced a live stream at one
/// read per latency bound of the decoder behind it.
#[test]
fn a_pipe_is_read_as_fast_as_it_is_written() {
    const TOTAL: usize = 1 << 20;
    let mut fds = [0i32; 2];
    // SAFETY: pipe fills the two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let path = PathBuf::from(format!("/proc/self/fd/{}", fds[0]));
    let block = FileSource::<u8>::new(&path, FileFormat::Packed, false).unwrap().packed_stream().unwrap();
    // SAFETY: the write end is ours; a File owns and closes it.
    let mut writer = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) };
    let feeding = std::thread::spawn(move || {
        // Pieces smaller than a pipe's buffer: each read gets one or a few.
        for _ in 0..TOTAL / 4096 {
            std::io::Write::write_all(&mut writer, &[7u8; 4096]).unwrap();
        }
    });
    let got = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut fg = Flowgraph::new();
    let snk = fg.add(hoarder::Hoarder::new(TOTAL, got.clone()));
    let src = fg.add(block);
    fg.stream_dyn(src, "output", snk, "input").unwrap();
    // A watchdog, not a clock: the old source waits here for ever.
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(runtime().run(fg).map(drop).map_err(|e| e.to_string()));
    });
    let outcome = finished.recv_timeout(std::time::Duration::from_secs(120)).expect("the source stopped reading the pipe");
    outcome.unwrap();
    feeding.join().unwrap();
    // SAFETY: the source opened its own descriptor of the pipe; this one is ours to close.
    unsafe { libc::close(fds[0]) };
    assert_eq!(got.load(std::sync::atomic::Ordering::SeqCst), TOTAL);
}
