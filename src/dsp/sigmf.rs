//! SigMF recordings (the `core` namespace of SigMF 1.x): the metadata of a
//! `.sigmf-meta` file read and written, the samples of its `.sigmf-data`
//! file in any of the core datatypes, and the pair of paths a recording is.

use crate::codes::error::{CodeError, CodeResult, invalid};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Bytes a `.sigmf-meta` file may have (its annotations can be many).
pub const MAX_META_BYTES: u64 = 16 << 20;
/// The SigMF version the metadata written says it follows.
pub const SIGMF_VERSION: &str = "1.0.0";
/// The extension of the metadata file.
pub const META_EXTENSION: &str = "sigmf-meta";
/// The extension of the data file.
pub const DATA_EXTENSION: &str = "sigmf-data";

/// The two files of the recording `path` names: its base (`rec`), or either
/// of its files (`rec.sigmf-meta`, `rec.sigmf-data`).
///
/// ```
/// use gpufec::dsp::sigmf_paths;
/// let (meta, data) = sigmf_paths("pass/rec.sigmf-data".as_ref());
/// assert_eq!((meta.to_str(), data.to_str()), (Some("pass/rec.sigmf-meta"), Some("pass/rec.sigmf-data")));
/// ```
pub fn sigmf_paths(path: &Path) -> (PathBuf, PathBuf) {
    let name = path.to_string_lossy();
    let base = [META_EXTENSION, DATA_EXTENSION]
        .iter()
        .find_map(|ext| name.strip_suffix(&format!(".{ext}")))
        .unwrap_or(&name);
    (PathBuf::from(format!("{base}.{META_EXTENSION}")), PathBuf::from(format!("{base}.{DATA_EXTENSION}")))
}

/// The number type of a datatype's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    /// IEEE float, 32 bits.
    F32,
    /// IEEE float, 64 bits.
    F64,
    /// Signed integers, scaled by 2^−31 to −1..1.
    I32,
    /// Signed integers, scaled by 2^−15.
    I16,
    /// Signed integers, scaled by 2^−7.
    I8,
    /// Unsigned integers, offset by 2^31 and scaled by 2^−31.
    U32,
    /// Unsigned integers, offset by 2^15 and scaled by 2^−15.
    U16,
    /// Unsigned integers, offset by 128 and scaled by 2^−7 (an RTL-SDR's bytes).
    U8,
}

/// Every scalar, by its name in a datatype, and its bytes.
const SCALARS: [(&str, Scalar, usize); 8] = [
    ("f32", Scalar::F32, 4),
    ("f64", Scalar::F64, 8),
    ("i32", Scalar::I32, 4),
    ("i16", Scalar::I16, 2),
    ("i8", Scalar::I8, 1),
    ("u32", Scalar::U32, 4),
    ("u16", Scalar::U16, 2),
    ("u8", Scalar::U8, 1),
];

/// A SigMF datatype: complex or real, the number type, and the byte order
/// (`cf32_le`, `ci16_le`, `ci8`, `rf32_le`, `ri16_be`, `cu8`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Datatype {
    /// I and Q (two values a sample) or real (one).
    pub complex: bool,
    /// The number type.
    pub scalar: Scalar,
    /// Big-endian (`_be`); 8-bit types have no byte order.
    pub big_endian: bool,
}

impl Datatype {
    /// 32-bit float complex samples, little-endian: what the sink writes by default.
    pub const CF32_LE: Datatype = Datatype { complex: true, scalar: Scalar::F32, big_endian: false };

