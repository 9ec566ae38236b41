//! BPSK over AWGN on the GPU (`GpuBpskAwgn`, the `BpskAwgn` block with
//! `backend = "gpu"`) sends the host channel's LLRs bit for bit, call after
//! call, i8 and f32, pieces of any length and stream positions that start
//! inside a group of the noise recipe; a bad channel bit is refused as the
//! host refuses it; a flowgraph counts the same errors with either channel.
//!
//! These tests need a GPU. Without one they say `SKIPPED <name>` and pass,
//! unless `GPUFEC_REQUIRE_GPU=1`.

use gpufec::codes::channel::{BpskAwgn, Quantizer, noise_variance};
use gpufec::codes::llr::Llr;
use gpufec::gpu::GpuBpskAwgn;

mod common;

/// Calls of these lengths follow each other: short ones inside a group, one
/// over a piece (4 Mi), one over two pieces, odd ends.
const CALLS: [usize; 7] = [1, 63, 1000, 4_194_305, 8_388_609, 17, 100_003];

fn bits(n: usize, salt: u64) -> Vec<u8> {
    (0..n as u64).map(|i| ((i.wrapping_add(salt).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 63) & 1) as u8).collect()
}

fn same_as_host<T: Llr>(poison: T, ebn0: f64, rate: f64, seed: u64) {
    let q = Quantizer::matched(noise_variance(ebn0, rate).unwrap()).unwrap();
    let mut host = BpskAwgn::<T>::with_quantizer(ebn0, rate, seed, q).unwrap();
    let mut gpu = GpuBpskAwgn::<T>::new(0, ebn0, rate, seed, q).unwrap();
    for (c, &n) in CALLS.iter().enumerate() {
        let b = bits(n, c as u64);
        let (mut want, mut got) = (vec![poison; n], vec![poison; n]);
        host.transmit_into(&b, &mut want).unwrap();
        gpu.transmit_into(&b, &mut got).unwrap();
        if let Some(j) = (0..n).find(|&j| want[j] != got[j]) {
            panic!("{}: call {c} ({n} bits) differs first at {j}: host {:?}, GPU {:?}", T::NAME, want[j], got[j]);
        }
    }
}

#[test]
fn the_gpu_channel_sends_the_host_channels_llrs() {
    if !common::have_gpu("the_gpu_channel_sends_the_host_channels_llrs") {
        return;
    }
    // Poison values no LLR of these points takes, so that an item left unwritten shows.
    same_as_host::<i8>(-128, 0.75, 1.0 / 3.0, 1);
    same_as_host::<i8>(-128, 6.0, 0.5, u64::MAX);
    same_as_host::<f32>(f32::NAN, 2.0, 0.75, 42);
}

#[test]
fn llrs_read_and_written_in_place_are_the_host_channels() {
    if !common::have_gpu("llrs_read_and_written_in_place_are_the_host_channels") {
        return;
    }
    // Buffers kept for the whole run and refilled call after call, as a
    // stream's: the device reads the bits and writes the LLRs in place.
    let q = Quantizer::matched(noise_variance(0.5, 1.0 / 3.0).unwrap()).unwrap();
    let mut host = BpskAwgn::<i8>::with_quantizer(0.5, 1.0 / 3.0, 11, q).unwrap();
    let mut gpu = GpuBpskAwgn::<i8>::new(0, 0.5, 1.0 / 3.0, 11, q).unwrap();
    gpu.set_in_place(true);
    const N: usize = 9_000_001;
    let mut b = vec![0u8; N];
    let (mut want, mut got) = (vec![0i8; N], vec![-128i8; N]);
    for (c, n) in [N, 4_194_304, 123_457, 1, N - 5].into_iter().enumerate() {
        b[..n].copy_from_slice(&bits(n, 100 + c as u64));
        got[..n].fill(-128);
        host.transmit_into(&b[..n], &mut want[..n]).unwrap();
        gpu.transmit_into(&b[..n], &mut got[..n]).unwrap();
        if let Some(j) = (0..n).find(|&j| want[j] != got[j]) {
            panic!("call {c} ({n} bits) differs first at {j}: host {}, GPU {}", want[j], got[j]);
        }
    }
    gpu.release();
}

#[test]
fn a_bad_channel_bit_is_refused_as_on_the_host() {
    if !common::have_gpu("a_bad_channel_bit_is_refused_as_on_the_host") {
        return;
    }
    let q = Quantizer::new(4.0).unwrap();
    let mut host = BpskAwgn::<i8>::with_quantizer(1.0, 0.5, 3, q).unwrap();
    let mut gpu = GpuBpskAwgn::<i8>::new(0, 1.0, 0.5, 3, q).unwrap();
    let mut b = bits(5_000_000, 9);
    b[4_500_001] = 7;
    b[4_600_000] = 2;
    let mut out = vec![0i8; b.len()];
    let want = host.transmit_into(&b, &mut out).unwrap_err().to_string();
    let got = gpu.transmit_into(&b, &mut out).unwrap_err().to_string();
    assert_eq!(got, want);
    assert!(got.contains("index 4500001 is 7"), "{got}");
    // Nothing was sent: the next call continues where both stood.
    let b = bits(70_000, 5);
    let (mut want, mut got) = (vec![0i8; b.len()], vec![-128i8; b.len()]);
    host.transmit_into(&b, &mut want).unwrap();
    gpu.transmit_into(&b, &mut got).unwrap();
    assert!(want == got, "the call after a refused one differs");
}

#[test]
fn a_flowgraph_counts_the_same_errors_with_the_channel_on_the_gpu() {
    if !common::have_gpu("a_flowgraph_counts_the_same_errors_with_the_channel_on_the_gpu") {
        return;
    }
    let run = |backend: &str| {
        let channel = format!("channel.backend={backend}");
        let o = common::gpufec(&["run", "flowgraphs/viterbi_awgn.toml", "--set", "source.total=2e7", "--set", "vars.ebn0_db=3", "--set", &channel]);
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(o.status.success(), "{backend}: {out}{}", String::from_utf8_lossy(&o.stderr));
        assert!(out.contains(&format!("channel 'channel': backend {backend}")), "{out}");
        common::ber_line(&out)
    };
    let (gpu, cpu) = (run("gpu"), run("cpu"));
    assert_eq!(gpu, cpu);
    assert!(!gpu.contains(" 0 errors"), "a point with errors is compared: {gpu}");
}
