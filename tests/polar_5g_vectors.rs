//! Every MATLAB 5G Toolbox vector of `tests/data/polar-5g/` (see its
//! README): the polar encoder with and without the input interleaver and
//! with parity-check bits, rate matching, rate recovery, UCI segmentation,
//! and the whole DCI chain, encoded and decoded back.

use gpufec::codes::BatchDecoder;
use gpufec::codes::crc::CRC24C;
use gpufec::codes::polar::nr::{NrDecoder, NrPolar, ParityChecks, RateMatch, UciSegmentation, input_interleaver, mother_length, nr_code};
use gpufec::codes::polar::{Algorithm, CpuPolar, PolarSpec, codeword_of_info};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/polar-5g")
}

/// The vectors whose file names start with `prefix`, parsed; at least one.
fn vectors(prefix: &str) -> Vec<(String, Value)> {
    let mut found: Vec<(String, Value)> = std::fs::read_dir(dir())
        .expect("tests/data/polar-5g")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(prefix) && n.ends_with(".json")))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("a readable vector");
            (p.file_name().unwrap().to_string_lossy().into_owned(), serde_json::from_str(&text).expect("valid JSON"))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!found.is_empty(), "no {prefix} vectors");
    found
}

fn num(v: &Value, key: &str) -> usize {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} is not a number")) as usize
}

/// A bit string of text as bits.
fn bits_of(s: &Value) -> Vec<u8> {
    s.as_str().expect("a bit string").bytes().map(|c| c - b'0').collect()
}

/// A field holding one bit string or a list of them (one per block).
fn rows(v: &Value) -> Vec<Vec<u8>> {
    match v.as_array() {
        Some(list) => list.iter().map(bits_of).collect(),
        None => vec![bits_of(v)],
    }
}

#[test]
fn encoder_vectors_with_and_without_interleaver_and_parity_checks() {
    let mut kinds = std::collections::BTreeSet::new();
    for (name, v) in vectors("polarencoder_") {
        let (k, e, n_max, il) = (num(&v, "K"), num(&v, "E"), num(&v, "nMax") as u32, num(&v, "iIL") == 1);
        let c = bits_of(&v["in"]);
        let want = bits_of(&v["outd"]);
        assert_eq!(c.len(), k, "{name}");
        let n = mother_length(k, e, n_max).unwrap();
        assert_eq!(n, want.len(), "{name}: N");
        // §6.3.1.3.1: K of 18..=25 carries three parity checks.
        let pc = if (18..=25).contains(&k) { ParityChecks { total: 3, weight: usize::from(e + 3 > k + 192) } } else { ParityChecks::default() };
        let code = nr_code(k, e, n, pc).unwrap();
        let info: Vec<u8> = if il { input_interleaver(k).unwrap().iter().map(|&p| c[usize::from(p)]).collect() } else { c };
        let mut x = vec![0; n];
        codeword_of_info(&PolarSpec::plain(Arc::new(code)), &info, &mut x);
        assert_eq!(x, want, "{name}");
        kinds.insert((il, pc.total, pc.weight));
    }
    // The set covers the interleaver, the parity checks, and the
    // minimum-weight parity check.
    assert!(kinds.contains(&(true, 0, 0)) && kinds.contains(&(false, 3, 0)) && kinds.contains(&(false, 3, 1)) && kinds.contains(&(false, 0, 0)), "{kinds:?}");
}

#[test]
fn rate_matching_vectors() {
    for (name, v) in vectors("polarratematch_") {
        let rm = RateMatch::new(num(&v, "K"), num(&v, "E"), num(&v, "N"), num(&v, "iBIL") == 1).unwrap();
        let mut sent = Vec::new();
        rm.select(&bits_of(&v["in"]), &mut sent).unwrap();
        assert_eq!(sent, bits_of(&v["outd"]), "{name} ({})", rm.selection().name());
    }
}