    /// Parses a datatype's name; an unknown one is an error listing the forms.
    pub fn parse(name: &str) -> CodeResult<Self> {
        let unknown = || {
            CodeError::Unsupported(format!(
                "SigMF datatype \"{name}\": expected c or r, then f32, f64, i32, i16, i8, u32, u16 or u8, then _le or _be for the wider types (cf32_le, ci16_le, ci8, rf32_le, ...)"
            ))
        };
        let complex = match name.as_bytes().first() {
            Some(b'c') => true,
            Some(b'r') => false,
            _ => return Err(unknown()),
        };
        let rest = &name[1..];
        let (number, order) = rest.split_once('_').map_or((rest, None), |(n, o)| (n, Some(o)));
        let &(_, scalar, bytes) = SCALARS.iter().find(|(n, _, _)| *n == number).ok_or_else(unknown)?;
        let big_endian = match (bytes, order) {
            (1, None) => false,
            (b, Some("le")) if b > 1 => false,
            (b, Some("be")) if b > 1 => true,
            _ => return Err(unknown()),
        };
        Ok(Self { complex, scalar, big_endian })
    }

    /// Its name in SigMF metadata.
    pub fn name(self) -> String {
        let (number, _, bytes) = SCALARS.iter().find(|(_, s, _)| *s == self.scalar).expect("every scalar is listed");
        let order = match (bytes, self.big_endian) {
            (1, _) => "",
            (_, false) => "_le",
            (_, true) => "_be",
        };
        format!("{}{number}{order}", if self.complex { 'c' } else { 'r' })
    }

    /// Values a sample has: 2 (I, Q) or 1.
    pub fn values(self) -> usize {
        if self.complex { 2 } else { 1 }
    }

    /// Bytes of one value.
    pub fn value_bytes(self) -> usize {
        SCALARS.iter().find(|(_, s, _)| *s == self.scalar).expect("every scalar is listed").2
    }

    /// Bytes of one sample.
    pub fn sample_bytes(self) -> usize {
        self.values() * self.value_bytes()
    }

    /// Appends the values of `bytes` (whole values) to `out`, integers
    /// scaled to −1..1.
    pub fn decode(self, bytes: &[u8], out: &mut Vec<f32>) {
        macro_rules! values {
            ($t:ty, $map:expr) => {{
                const N: usize = size_of::<$t>();
                let order = if self.big_endian { <$t>::from_be_bytes } else { <$t>::from_le_bytes };
                out.extend(bytes.chunks_exact(N).map(|b| $map(order(b.try_into().expect("N bytes")))))
            }};
        }
        match self.scalar {
            Scalar::F32 => values!(f32, |v: f32| v),
            Scalar::F64 => values!(f64, |v: f64| v as f32),
            Scalar::I32 => values!(i32, |v: i32| (v as f64 / 2_147_483_648.0) as f32),
            Scalar::I16 => values!(i16, |v: i16| v as f32 / 32_768.0),
            Scalar::I8 => values!(i8, |v: i8| v as f32 / 128.0),
            Scalar::U32 => values!(u32, |v: u32| ((v as f64 - 2_147_483_648.0) / 2_147_483_648.0) as f32),
            Scalar::U16 => values!(u16, |v: u16| (v as f32 - 32_768.0) / 32_768.0),
            Scalar::U8 => values!(u8, |v: u8| (v as f32 - 128.0) / 128.0),
        }
    }

