//! The Viterbi decoder over several GPUs (`gpu_devices`, `--gpu-devices`): on
//! a machine with two or more, spread over all of them it gives the bits one
//! GPU gives, batch order kept; a device list naming a device that does not
//! exist is one clear error.
//!
//! These tests need a GPU (two for the spreading). Without one they say
//! `SKIPPED <name>` and pass, unless `GPUFEC_REQUIRE_GPU=1`.

use gpufec::codes::conv::{ConvSettings, NoisyLlrs, ViterbiMode};
use gpufec::codes::settings::Settings;
use gpufec::codes::{Batch, Decoded};
use gpufec::gpu::{Backend, BackendOptions, DeviceList, PipelineOptions, ViterbiTuning, devices, viterbi_decoder};

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

/// `gpufec run --gpu-devices all` spreads the shipped flowgraph's decoder
/// over every GPU: the same BER line as one GPU (the same bits), and the
/// decoder line says what each device decoded.
#[test]
fn run_over_every_gpu_counts_what_one_counts_and_names_each_device() {
    if !common::have_gpu("run_over_every_gpu_counts_what_one_counts_and_names_each_device") {
        return;
    }
    let found = devices().unwrap().len();
    if found < 2 {
        common::say(&format!("SKIPPED run_over_every_gpu_counts_what_one_counts_and_names_each_device: {found} GPU, needs 2"));
        return;
    }
    let run = |extra: &[&str]| {
        let args = [&["run", "flowgraphs/viterbi_awgn.toml", "--backend", "gpu", "--quiet", "--set", "source.total=2e8", "--set", "decoder.gpu_batch_units=64"], extra].concat();
        let o = common::gpufec(&args);
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let (one, all) = (run(&[]), run(&["--gpu-devices", "all"]));
    assert_eq!(common::ber_line(&one), common::ber_line(&all), "one GPU:\n{one}\nall:\n{all}");
    let line = all.lines().find(|l| l.starts_with("decoder 'decoder': ") && l.contains("per device:")).unwrap_or_else(|| panic!("{all}"));
    for d in 0..found {
        assert!(line.contains(&format!("GPU {d} ")), "{line}");
    }
    assert!(!one.contains("per device:"), "{one}");
}
