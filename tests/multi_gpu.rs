//! Decoders over several GPUs (`gpu_devices`, `--gpu-devices`): on a machine
//! with two or more, a decoder spread over all of them gives the bits one
//! GPU gives, batch order kept, for the convolutional and turbo families;
//! device lists that name no device, or one twice, are one clear error.
//!
//! These tests need a GPU (two for the spreading). Without one they say
//! `SKIPPED <name>` and pass, unless `GPUFEC_REQUIRE_GPU=1`.

use gpufec::codes::conv::{ConvSettings, NoisyLlrs, ViterbiMode};
use gpufec::codes::llr::Llr;
use gpufec::codes::settings::{Chain, Settings};
use gpufec::codes::turbo::TurboSettings;
use gpufec::codes::{Batch, Decoded};
use gpufec::gpu::{Backend, BackendOptions, DeviceList, PipelineOptions, ViterbiTuning, devices, turbo_decoder, viterbi_decoder};

mod common;

fn options(devices: Option<DeviceList>) -> BackendOptions {
    BackendOptions { backend: Backend::Gpu, pipeline: PipelineOptions { devices, batch_units: 64, ..Default::default() }, ..Default::default() }
}

#[test]
fn a_decoder_over_every_gpu_gives_the_bits_of_one() {
    if !common::have_gpu("a_decoder_over_every_gpu_gives_the_bits_of_one") {
        return;
    }
    let found = devices().unwrap().len();
    if found < 2 {
        common::say(&format!("SKIPPED a_decoder_over_every_gpu_gives_the_bits_of_one: {found} GPU, needs 2"));
        return;
    }
    // Convolutional: small batches, so that every device gets several.
    let chain = ConvSettings::default().resolve().unwrap();
    let ViterbiMode::Tiled(tile) = chain.mode() else { unreachable!() };
    let (units, bits) = NoisyLlrs::<i8>::new(chain.setup(), 3.0, 7).unwrap().units(chain.mode(), false, 64 * 64 * 256 * 12).unwrap();
    let decode = |o: &BackendOptions| {
        let (mut d, _) = viterbi_decoder::<i8>(chain.trellis().clone(), chain.mode(), None, o, ViterbiTuning::default()).unwrap();
        let mut out = Decoded::default();
        d.decode(&Batch::uniform(&units, d.shapes()[0].items).unwrap(), &mut out).unwrap();
        (out.bits, d.describe())
    };
    let (one, _) = decode(&options(None));
    let (all, about) = decode(&options(Some(DeviceList::All)));
    assert_eq!(one.len() as u64, bits);
    assert!(one == all, "the bits over {found} GPUs differ from one GPU's");
    assert!(about.starts_with(&format!("{found} GPUs")) && about.contains("gpu 1: "), "{about}");
    assert!(tile.group > 0);
    // Turbo, f32 and i8.
    let chain = TurboSettings { block: Some(6144), ..Default::default() }.resolve().unwrap();
    fn turbo<T: Llr>(chain: &gpufec::codes::turbo::TurboChain, o: &BackendOptions) -> Vec<u8> {
        let llrs = chain.noisy::<T>(6144 * 300, 0.8, 3).unwrap().llrs;
        let (mut d, _) = turbo_decoder::<T>(chain, 1.0, false, o).unwrap();
        let mut out = Decoded::default();
        d.decode(&Batch::uniform(&llrs, 3 * 6144 + 12).unwrap(), &mut out).unwrap();
        out.bits
    }
    assert!(turbo::<f32>(&chain, &options(None)) == turbo::<f32>(&chain, &options(Some(DeviceList::All))));
    assert!(turbo::<i8>(&chain, &options(None)) == turbo::<i8>(&chain, &options(Some(DeviceList::All))));
}

#[test]
fn device_lists_that_name_no_device_are_refused() {
    if !common::have_gpu("device_lists_that_name_no_device_are_refused") {
        return;
    }
    let found = devices().unwrap().len();
    let chain = ConvSettings::default().resolve().unwrap();
    let err = viterbi_decoder::<i8>(chain.trellis().clone(), chain.mode(), None, &options(Some(DeviceList::Listed(vec![0, found]))), ViterbiTuning::default())
        .err()
        .expect("a device that does not exist");
    assert!(format!("{err:#}").contains(&format!("CUDA device {found} does not exist ({found} found)")), "{err:#}");
}