    /// Appends the bytes of `values` to `out`: integers scaled from −1..1,
    /// rounded and saturated. A value that is not finite is an error naming
    /// its place (`first` is the place of `values[0]` in the stream of values).
    pub fn encode(self, values: &[f32], first: u64, out: &mut Vec<u8>) -> CodeResult<()> {
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            let at = first + i as u64;
            return Err(invalid!("sample {} of the stream is not finite", at / self.values() as u64));
        }
        macro_rules! values {
            ($t:ty, $map:expr) => {{
                let order = if self.big_endian { <$t>::to_be_bytes } else { <$t>::to_le_bytes };
                for &v in values {
                    out.extend_from_slice(&order($map(v)));
                }
            }};
        }
        // Integers: v·2^(bits−1), rounded, saturated (the `as` cast saturates), offset for the unsigned ones.
        let int = |v: f32, full: f64| (v as f64 * full).round();
        match self.scalar {
            Scalar::F32 => values!(f32, |v: f32| v),
            Scalar::F64 => values!(f64, |v: f32| v as f64),
            Scalar::I32 => values!(i32, |v| int(v, 2_147_483_648.0) as i32),
            Scalar::I16 => values!(i16, |v| int(v, 32_768.0) as i16),
            Scalar::I8 => values!(i8, |v| int(v, 128.0) as i8),
            Scalar::U32 => values!(u32, |v| (int(v, 2_147_483_648.0) + 2_147_483_648.0) as u32),
            Scalar::U16 => values!(u16, |v| (int(v, 32_768.0) + 32_768.0) as u16),
            Scalar::U8 => values!(u8, |v| (int(v, 128.0) + 128.0) as u8),
        }
        Ok(())
    }
}

/// What a recording's metadata says of its samples.
#[derive(Debug, Clone, PartialEq)]
pub struct SigmfMeta {
    /// How the data file holds the samples (`core:datatype`).
    pub datatype: Datatype,
    /// Samples per second (`core:sample_rate`), finite and positive.
    pub sample_rate: f64,
    /// The centre frequency of the first capture, Hz (`core:frequency`), if given.
    pub frequency: Option<f64>,
    /// What made the recording (`core:recorder`), if given.
    pub recorder: Option<String>,
}

impl SigmfMeta {
    /// Reads the metadata from the JSON of a `.sigmf-meta` file. Its
    /// `global` object must give `core:datatype` (one the reader knows) and
    /// `core:sample_rate` (finite, above 0); `core:num_channels`, if given,
    /// must be 1. The first capture's `core:frequency` is the centre
    /// frequency.
    pub fn parse(json: &str) -> CodeResult<Self> {
        let root: serde_json::Value = serde_json::from_str(json).map_err(|e| invalid!("the metadata is not JSON: {e}"))?;
        let global = root.get("global").and_then(|g| g.as_object()).ok_or_else(|| invalid!("the metadata has no \"global\" object"))?;
        let datatype = match global.get("core:datatype") {
            Some(serde_json::Value::String(name)) => Datatype::parse(name)?,
            Some(other) => return Err(invalid!("core:datatype is {other}, not a string such as \"cf32_le\"")),
            None => return Err(invalid!("the metadata gives no core:datatype")),
        };
        let sample_rate = match global.get("core:sample_rate") {
            Some(serde_json::Value::Number(n)) => n.as_f64().filter(|r| r.is_finite() && *r > 0.0).ok_or_else(|| invalid!("core:sample_rate is {n}: a sample rate is a number above 0"))?,
            Some(other) => return Err(invalid!("core:sample_rate is {other}: a sample rate is a number above 0")),
            None => return Err(invalid!("the metadata gives no core:sample_rate")),
        };
        if let Some(channels) = global.get("core:num_channels").filter(|c| c.as_u64() != Some(1)) {
            return Err(invalid!("core:num_channels is {channels}: only single-channel recordings are read"));
        }
        let capture = root.get("captures").and_then(|c| c.as_array()).and_then(|c| c.first());
        let frequency = match capture.and_then(|c| c.get("core:frequency")) {
            None => None,
            Some(f) => Some(f.as_f64().filter(|f| f.is_finite()).ok_or_else(|| invalid!("core:frequency is {f}, not a number"))?),
        };
        let recorder = global.get("core:recorder").and_then(|r| r.as_str()).map(str::to_string);
        Ok(Self { datatype, sample_rate, frequency, recorder })
    }

