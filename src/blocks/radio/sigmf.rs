//! SigMF recordings as a source and a sink.

use super::wav_source::{WavItem, emit};
use crate::blocks::{FileWritten, FirstError, Reporting};
use crate::dsp::{MAX_META_BYTES, SigmfMeta, SigmfReader, sigmf_paths};
use crate::files::Replacement;
use futuresdr::runtime::dev::prelude::*;
use std::io::{BufReader, Read};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Reads a SigMF recording: its `.sigmf-meta` (the datatype, sample rate and
/// centre frequency) and the samples of its `.sigmf-data`, integers scaled
/// to −1..1.
///
/// Refused when the block is made, each with a message naming the file: a
/// missing file, metadata that is not JSON or has no datatype or no
/// positive sample rate, an unknown datatype, a data file that is not a
/// whole number of the datatype's samples (cut short, or another datatype),
/// complex samples for a real stream or the other way round, and a sample
/// rate other than the one the chain is built for (when it says one).
///
/// # Stream Inputs
///
/// None.
///
/// # Stream Outputs
///
/// `output`: samples (`Complex32` of a complex datatype, `f32` of a real one).
///
/// # Usage
/// ```no_run
/// use gpufec::blocks::SigmfSource;
/// use num_complex::Complex32;
/// let src = SigmfSource::<Complex32>::new("pass.sigmf-meta", Some(38_400.0))?;
/// println!("{} at {} Hz", src.meta().datatype.name(), src.meta().sample_rate);
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
#[type_name(SigmfSource)]
#[blocking]
pub struct SigmfSource<T: WavItem> {
    meta: SigmfMeta,
    /// The data file's reader; a FIFO's is made when the run starts (its open waits for a writer).
    reader: Option<SigmfReader<BufReader<std::fs::File>>>,
    data: PathBuf,
    samples: Option<u64>,
    values: Vec<f32>,
    emitted: u64,
    errors: FirstError,
    #[output]
    output: DefaultCpuWriter<T>,
}

impl<T: WavItem> SigmfSource<T> {
    /// Opens the recording `path` names (its base, or either file) and
    /// checks it; with `sample_rate`, the recording must have that rate. A
    /// data file that is a FIFO is opened when the run starts and read to its end.
    pub fn new(path: impl AsRef<Path>, sample_rate: Option<f64>) -> anyhow::Result<Self> {
        let (meta_path, data_path) = sigmf_paths(path.as_ref());
        let meta = read_meta(&meta_path)?;
        let dt = meta.datatype;
        anyhow::ensure!(
            dt.values() == T::CHANNELS as usize,
            "{} says its samples are {} ({}), but the stream is {}",
            meta_path.display(),
            if dt.complex { "complex" } else { "real" },
            dt.name(),
            T::WHAT
        );
        if let Some(rate) = sample_rate.filter(|r| (r - meta.sample_rate).abs() > 1e-9 * r.abs()) {
            anyhow::bail!("{} was recorded at {} samples/s, but the chain is built for {rate}", meta_path.display(), meta.sample_rate);
        }
        let file_meta = std::fs::metadata(&data_path).map_err(|e| anyhow::anyhow!("cannot open {}: {e} ({MISSING})", data_path.display()))?;
        anyhow::ensure!(!file_meta.is_dir(), "{} is a directory, not a file", data_path.display());
        let reader = if file_meta.file_type().is_fifo() { None } else { Some(open_data(&data_path, dt, Some(file_meta.len()))?) };
        Ok(Self {
            meta,
            samples: reader.as_ref().and_then(|r| r.samples_left()),
            reader,
            data: data_path,
            values: Vec::new(),
            emitted: 0,
            errors: FirstError::default(),
            output: crate::blocks::stream::output(),
        })
    }

    /// What the recording's metadata says.
    pub fn meta(&self) -> &SigmfMeta {
        &self.meta
    }

    /// Samples the recording holds (`None` for a FIFO, read to its end).
    pub fn samples(&self) -> Option<u64> {
        self.samples
    }

    fn step(&mut self, io: &mut WorkIo) -> anyhow::Result<()> {
        if self.output.slice().is_empty() {
            return Ok(());
        }
        let data = &self.data;
        if self.reader.is_none() {
            let what = format!("a writer of {}", data.display());
            self.reader = Some(crate::files::open_saying(&what, || open_data(data, self.meta.datatype, None))?);
        }
        let reader = self.reader.as_mut().expect("opened");
        emit(&mut self.output, &mut self.values, io, &mut self.emitted, |out, max| reader.read(out, max).map_err(|e| anyhow::anyhow!("{}: {e}", data.display())))
    }
}

/// What a recording is, for a message about a missing file.
const MISSING: &str = "a SigMF recording is a .sigmf-meta and a .sigmf-data file";

/// The reader of the data file `path`: `bytes` long, or a stream.
fn open_data(path: &Path, datatype: crate::dsp::Datatype, bytes: Option<u64>) -> anyhow::Result<SigmfReader<BufReader<std::fs::File>>> {
    let file = std::fs::File::open(path).map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?;
    SigmfReader::new(BufReader::with_capacity(1 << 20, file), datatype, bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// The metadata of `path`, its size checked before it is read.
fn read_meta(path: &Path) -> anyhow::Result<SigmfMeta> {
    let file = std::fs::File::open(path).map_err(|e| anyhow::anyhow!("cannot open {}: {e} ({MISSING})", path.display()))?;
    let size = file.metadata().map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?.len();
    anyhow::ensure!(size <= MAX_META_BYTES, "{} has {size} bytes: SigMF metadata of at most {MAX_META_BYTES} is read", path.display());
    let mut json = String::new();
    file.take(MAX_META_BYTES).read_to_string(&mut json).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    SigmfMeta::parse(&json).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

impl<T: WavItem> Reporting for SigmfSource<T> {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl<T: WavItem> crate::blocks::Counted for SigmfSource<T> {
    fn items(&self) -> u64 {
        self.emitted
    }
}

#[doc(hidden)]
impl<T: WavItem> Kernel for SigmfSource<T> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.step(io);
        self.errors.keep(meta, r)
    }
}

/// Writes a SigMF recording: the samples to `.sigmf-data` in the given
/// datatype (integers from −1..1, rounded and saturated), and when the
/// stream ends, `.sigmf-meta` with the datatype, sample rate, centre
/// frequency and `core:recorder` (this gpufec's version).
///
/// Both files are written whole: the samples go to a temporary file beside
/// the data file, renamed over it at the end, so a run that fails leaves
/// an earlier recording of that name as it was. Paths that cannot be
/// written are refused when the block is made; a sample that is not finite
/// fails the flowgraph.
///
/// # Stream Inputs
///
/// `input`: samples (`Complex32` for a complex datatype, `f32` for a real one).
///
/// # Stream Outputs
///
/// None.
///
/// # Usage
/// ```no_run
/// use gpufec::blocks::SigmfSink;
/// use gpufec::dsp::{Datatype, SigmfMeta};
/// use num_complex::Complex32;
/// let meta = SigmfMeta { datatype: Datatype::CF32_LE, sample_rate: 38_400.0, frequency: Some(436.2e6), recorder: None };
/// let snk = SigmfSink::<Complex32>::new("pass", meta)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
#[type_name(SigmfSink)]
#[blocking]
pub struct SigmfSink<T: WavItem> {
    meta: SigmfMeta,
    meta_path: PathBuf,
    data_path: PathBuf,
    file: Option<Replacement>,
    values: Vec<f32>,
    bytes: Vec<u8>,
    taken: u64,
    written: Arc<FileWritten>,
    errors: FirstError,
    #[input]
    input: DefaultCpuReader<T>,
}

impl<T: WavItem> SigmfSink<T> {
    /// Writes the recording `path` names (its base, or either file) with
    /// `meta` (its recorder set to this gpufec); both paths are checked now,
    /// written when the flowgraph runs.
    pub fn new(path: impl AsRef<Path>, mut meta: SigmfMeta) -> anyhow::Result<Self> {
        anyhow::ensure!(!path.as_ref().as_os_str().is_empty(), "the path is empty: name a recording");
        let dt = meta.datatype;
        anyhow::ensure!(dt.values() == T::CHANNELS as usize, "datatype {} holds {} samples, but the stream is {}", dt.name(), if dt.complex { "complex" } else { "real" }, T::WHAT);
        anyhow::ensure!(meta.sample_rate.is_finite() && meta.sample_rate > 0.0, "a sample rate of {} is not a rate above 0", meta.sample_rate);
        if let Some(f) = meta.frequency {
            anyhow::ensure!(f.is_finite(), "a frequency of {f} Hz is not finite");
        }
        let (meta_path, data_path) = sigmf_paths(path.as_ref());
        crate::files::check_writable(&meta_path)?;
        crate::files::check_writable(&data_path)?;
        meta.recorder = Some(format!("gpufec {}", env!("CARGO_PKG_VERSION")));
        Ok(Self {
            meta,
            meta_path,
            data_path,
            file: None,
            values: Vec::new(),
            bytes: Vec::new(),
            taken: 0,
            written: Arc::default(),
            errors: FirstError::default(),
            input: DefaultCpuReader::default(),
        })
    }

    /// The data file it writes.
    pub fn data_path(&self) -> &Path {
        &self.data_path
    }

    /// Samples and data bytes written so far, for the run's summary.
    pub fn written(&self) -> Arc<FileWritten> {
        self.written.clone()
    }

    fn step(&mut self, io: &mut WorkIo) -> anyhow::Result<()> {
        self.values.clear();
        T::to_frames(self.input.slice(), &mut self.values);
        if !self.values.is_empty() {
            self.bytes.clear();
            self.meta.datatype.encode(&self.values, self.taken * T::CHANNELS as u64, &mut self.bytes)?;
            self.file.as_mut().expect("opened when the flowgraph starts").write_all(&self.bytes)?;
            let n = self.values.len() / T::CHANNELS as usize;
            self.input.consume(n);
            self.taken += n as u64;
            self.written.items.store(self.taken, Ordering::Relaxed);
            self.written.bytes.fetch_add(self.bytes.len() as u64, Ordering::Relaxed);
        }
        if self.input.finished() && self.input.slice().is_empty() {
            if let Some(file) = self.file.take() {
                file.commit()?;
                crate::files::replace(&self.meta_path, self.meta.to_json().as_bytes())?;
            }
            io.finished = true;
        }
        Ok(())
    }
}

impl<T: WavItem> Reporting for SigmfSink<T> {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl<T: WavItem> crate::blocks::Counted for SigmfSink<T> {
    fn items(&self) -> u64 {
        self.taken
    }
}

#[doc(hidden)]
impl<T: WavItem> Kernel for SigmfSink<T> {
    async fn init(&mut self, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = Replacement::create(&self.data_path).map(|f| self.file = Some(f));
        self.errors.keep(meta, r)
    }

    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.step(io);
        self.errors.keep(meta, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::testing::collect_from;
    use crate::dsp::Datatype;
    use num_complex::Complex32;

    /// Runs `items` into `sink`.
    fn record<T: WavItem>(items: Vec<T>, sink: SigmfSink<T>) {
        let errors = FirstError::default();
        let mut fg = futuresdr::runtime::Flowgraph::new();
        let snk = fg.add(sink.report_to(&errors));
        let src = fg.add(futuresdr::blocks::VectorSource::<T>::new(items));
        fg.stream_dyn(src, "output", snk, "input").unwrap();
        crate::blocks::runtime().run(fg).unwrap();
        assert_eq!(errors.message(), None);
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gpufec-sigmf-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn write(base: &Path, meta: &str, data: &[u8]) {
        let (m, d) = sigmf_paths(base);
        std::fs::write(m, meta).unwrap();
        std::fs::write(d, data).unwrap();
    }

    fn meta(datatype: &str, rate: &str) -> String {
        format!("{{\"global\": {{\"core:datatype\": \"{datatype}\", \"core:sample_rate\": {rate}, \"core:version\": \"1.0.0\"}}, \"captures\": [{{\"core:sample_start\": 0}}], \"annotations\": []}}")
    }

    fn error<T: WavItem>(path: &Path, rate: Option<f64>) -> String {
        match SigmfSource::<T>::new(path, rate) {
            Ok(_) => panic!("{} accepted", path.display()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_recording_written_is_read_back_with_its_metadata() {
        let d = dir("round");
        let samples: Vec<Complex32> = (0..10_000).map(|i| Complex32::new((i as f32 * 0.01).sin() * 0.9, (i as f32 * 0.013).cos() * 0.9)).collect();
        for datatype in ["cf32_le", "ci16_le", "ci8", "cf32_be", "cu8"] {
            let base = d.join(datatype);
            let meta = SigmfMeta { datatype: Datatype::parse(datatype).unwrap(), sample_rate: 38_400.0, frequency: Some(436.2e6), recorder: None };
            let sink = SigmfSink::<Complex32>::new(&base, meta.clone()).unwrap();
            record(samples.clone(), sink);
            let src = SigmfSource::<Complex32>::new(base.with_extension("sigmf-meta"), Some(38_400.0)).unwrap();
            assert_eq!(src.meta(), &SigmfMeta { recorder: Some(format!("gpufec {}", env!("CARGO_PKG_VERSION"))), ..meta.clone() });
            assert_eq!(src.samples(), Some(samples.len() as u64));
            let got: Vec<Complex32> = collect_from(|fg| fg.add(src).into());
            let step = match meta.datatype.value_bytes() {
                1 => 1.0 / 128.0,
                2 => 1.0 / 32_768.0,
                _ => 0.0,
            };
            assert_eq!(got.len(), samples.len());
            assert!(got.iter().zip(&samples).all(|(a, b)| (a - b).norm() <= step), "{datatype}");
        }
        // Real samples too.
        let base = d.join("real");
        let meta = SigmfMeta { datatype: Datatype::parse("ri16_le").unwrap(), sample_rate: 48_000.0, frequency: None, recorder: None };
        let real: Vec<f32> = samples.iter().map(|c| c.re).collect();
        record(real.clone(), SigmfSink::<f32>::new(&base, meta).unwrap());
        let got: Vec<f32> = collect_from(|fg| fg.add(SigmfSource::<f32>::new(&base, None).unwrap()).into());
        assert!(got.iter().zip(&real).all(|(a, b)| (a - b).abs() <= 1.0 / 32_768.0) && got.len() == real.len());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn bad_recordings_are_refused_naming_the_file() {
        let d = dir("bad");
        let base = d.join("rec");
        let data8 = [0u8; 80];
        // Missing files.
        let e = error::<Complex32>(&base, None);
        assert!(e.contains("cannot open") && e.contains("rec.sigmf-meta"), "{e}");
        std::fs::write(base.with_extension("sigmf-meta"), meta("cf32_le", "1e6")).unwrap();
        let e = error::<Complex32>(&base, None);
        assert!(e.contains("cannot open") && e.contains("rec.sigmf-data"), "{e}");
        for (meta, data, want) in [
            // A datatype that does not match the data's size, a truncated file.
            (meta("cf32_le", "1e6"), &data8[..76], "76 bytes of data are not a whole number of cf32_le samples (8 bytes each)"),
            (meta("ci16_le", "1e6"), &data8[..78], "not a whole number of ci16_le samples"),
            (meta("cf24_le", "1e6"), &data8[..], "SigMF datatype \"cf24_le\""),
            (meta("cf32_le", "0"), &data8[..], "core:sample_rate is 0"),
            (meta("cf32_le", "-1e6"), &data8[..], "core:sample_rate is -1000000.0"),
            (meta("cf32_le", "NaN"), &data8[..], "is not JSON"),
            (meta("rf32_le", "1e6"), &data8[..], "its samples are real (rf32_le), but the stream is complex"),
        ] {
            write(&base, &meta, data);
            let e = error::<Complex32>(&base, None);
            assert!(e.contains(want) && e.contains("rec.sigmf-"), "{want}: {e}");
        }
        write(&base, &meta("cf32_le", "1e6"), &data8);
        let e = error::<Complex32>(&base, Some(2e6));
        assert!(e.contains("recorded at 1000000 samples/s, but the chain is built for 2000000"), "{e}");
        let e = error::<f32>(&base, None);
        assert!(e.contains("complex (cf32_le), but the stream is real"), "{e}");
        // The sink refuses a datatype that does not hold the stream's items, and a bad rate.
        let m = SigmfMeta { datatype: Datatype::CF32_LE, sample_rate: f64::NAN, frequency: None, recorder: None };
        assert!(SigmfSink::<Complex32>::new(&base, m.clone()).is_err());
        let e = SigmfSink::<f32>::new(&base, SigmfMeta { sample_rate: 1.0, ..m }).err().unwrap().to_string();
        assert!(e.contains("holds complex samples, but the stream is real"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