#[test]
fn rate_recovery_vectors() {
    for (name, v) in vectors("polarRM_recover_") {
        let rm = RateMatch::new(num(&v, "K"), num(&v, "E"), num(&v, "N"), num(&v, "iBIL") == 1).unwrap();
        let llrs: Vec<f32> = bits_of(&v["in"]).iter().map(|&b| 1.0 - 2.0 * f32::from(b)).collect();
        let mut back = vec![0.0f32; rm.n()];
        rm.recover(&llrs, &mut back).unwrap();
        let got: Vec<u8> = back.iter().map(|&l| u8::from(l < 0.0)).collect();
        assert_eq!(got, bits_of(&v["outd"]), "{name} ({})", rm.selection().name());
    }
}

#[test]
fn uci_segmentation_vectors() {
    for (name, v) in vectors("polar_cbsegment_") {
        let (a, e_uci) = (num(&v, "A"), num(&v, "Euci"));
        let seg = UciSegmentation::new(a, e_uci).unwrap();
        assert_eq!((seg.blocks(), seg.block_e()), (num(&v, "C"), num(&v, "Er")), "{name}");
        let chain = NrPolar::uci(a, e_uci).unwrap();
        let mut info = Vec::new();
        chain.blocks_info(&bits_of(&v["in"]), &mut info).unwrap();
        let want = rows(&v["outd"]);
        assert_eq!(info.chunks(seg.block_k()).map(<[u8]>::to_vec).collect::<Vec<_>>(), want, "{name}");
    }
}

#[test]
fn dci_chain_vectors_encode_and_decode_back() {
    for (name, v) in vectors("nrDCIencode_") {
        let (a, e, rnti) = (num(&v, "A"), num(&v, "E"), num(&v, "rnti") as u16);
        let payload = bits_of(&v["dciBits"]);
        let chain = NrPolar::dci(a, e, rnti).unwrap();
        // The CRC of the vector: 24 ones and the payload, RNTI on the last 16.
        let mut with_ones = vec![1u8; 24];
        with_ones.extend_from_slice(&payload);
        with_ones.resize(24 + a.max(12), 0);
        assert_eq!(CRC24C.parity(&with_ones) ^ u32::from(rnti), num(&v, "crc") as u32, "{name}: CRC");
        let mut sent = Vec::new();
        chain.encode(&payload, &mut sent).unwrap();
        assert_eq!(sent, bits_of(&v["dciCW"]), "{name}: {}", chain.describe());
        // The clean codeword decodes back to the DCI bits, with its check.
        let llrs: Vec<f32> = sent.iter().map(|&b| 1.0 - 2.0 * f32::from(b)).collect();
        for algorithm in [Algorithm::Sc, Algorithm::Scl { list: 8 }] {
            let mut dec = NrDecoder::new(chain.clone(), |spec| Ok(Box::new(CpuPolar::<f32>::new(spec.clone(), algorithm, 1)?))).unwrap();
            let mut out = gpufec::codes::Decoded::default();
            dec.decode(&gpufec::codes::Batch::uniform(&llrs, e).unwrap(), &mut out).unwrap();
            assert_eq!(out.bits, payload, "{name}: {algorithm:?}");
            assert_eq!(out.reports[0].check, Some(true), "{name}: {algorithm:?}");
        }
        // Another RNTI's decoder finds the bits but not the check.
        let other = NrPolar::dci(a, e, rnti ^ 1).unwrap();
        let mut dec = NrDecoder::new(other, |spec| Ok(Box::new(CpuPolar::<f32>::new(spec.clone(), Algorithm::Sc, 1)?))).unwrap();
        let mut out = gpufec::codes::Decoded::default();
        dec.decode(&gpufec::codes::Batch::uniform(&llrs, e).unwrap(), &mut out).unwrap();
        assert_eq!(out.reports[0].check, Some(false), "{name}: wrong RNTI");
    }
}