    /// The metadata as the JSON of a `.sigmf-meta` file: the datatype,
    /// sample rate, SigMF version and recorder in `global`, one capture from
    /// sample 0 with the frequency if there is one, no annotations.
    pub fn to_json(&self) -> String {
        let mut global = serde_json::json!({
            "core:datatype": self.datatype.name(),
            "core:sample_rate": self.sample_rate,
            "core:version": SIGMF_VERSION,
        });
        if let Some(recorder) = &self.recorder {
            global["core:recorder"] = recorder.clone().into();
        }
        let mut capture = serde_json::json!({ "core:sample_start": 0 });
        if let Some(f) = self.frequency {
            capture["core:frequency"] = f.into();
        }
        let meta = serde_json::json!({ "global": global, "captures": [capture], "annotations": [] });
        serde_json::to_string_pretty(&meta).expect("plain JSON values serialize") + "\n"
    }
}

/// Reads the samples of a `.sigmf-data` file or stream as values (I, Q,
/// I, Q, ... or real), scaled as [`Datatype::decode`] does.
///
/// ```
/// use gpufec::dsp::{Datatype, SigmfReader};
/// let data = [0x00u8, 0x40, 0x00, 0xc0]; // ci16_le: 0.5, -0.5
/// let mut reader = SigmfReader::new(&data[..], Datatype::parse("ci16_le")?, Some(4))?;
/// let mut out = Vec::new();
/// assert_eq!(reader.read(&mut out, 8)?, 2);
/// assert_eq!(out, vec![0.5, -0.5]);
/// # Ok::<(), gpufec::codes::CodeError>(())
/// ```
pub struct SigmfReader<R: Read> {
    reader: R,
    datatype: Datatype,
    /// Bytes left of a file of known length; `None` for a stream (a FIFO), read to its end.
    left: Option<u64>,
    bytes: Vec<u8>,
    /// Bytes of a stream's part sample, at the start of `bytes`, waiting for the rest.
    held: usize,
}

impl<R: Read> SigmfReader<R> {
    /// A reader of `bytes` bytes of `datatype` samples, or of a stream to
    /// its end (`None`); a length that is not whole samples is
    /// [`CodeError::Truncated`], naming both.
    pub fn new(reader: R, datatype: Datatype, bytes: Option<u64>) -> CodeResult<Self> {
        let sample = datatype.sample_bytes() as u64;
        if let Some(bytes) = bytes.filter(|b| b % sample != 0) {
            return Err(truncated(bytes, datatype));
        }
        Ok(Self { reader, datatype, left: bytes, bytes: Vec::new(), held: 0 })
    }

    /// Samples left to read, if the length is known.
    pub fn samples_left(&self) -> Option<u64> {
        self.left.map(|b| b / self.datatype.sample_bytes() as u64)
    }

    /// Appends up to `max` values (whole samples) to `out`; returns how
    /// many, 0 at the end. A file that ends before its length, or a stream
    /// that ends inside a sample, is [`CodeError::Truncated`].
    pub fn read(&mut self, out: &mut Vec<f32>, max: usize) -> CodeResult<usize> {
        let sample = self.datatype.sample_bytes();
        let mut want = max / self.datatype.values() * sample;
        if let Some(left) = self.left {
            want = want.min(usize::try_from(left).unwrap_or(usize::MAX));
        }
        if want < sample {
            return Ok(0);
        }
        let failed = |e: std::io::Error| invalid!("reading the data file: {e}");
        self.bytes.resize(want, 0);
        let whole = match self.left.as_mut() {
            Some(left) => {
                self.reader.read_exact(&mut self.bytes).map_err(|e| match e.kind() {
                    std::io::ErrorKind::UnexpectedEof => CodeError::Truncated("the data file ended before the length it had when it was opened".into()),
                    _ => failed(e),
                })?;
                *left -= want as u64;
                want
            }
            None => loop {
                let n = self.reader.read(&mut self.bytes[self.held..]).map_err(failed)?;
                self.held += n;
                if n == 0 && self.held > 0 {
                    return Err(truncated(self.held as u64, self.datatype));
                }
                if n == 0 || self.held >= sample {
                    break self.held / sample * sample;
                }
            },
        };
        self.datatype.decode(&self.bytes[..whole], out);
        if self.left.is_none() {
            self.bytes.copy_within(whole..self.held, 0);
            self.held -= whole;
        }
        Ok(whole / self.datatype.value_bytes())
    }
}

