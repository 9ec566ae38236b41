use super::*;
use crate::blocks::{FirstError, Reporting};
use crate::blocks::testing::{collect_from, run_through};
use crate::dsp::Constellation;

fn wav(path: &std::path::Path, tag: u16, channels: u16, bits: u16, data: &[u8], declared: u32) {
    let mut h = b"RIFF\0\0\0\0WAVEfmt \x10\0\0\0".to_vec();
    h.extend(tag.to_le_bytes());
    h.extend(channels.to_le_bytes());
    h.extend(48_000u32.to_le_bytes());
    h.extend((48_000u32 * (channels * bits / 8) as u32).to_le_bytes());
    h.extend((channels * bits / 8).to_le_bytes());
    h.extend(bits.to_le_bytes());
    h.extend(b"data");
    h.extend(declared.to_le_bytes());
    h.extend(data);
    std::fs::write(path, h).unwrap();
}

#[test]
fn a_stage_block_gives_what_its_stage_gives() {
    let bits: Vec<u8> = (0..5000).map(|i| ((i * 13 + i / 7) % 2) as u8).collect();
    let mut want = Vec::new();
    crate::dsp::SymbolMapper::new(Constellation::Qpsk).process(&bits, &mut want);
    let got: Vec<Complex32> =
        run_through(bits, &FirstError::default(), |fg| fg.add(PskMapper::new(dsp::SymbolMapper::new(Constellation::Qpsk))).into()).unwrap();
    assert_eq!(got, want);
    let mut shaped = Vec::new();
    dsp::PulseShaper::new(4, 0.35, 10).unwrap().process(&want, &mut shaped);
    let mut llrs = Vec::new();
    let settings = dsp::ReceiverSettings { constellation: Constellation::Qpsk, ..Default::default() };
    dsp::PskReceiver::new(settings).unwrap().process(&shaped, &mut llrs);
    let got: Vec<f32> =
        run_through(shaped, &FirstError::default(), |fg| fg.add(PskReceiver::new(dsp::PskReceiver::new(settings).unwrap())).into()).unwrap();
    assert_eq!(got, llrs);
}

#[test]
fn the_wav_source_reads_mono_and_stereo_and_refuses_bad_files() {
    let dir = std::env::temp_dir().join(format!("gpufec-wav-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mono = dir.join("mono.wav");
    wav(&mono, 1, 1, 16, &[0x00, 0x40, 0x00, 0xC0], 4);
    let got: Vec<f32> = collect_from(|fg| fg.add(WavSource::<f32>::new(&mono).unwrap()).into());
    assert_eq!(got, vec![0.5, -0.5]);
    let Err(e) = WavSource::<Complex32>::new(&mono) else { panic!("mono read as I/Q") };
    assert!(e.to_string().contains("has 1 channel, but the stream is complex"), "{e}");

    let stereo = dir.join("stereo.wav");
    let data: Vec<u8> = [0.25f32, -0.75].iter().flat_map(|v| v.to_le_bytes()).collect();
    wav(&stereo, 3, 2, 32, &data, 8);
    let got: Vec<Complex32> = collect_from(|fg| fg.add(WavSource::<Complex32>::new(&stereo).unwrap()).into());
    assert_eq!(got, vec![Complex32::new(0.25, -0.75)]);

    let alaw = dir.join("alaw.wav");
    wav(&alaw, 6, 1, 8, &[1, 2], 2);
    let Err(e) = WavSource::<f32>::new(&alaw) else { panic!("A-law accepted") };
    assert!(e.to_string().contains("only 16-bit PCM"), "{e}");

    let cut = dir.join("cut.wav");
    wav(&cut, 1, 1, 16, &[0; 10], 1000);
    let errors = FirstError::default();
    let mut fg = futuresdr::runtime::Flowgraph::new();
    let snk = fg.add(futuresdr::blocks::VectorSink::<f32>::new(16));
    let src = fg.add(WavSource::<f32>::new(&cut).unwrap().report_to(&errors));
    fg.stream_dyn(src, "output", snk, "input").unwrap();
    let _ = crate::blocks::runtime().run(fg);
    let message = errors.message().expect("a truncated file fails the run");
    assert!(message.contains("cut.wav") && message.contains("ends before"), "{message}");
    std::fs::remove_dir_all(&dir).unwrap();
}
