//! The receive chain on a real recording: BY70-1's 9600-baud BPSK downlink
//! (`tests/data/satellite/`), WAV to soft bits, then, here in the test, the
//! CPU Viterbi decoder, the differential decoding of its bits and a search
//! for the CCSDS attached sync marker.

use gpufec::codes::BatchDecoder;
use gpufec::codes::conv::*;
use gpufec::dsp::*;
use std::sync::Arc;

mod common;

const WAV: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/satellite/by70-1.wav");
/// The 24 frames gr-satellites decodes from the recording (with Reed–Solomon).
const FRAMES: &str = include_str!("data/satellite/by70-1.frames.hex");
const ASM: u32 = 0x1ACF_FC1D;
/// A frame on the air: the marker and a 146-byte Reed–Solomon codeword.
const FRAME_BITS: usize = 32 + 146 * 8;
/// The frame's data before the codeword's 32 parity bytes.
const DATA_BYTES: usize = 114;

/// The recording through the receiver: soft bits after differential decoding.
fn receive(chunk: usize) -> Vec<f32> {
    let mut wav = WavReader::new(std::fs::File::open(WAV).unwrap()).unwrap();
    let format = wav.format();
    assert_eq!((format.channels, format.sample_rate), (1, 48_000));
    let mut r2c = RealToComplex::new(48_000.0, 11_500.0, 8_000.0, 1).unwrap();
    let mut rx = PskReceiver::new(ReceiverSettings { sps: 5, ..Default::default() }).unwrap();
    let (mut audio, mut base, mut llrs) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        audio.clear();
        if wav.read(&mut audio, chunk).unwrap() == 0 {
            break;
        }
        base.clear();
        r2c.process(&audio, &mut base);
        rx.process(&base, &mut llrs);
    }
    llrs
}

/// Viterbi-decodes the soft bits from pair offset `offset`, the second
/// output of each pair inverted as CCSDS sends it.
fn viterbi(llrs: &[f32], offset: usize) -> Vec<u8> {
    let trellis = Arc::new(Trellis::new(&ConvCode::new(7, &[0o171, 0o133]).unwrap()));
    let mut soft: Vec<f32> = llrs[offset..].to_vec();
    soft.truncate(soft.len() / 2 * 2);
    for pair in soft.chunks_exact_mut(2) {
        pair[1] = -pair[1];
    }
    let tile = TileConfig::new(256, 32, 64, Traceback::Serial).unwrap();
    let mut tiler = Tiler::new(tile, 2);
    let mut tiles = Vec::new();
    tiler.push(&soft, &mut tiles);
    tiler.finish(&mut tiles).unwrap();
    let mut dec = CpuViterbi::<f32>::new(trellis, ViterbiMode::Tiled(tile), 2).unwrap();
    let mut bits = Vec::new();
    dec.decode_all(&tiles, &mut bits).unwrap();
    bits.truncate(soft.len() / 2);
    bits
}

/// Undoes the differential precoding (NRZ-M) the sender applied before its
/// convolutional encoder: b_k = d_k ⊕ d_{k−1}. It also takes away the
/// carrier loop's 180° ambiguity, which inverts every decoded bit.
fn differential(bits: &[u8]) -> Vec<u8> {
    let mut last = 0;
    bits.iter().map(|&d| { let b = d ^ last; last = d; b }).collect()
}

/// Where the marker starts in `bits`, with at most `errors` bits wrong.
fn markers(bits: &[u8], errors: u32) -> Vec<usize> {
    let mut word = 0u32;
    let mut found = Vec::new();
    for (i, &b) in bits.iter().enumerate() {
        word = (word << 1) | b as u32;
        if i >= 31 && (word ^ ASM).count_ones() <= errors {
            found.push(i - 31);
        }
    }
    found
}

/// The CCSDS randomizer's sequence (x^8+x^7+x^5+x^3+1 from all ones), a
/// byte per step: here only to read the known frames' bytes without a
/// Reed–Solomon decoder, so frames received without a bit error match.
fn randomizer(bytes: usize) -> Vec<u8> {
    let mut state = [1u8; 8];
    (0..bytes)
        .map(|_| {
            (0..8).fold(0u8, |byte, _| {
                let out = state[0];
                let next = state[7] ^ state[5] ^ state[3] ^ state[0];
                state.rotate_left(1);
                state[7] = next;
                (byte << 1) | out
            })
        })
        .collect()
}

/// The data bytes after the marker at `at`, derandomized, as hex.
fn frame_hex(bits: &[u8], at: usize) -> Option<String> {
    let start = at + 32;
    let data = bits.get(start..start + DATA_BYTES * 8)?;
    let pn = randomizer(DATA_BYTES);
    Some(data.chunks_exact(8).zip(pn).map(|(b, p)| format!("{:02x}", b.iter().fold(0u8, |acc, &x| (acc << 1) | x) ^ p)).collect())
}

#[test]
fn by70_1_frames_are_found_after_the_receiver_and_viterbi() {
    let llrs = receive(4096);
    // 12.7 s at 9600 baud.
    assert!((120_000..125_000).contains(&llrs.len()), "{} soft bits", llrs.len());
    let (offset, found) = (0..2)
        .map(|offset| (offset, markers(&differential(&viterbi(&llrs, offset)), 3)))
        .max_by_key(|(_, found)| found.len())
        .unwrap();
    let bits = differential(&viterbi(&llrs, offset));
    let known: Vec<&str> = FRAMES.lines().collect();
    let exact: std::collections::BTreeSet<String> =
        found.iter().filter_map(|&at| frame_hex(&bits, at)).filter(|f| known.contains(&f.as_str())).collect();
    eprintln!(
        "pair offset {offset}: {} markers at {found:?}; {} of the {} known frames received without a bit error",
        found.len(),
        exact.len(),
        known.len()
    );
    assert_eq!(randomizer(4), vec![0xFF, 0x48, 0x0E, 0xC0]);
    assert!(found.len() >= 22, "{} markers found", found.len());
    // Markers a whole frame apart at least: none inside a frame.
    assert!(found.windows(2).all(|w| w[1] - w[0] >= FRAME_BITS), "{found:?}");
    assert_eq!(exact.len(), known.len(), "known frames received without error");
    // The same soft bits whatever the pieces the recording is read in.
    assert_eq!(receive(1000), llrs);
}


#[test]
fn the_demod_flowgraph_writes_the_receivers_soft_bits() {
    let out = std::env::temp_dir().join(format!("gpufec-by70-{}.f32", std::process::id()));
    let set = format!("vars.llrs={}", out.display());
    common::run_file("flowgraphs/by70-1_demod.toml", &[&set]).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    let llrs: Vec<f32> = bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    assert_eq!(llrs, receive(4096));
}