/// The error of data that is not whole samples.
fn truncated(bytes: u64, datatype: Datatype) -> CodeError {
    CodeError::Truncated(format!(
        "{bytes} bytes of data are not a whole number of {} samples ({} bytes each): the file is cut short, or the metadata's datatype is not the data's",
        datatype.name(),
        datatype.sample_bytes()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datatype_names_round_trip_and_unknown_ones_are_refused() {
        for name in ["cf32_le", "cf32_be", "ci16_le", "ci8", "cu8", "rf32_le", "ri16_le", "ri16_be", "rf64_le", "ci32_le", "cu16_be", "ru32_le", "ri8", "ru8"] {
            assert_eq!(Datatype::parse(name).unwrap().name(), name);
        }
        for name in ["", "cf32", "ci8_le", "xf32_le", "cf16_le", "cf32_me", "c", "rf32_le_x"] {
            let e = Datatype::parse(name).unwrap_err().to_string();
            assert!(e.contains(&format!("\"{name}\"")) && e.contains("cf32_le"), "{name}: {e}");
        }
        assert_eq!(Datatype::parse("ci16_le").unwrap().sample_bytes(), 4);
        assert_eq!(Datatype::parse("rf64_be").unwrap().sample_bytes(), 8);
    }

    #[test]
    fn every_datatype_encodes_and_decodes_within_its_step() {
        let values = [0.0f32, 0.5, -0.5, 0.999, -1.0, 0.123_456, -0.75, 0.25];
        for scalar in SCALARS.iter().map(|s| s.1) {
            for big_endian in [false, true] {
                let dt = Datatype { complex: true, scalar, big_endian };
                let mut bytes = Vec::new();
                dt.encode(&values, 0, &mut bytes).unwrap();
                assert_eq!(bytes.len(), values.len() * dt.value_bytes());
                let mut back = Vec::new();
                dt.decode(&bytes, &mut back);
                let step = match dt.value_bytes() {
                    1 => 1.0 / 128.0,
                    2 => 1.0 / 32_768.0,
                    _ => 1e-6,
                };
                for (a, b) in values.iter().zip(&back) {
                    assert!((a - b).abs() <= step, "{}: {a} came back {b}", dt.name());
                }
            }
        }
        // Saturated, not wrapped; the byte order as named.
        let mut bytes = Vec::new();
        Datatype::parse("ri16_be").unwrap().encode(&[2.0, -2.0], 0, &mut bytes).unwrap();
        assert_eq!(bytes, [0x7f, 0xff, 0x80, 0x00]);
        let e = Datatype::CF32_LE.encode(&[0.0, 0.0, 1.0, f32::NAN], 10, &mut bytes).unwrap_err().to_string();
        assert!(e.contains("sample 6 of the stream is not finite"), "{e}");
    }

    #[test]
    fn metadata_round_trips_and_bad_metadata_is_refused() {
        let meta = SigmfMeta { datatype: Datatype::parse("ci16_le").unwrap(), sample_rate: 38_400.0, frequency: Some(436.2e6), recorder: Some("gpufec 0.1.0".into()) };
        assert_eq!(SigmfMeta::parse(&meta.to_json()).unwrap(), meta);
        let bare = SigmfMeta { frequency: None, recorder: None, ..meta.clone() };
        assert_eq!(SigmfMeta::parse(&bare.to_json()).unwrap(), bare);
        let with = |global: &str| format!("{{\"global\": {{{global}}}, \"captures\": [{{\"core:sample_start\": 0, \"core:frequency\": 1e6}}]}}");
        for (json, want) in [
            (with("\"core:datatype\": \"cf32_le\", \"core:sample_rate\": 0"), "core:sample_rate is 0: a sample rate is a number above 0"),
            (with("\"core:datatype\": \"cf32_le\", \"core:sample_rate\": -48000"), "core:sample_rate is -48000"),
            (with("\"core:datatype\": \"cf32_le\", \"core:sample_rate\": NaN"), "the metadata is not JSON"),
            (with("\"core:datatype\": \"cf32_le\", \"core:sample_rate\": \"fast\""), "core:sample_rate is \"fast\""),
            (with("\"core:datatype\": \"cf32_le\""), "gives no core:sample_rate"),
            (with("\"core:sample_rate\": 1e6"), "gives no core:datatype"),
            (with("\"core:datatype\": \"cf12_le\", \"core:sample_rate\": 1e6"), "SigMF datatype \"cf12_le\""),
            (with("\"core:datatype\": \"cf32_le\", \"core:sample_rate\": 1e6, \"core:num_channels\": 2"), "core:num_channels is 2"),
            ("[1, 2]".to_string(), "no \"global\" object"),
        ] {
            let e = SigmfMeta::parse(&json).unwrap_err().to_string();
            assert!(e.contains(want), "{json}: {e}");
        }
    }

    #[test]
    fn the_reader_gives_whole_samples_and_refuses_a_partial_one() {
        let dt = Datatype::CF32_LE;
        let mut data = Vec::new();
        dt.encode(&[0.5, -0.5, 0.25, 0.125, 1.0, 0.0], 0, &mut data).unwrap();
        let mut reader = SigmfReader::new(&data[..], dt, Some(data.len() as u64)).unwrap();
        assert_eq!(reader.samples_left(), Some(3));
        let mut out = Vec::new();
        assert_eq!(reader.read(&mut out, 3).unwrap(), 2, "whole samples only");
        assert_eq!(reader.read(&mut out, 100).unwrap(), 4);
        assert_eq!(reader.read(&mut out, 100).unwrap(), 0);
        assert_eq!(out, [0.5, -0.5, 0.25, 0.125, 1.0, 0.0]);
        let Err(e) = SigmfReader::new(&data[..20], dt, Some(20)) else { panic!("20 bytes of cf32 read") };
        assert!(matches!(e, CodeError::Truncated(_)) && e.to_string().contains("not a whole number of cf32_le samples (8 bytes each)"), "{e}");
        // Shorter than said when opened.
        let mut reader = SigmfReader::new(&data[..16], dt, Some(24)).unwrap();
        assert!(matches!(reader.read(&mut out, 100), Err(CodeError::Truncated(_))));
        // A stream in pieces of any size (a FIFO's reads): the same values, a part sample kept for the next read.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = buf.len().min(3).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut reader = SigmfReader::new(Trickle(&data), dt, None).unwrap();
        let mut got = Vec::new();
        while reader.read(&mut got, 4).unwrap() > 0 {}
        assert_eq!(got, [0.5, -0.5, 0.25, 0.125, 1.0, 0.0]);
        let mut reader = SigmfReader::new(Trickle(&data[..20]), dt, None).unwrap();
        let e = loop {
            match reader.read(&mut got, 4) {
                Ok(0) => panic!("a stream cut inside a sample ended cleanly"),
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        assert!(e.to_string().contains("4 bytes of data are not a whole number"), "{e}");
    }

    #[test]
    fn a_recording_is_named_by_its_base_or_either_file() {
        for p in ["a/rec", "a/rec.sigmf-meta", "a/rec.sigmf-data"] {
            assert_eq!(sigmf_paths(p.as_ref()), (PathBuf::from("a/rec.sigmf-meta"), PathBuf::from("a/rec.sigmf-data")));
        }
        assert_eq!(sigmf_paths("x.cf32".as_ref()).1, PathBuf::from("x.cf32.sigmf-data"));
    }
}
