//! The turbo decoder over several GPUs (`gpu_devices`, `--gpu-devices`): on a
//! machine with two or more, spread over all of them it gives the bits one
//! GPU gives, batch order kept, with f32 and i8 LLRs.
//!
//! These tests need a GPU (two for the spreading). Without one they say
//! `SKIPPED <name>` and pass, unless `GPUFEC_REQUIRE_GPU=1`.

use gpufec::codes::Batch;
use gpufec::codes::Decoded;
use gpufec::codes::llr::Llr;
use gpufec::codes::settings::{Chain, Settings};
use gpufec::codes::turbo::{TurboChain, TurboSettings};
use gpufec::gpu::{Backend, BackendOptions, DeviceList, PipelineOptions, devices, turbo_decoder};

mod common;

fn options(devices: Option<DeviceList>) -> BackendOptions {
    BackendOptions { backend: Backend::Gpu, pipeline: PipelineOptions { devices, batch_units: 64, ..Default::default() }, ..Default::default() }
}

fn turbo<T: Llr>(chain: &TurboChain, o: &BackendOptions) -> Vec<u8> {
    let llrs = chain.noisy::<T>(6144 * 300, 0.8, 3).unwrap().llrs;
    let (mut d, _) = turbo_decoder::<T>(chain, 1.0, false, o).unwrap();
    let mut out = Decoded::default();
    d.decode(&Batch::uniform(&llrs, 3 * 6144 + 12).unwrap(), &mut out).unwrap();
    out.bits
}

#[test]
fn the_turbo_decoder_over_every_gpu_gives_the_bits_of_one() {
    if !common::have_gpu("the_turbo_decoder_over_every_gpu_gives_the_bits_of_one") {
        return;
    }
    let found = devices().unwrap().len();
    if found < 2 {
        common::say(&format!("SKIPPED the_turbo_decoder_over_every_gpu_gives_the_bits_of_one: {found} GPU, needs 2"));
        return;
    }
    let chain = TurboSettings { block: Some(6144), ..Default::default() }.resolve().unwrap();
    assert!(turbo::<f32>(&chain, &options(None)) == turbo::<f32>(&chain, &options(Some(DeviceList::All))));
    assert!(turbo::<i8>(&chain, &options(None)) == turbo::<i8>(&chain, &options(Some(DeviceList::All))));
}
