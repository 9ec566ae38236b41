//! Every way a flowgraph file (or a `--set`) can be wrong is rejected before
//! anything runs, with one message that names the file, the code or block,
//! and the field or port.

use gpufec::flowgraph::family::families;
use gpufec::flowgraph::{BuildOptions, FlowgraphFile, Override, build, kinds};
use gpufec::gpu::Backend;

const SHIPPED: &str = include_str!("../flowgraphs/viterbi_awgn.toml");
/// The same chain with the channel as separate sample-level blocks: every
/// kind of the shipped file but the fused channel, and the sample blocks.
const SAMPLES: &str = include_str!("../flowgraphs/viterbi_awgn_samples.toml");

/// The error of building `text` (named `t.toml`) with `sets` applied.
fn error_of(text: &str, sets: &[&str]) -> String {
    let result = FlowgraphFile::parse("t.toml", text).and_then(|mut file| {
        for s in sets {
            file.apply(&s.parse::<Override>()?)?;
        }
        build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false, ..Default::default() })
    });
    match result {
        Ok(_) => panic!("{sets:?} was accepted"),
        Err(e) => format!("{e:#}"),
    }
}

/// The sample-level shipped file with `from` replaced by `to` (which must occur).
fn edited(from: &str, to: &str) -> String {
    assert!(SAMPLES.contains(from), "the shipped file no longer has {from:?}");
    SAMPLES.replacen(from, to, 1)
}

fn assert_has(message: &str, parts: &[&str]) {
    for p in parts {
        assert!(message.contains(p), "{message:?} lacks {p:?}");
    }
    assert_eq!(message.lines().count(), 1, "{message:?} is not one line");
}

#[test]
fn the_shipped_files_build() {
    for (name, text) in [("viterbi_awgn.toml", SHIPPED), ("viterbi_awgn_samples.toml", SAMPLES)] {
        let file = FlowgraphFile::parse(name, text).unwrap();
        let built = build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: true, ..Default::default() }).unwrap();
        assert_eq!(built.ber_sinks.len(), 1);
        assert_eq!(built.probes.len(), 1);
        assert_eq!(built.decoders[0].backend, "cpu");
        assert_eq!(built.loads.len(), file.blocks.len(), "{name}: every block is timed or a wire");
    }
}

/// Without the radio feature the radio flowgraph is refused in one line
/// naming the feature that brings its source (with it, `sdr_seify.rs` runs it).
#[cfg(not(feature = "seify"))]
#[test]
fn a_radio_flowgraph_names_the_feature_it_needs() {
    let sdr = include_str!("../flowgraphs/ccsds_rx_sdr.toml");
    assert_has(&error_of(sdr, &[]), &["block 'radio'", "'SdrSource' needs the cargo feature seify", "--features seify"]);
}

/// A (de)puncturer whose pattern keeps every bit is no block in the built
/// flowgraph (its profile line says so): what feeds it is connected past it.
/// That the counts stay those of the direct simulation, `families.rs` shows.
#[test]
fn puncturers_that_keep_every_bit_are_wires() {
    let wired = |sets: &[&str]| -> Vec<String> {
        let mut file = FlowgraphFile::parse("viterbi_awgn.toml", SHIPPED).unwrap();
        for s in sets {
            file.apply(&s.parse::<Override>().unwrap()).unwrap();
        }
        let built = build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: true, ..Default::default() }).unwrap();
        built.loads.iter().filter(|l| l.load.is_none()).map(|l| l.block.clone()).collect()
    };
    assert_eq!(wired(&[]), ["puncture", "depuncture"]);
    // The decoder depunctures at 3/4 (auto), so the Depuncture block passes the stream on.
    assert_eq!(wired(&["vars.rate=3/4"]), ["depuncture"]);
    assert_eq!(wired(&["vars.rate=3/4", "conv.depuncture=block"]), Vec::<String>::new());
}

#[test]
fn malformed_toml() {
    let e = error_of(&edited("family = \"conv\"\n", "family = = \"conv\"\n"), &[]);
    assert_has(&e, &["t.toml:", "malformed TOML"]);
    let line = SAMPLES.lines().position(|l| l == "family = \"conv\"").unwrap() + 1;
    assert!(e.starts_with(&format!("t.toml:{line}:")), "{e}");
}

#[test]
fn unknown_block_type() {
    let e = error_of(&edited("type = \"BpskMapper\"", "type = \"QpskMapper\""), &[]);
    assert_has(&e, &["t.toml", "block 'bpsk'", "unknown block type 'QpskMapper'", "BpskMapper"]);
}

#[test]
fn unknown_field() {
    let e = error_of(&edited("[blocks.awgn]\n", "[blocks.awgn]\nebno = 3\n"), &[]);
    assert_has(&e, &["t.toml", "block 'awgn' (Awgn)", "unknown field 'ebno'", "ebn0_db"]);
    let e = error_of(SAMPLES, &["decoder.tiles=1"]);
    assert_has(&e, &["t.toml", "block 'decoder' (ViterbiDecoder)", "unknown field 'tiles' (set by --set)"]);
}

#[test]
fn ill_typed_fields() {
    let e = error_of(&edited("total = 1e8", "total = \"many\""), &[]);
    assert_has(&e, &["t.toml", "block 'source' (RandomBits)", "field 'total'", "whole number", "\"many\""]);
    let e = error_of(SAMPLES, &["awgn.ebn0_db=abc"]);
    assert_has(&e, &["t.toml", "block 'awgn' (Awgn)", "field 'ebn0_db' (set by --set)", "expected a number"]);
    let e = error_of(SAMPLES, &["awgn.rate=4/3"]);
    assert_has(&e, &["t.toml", "block 'awgn' (Awgn)", "field 'rate' (set by --set)", "rate in (0, 1]"]);
    let e = error_of(SAMPLES, &["conv.k=\"seven\""]);
    assert_has(&e, &["t.toml", "code 'conv' (conv)", "field 'k' (set by --set)", "whole number"]);
    let e = error_of(SAMPLES, &["conv.depuncture=maybe"]);
    assert_has(&e, &["code 'conv' (conv)", "field 'depuncture'", "one of auto, block, decoder"]);
    let e = error_of(SAMPLES, &["decoder.llr=i16"]);
    assert_has(&e, &["block 'decoder' (ViterbiDecoder)", "field 'llr'", "one of i8, f32"]);
    let e = error_of(SAMPLES, &["source.total=1.5"]);
    assert_has(&e, &["block 'source' (RandomBits)", "field 'total'"]);
}

#[test]
fn invalid_values_name_their_field() {
    let e = error_of(SAMPLES, &["vars.rate=4/5"]);
    assert_has(&e, &["t.toml", "code 'conv' (conv)", "field 'rate' (from $rate)", "4/5"]);
    let e = error_of(SAMPLES, &["conv.tile=0,20,20"]);
    assert_has(&e, &["code 'conv' (conv)", "field 'tile' (set by --set)", "f=0"]);
    let e = error_of(SAMPLES, &["conv.polys=171,999"]);
    assert_has(&e, &["code 'conv' (conv)", "field 'polys'", "999"]);
    let e = error_of(SAMPLES, &["conv.k=12"]);
    assert_has(&e, &["code 'conv' (conv)", "field 'k'"]);
    let e = error_of(SAMPLES, &["conv.traceback=parallel:0"]);
    assert_has(&e, &["code 'conv' (conv)", "field 'traceback'", "f0"]);
    let e = error_of(SAMPLES, &["conv.frame=0"]);
    assert_has(&e, &["code 'conv' (conv)", "field 'frame'", "frame of 0 bits"]);
    let e = error_of(SAMPLES, &["conv.mode=terminated", "conv.tile=64,8,8"]);
    assert_has(&e, &["code 'conv' (conv)", "field 'tile'", "not to mode terminated"]);
    let e = error_of(SAMPLES, &["quantize.scale=0", "quantize.ebn0_db=3"]);
    assert_has(&e, &["block 'quantize' (Quantize)", "field 'scale'"]);
    let e = error_of(SAMPLES, &["conv.pattern=11,10"]);
    assert_has(&e, &["code 'conv' (conv)", "field 'pattern'", "not both"]);
}

#[test]
fn missing_required_field() {
    let e = error_of(&edited("ebn0_db = \"$ebn0_db\" # the matched", "# the matched"), &[]);
    assert_has(&e, &["t.toml", "block 'quantize' (Quantize)", "field 'scale' is missing"]);
    let e = error_of(&edited("[blocks.bpsk]\ntype = \"BpskMapper\"", "[blocks.bpsk]"), &[]);
    assert_has(&e, &["t.toml", "block 'bpsk'", "field 'type' is missing"]);
}

#[test]
fn type_mismatch_on_an_edge() {
    let e = error_of(SAMPLES, &["depuncture.llr=f32"]);
    assert_has(&e, &["t.toml", "quantize.output carries i8 but depuncture.input takes f32"]);
    let e = error_of(&edited("llr > quantize > depuncture", "llr > depuncture"), &[]);
    assert_has(&e, &["t.toml", "llr.output carries f32 but depuncture.input takes i8"]);
}

#[test]
fn unknown_blocks_and_ports_in_connections() {
    let e = error_of(&edited("probe > ber.decoded", "probe > ber.decode"), &[]);
    assert_has(&e, &["t.toml", "block 'ber' (BerSink) has no input 'decode'", "reference, decoded"]);
    let e = error_of(&edited("source > ber.reference", "source > bert.reference"), &[]);
    assert_has(&e, &["t.toml", "no block named 'bert'"]);
    let e = error_of(&edited("source > ber.reference", "source.bits > ber.reference"), &[]);
    assert_has(&e, &["t.toml", "block 'source' (RandomBits) has no output 'bits' (its outputs: output)"]);
    let e = error_of(&edited("source > ber.reference", "source > ber"), &[]);
    assert_has(&e, &["t.toml", "block 'ber' (BerSink) has several inputs", "ber.PORT"]);
    let e = error_of(&edited("source > encoder", "source > encoder.input > puncture"), &[]);
    assert_has(&e, &["t.toml", "only the first and last block of a chain may name a port"]);
}

#[test]
fn every_port_connected_once() {
    let e = error_of(&edited("\"source > ber.reference\",", ""), &[]);
    assert_has(&e, &["t.toml", "block 'ber' (BerSink): input 'reference' is not connected"]);
    let e = error_of(&edited("\"source > ber.reference\",", "\"source > ber.reference\", \"source > ber.decoded\","), &[]);
    assert_has(&e, &["t.toml", "input ber.decoded is already connected"]);
}

#[test]
fn overrides_must_name_existing_blocks_and_variables() {
    let e = error_of(SAMPLES, &["channel.ebn0_db=3"]);
    assert_has(&e, &["--set channel.ebn0_db", "t.toml has no block or code 'channel'", "awgn", "its codes: conv"]);
    let e = error_of(SAMPLES, &["conv.family=turbo"]);
    assert_has(&e, &["--set conv.family", "cannot be overridden"]);
    let e = error_of(SAMPLES, &["vars.ebn0=3"]);
    assert_has(&e, &["--set vars.ebn0", "t.toml has no variable 'ebn0'", "ebn0_db"]);
    let e = error_of(&edited("ebn0_db = \"$ebn0_db\"", "ebn0_db = \"$snr\""), &[]);
    assert_has(&e, &["t.toml", "block 'awgn' (Awgn)", "field 'ebn0_db'", "unknown variable '$snr'"]);
}

#[test]
fn codes_are_named_once_and_found_by_their_blocks() {
    // An unknown family, a missing family, an unknown setting.
    let e = error_of(&edited("family = \"conv\"", "family = \"ldpc\""), &[]);
    assert_has(&e, &["t.toml", "code 'conv'", "unknown family 'ldpc'", "conv, turbo"]);
    let e = error_of(&edited("family = \"conv\"\n", ""), &[]);
    assert_has(&e, &["t.toml", "code 'conv'", "field 'family' is missing"]);
    let e = error_of(SAMPLES, &["conv.tiles=64,8,8"]);
    assert_has(&e, &["code 'conv' (conv)", "unknown field 'tiles' (set by --set)", "tile, group"]);
    // A block names a code that is not there, or one of another family.
    let e = error_of(SAMPLES, &["decoder.code=inner"]);
    assert_has(&e, &["block 'decoder' (ViterbiDecoder)", "field 'code'", "no code 'inner'", "its codes: conv"]);
    let two = edited("[blocks.source]", "[codes.outer]\nfamily = \"turbo\"\nblock = 40\n\n[blocks.source]");
    let named = ["awgn", "llr", "quantize", "framer", "ber"].map(|b| format!("{b}.code=conv"));
    let mut sets: Vec<&str> = named.iter().map(String::as_str).collect();
    sets.push("decoder.code=outer");
    let e = error_of(&two, &sets);
    assert_has(&e, &["block 'decoder' (ViterbiDecoder)", "field 'code'", "'outer' is a turbo code; this block takes a conv code"]);
    // Two codes a shared block could mean: it must say which (family blocks
    // find the one of their family).
    let e = error_of(&two, &[]);
    assert_has(&e, &["block 'ber' (BerSink)", "field 'code' is missing", "several codes", "conv, outer"]);
    // Without any code, the channel needs its rate.
    let bare = edited("[codes.conv]\nfamily = \"conv\"\nrate = \"$rate\"\ndepuncture = \"auto\"\n", "");
    let e = error_of(&bare, &[]);
    assert_has(&e, &["field 'code' is missing", "the file has no conv code"]);
    // A code and a block of one name would make --set ambiguous.
    let e = FlowgraphFile::parse("t.toml", &edited("[blocks.bpsk]", "[blocks.conv]")).err().unwrap().to_string();
    assert_has(&e, &["t.toml", "'conv' names both a code and a block"]);
}

#[test]
fn the_readme_documents_every_block_kind_code_family_and_parameter() {
    let readme = include_str!("../README.md");
    for k in kinds() {
        assert!(readme.contains(&format!("`{}`", k.name)), "README lacks block kind {}", k.name);
        for p in k.params() {
            assert!(readme.contains(&format!("`{}`", p.name)), "README lacks parameter {}.{}", k.name, p.name);
        }
    }
    for f in families() {
        assert!(readme.contains(&format!("`family = \"{}\"`", f.name)), "README lacks family {}", f.name);
        for field in f.fields {
            assert!(readme.contains(&format!("`{}`", field.name)), "README lacks setting {}.{}", f.name, field.name);
        }
    }
}

#[test]
fn radio_blocks_refuse_bad_settings_and_files_before_the_run() {
    let demod = include_str!("../flowgraphs/by70-1_demod.toml");
    let e = error_of(demod, &["baseband.carrier=30000"]);
    assert_has(&e, &["baseband", "carrier", "30000 Hz is outside the band 0..24000 Hz"]);
    assert_has(&error_of(demod, &["wav.samples=cf32"]), &["wav.output carries cf32 but baseband.input takes f32"]);
    let iq = demod
        .replace("wav > baseband > receiver", "wav > receiver")
        .replace("[blocks.baseband]\ntype = \"RealToComplex\"\nsample_rate = 48000.0\ncarrier = 11500.0\nbandwidth = 8000.0\n", "").replace("path = \"$wav\"", "path = \"$wav\"\nsamples = \"cf32\"");
    assert_has(&error_of(&iq, &[]), &["wav", "has 1 channel, but the stream is complex"]);
    let e = error_of(demod, &["receiver.sps=1"]);
    assert_has(&e, &["receiver", "1 samples per symbol is outside 2..=64"]);
    let e = error_of(demod, &["receiver.constellation=8psk"]);
    assert_has(&e, &["receiver", "constellation"]);
    let not_wav = std::env::temp_dir().join(format!("gpufec-not-wav-{}.wav", std::process::id()));
    std::fs::write(&not_wav, b"RIFF\x24\0\0\0WAVEfmt \x10\0\0\0\x07\0\x01\0\x40\x1f\0\0\x40\x1f\0\0\x01\0\x08\0data\0\0\0\0").unwrap();
    let e = error_of(demod, &[&format!("vars.wav={}", not_wav.display())]);
    std::fs::remove_file(&not_wav).unwrap();
    assert_has(&e, &["wav", "format 7 with 8 bits are not supported: only 16-bit PCM"]);
    let channel = demod
        .replace("connections = [\"wav > baseband > receiver > llr_file\"]", "connections = [\"wav > baseband > channel > receiver > llr_file\"]")
        .replace("[blocks.receiver]", "[blocks.channel]\ntype = \"ChannelModel\"\nsample_rate = 0.0\n\n[blocks.receiver]");
    assert_has(&error_of(&channel, &[]), &["channel", "sample_rate", "not a positive rate"]);
}

/// The receive chain's new settings, each out of its limit, refused before
/// the run naming the block and field: the stage synchroniser's window (zero,
/// too small, huge), a punctured code under it, the decoder's watchdog
/// (huge) and `partial_end` (not a choice).
#[test]
fn stage_sync_and_decoder_end_settings_are_checked() {
    let rx = include_str!("../flowgraphs/ccsds_rx_file.toml");
    for (set, want) in [
        ("stages.window=0", "0 stages; give 64..=1048576"),
        ("stages.window=63", "63 stages; give 64..=1048576"),
        ("stages.window=1e12", "1000000000000 stages; give 64..=1048576"),
        ("stages.window=-1", "whole number"),
        ("decoder.gpu_watchdog_ms=1e12", "gpu_watchdog_ms"),
        ("decoder.partial_end=\"maybe\"", "partial_end"),
    ] {
        assert_has(&error_of(rx, &[set]), &[want]);
    }
    assert_has(&error_of(rx, &["conv.rate=\"3/4\""]), &["stages", "code", "PairSync takes an unpunctured stream"]);
}

/// SigMF recordings in a flowgraph: a sink that would write the recording a
/// source reads is refused through either of its files, and the sink's bad
/// settings are refused before the run, naming the block and field.
#[test]
fn sigmf_blocks_refuse_overwriting_and_bad_settings() {
    let dir = std::env::temp_dir().join(format!("gpufec-sigmf-fg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = dir.join("rec");
    std::fs::write(base.with_extension("sigmf-meta"), r#"{"global": {"core:datatype": "cf32_le", "core:sample_rate": 1000}}"#).unwrap();
    std::fs::write(base.with_extension("sigmf-data"), [0u8; 16]).unwrap();
    let text = |sink: &str| {
        format!("connections = [\"src > snk\"]\n\n[blocks.src]\ntype = \"SigmfSource\"\npath = \"{}\"\n\n[blocks.snk]\ntype = \"SigmfSink\"\nsample_rate = 1000.0\npath = \"{sink}\"\n", base.display())
    };
    let e = error_of(&text(&format!("{}.sigmf-data", base.display())), &[]);
    assert_has(&e, &["block 'snk' would write", "rec.sigmf-meta", "an input of the run (block 'src')"]);
    let other = format!("{}", dir.join("out").display());
    assert_has(&error_of(&text(&other), &["snk.sample_rate=0"]), &["snk", "sample_rate", "0 Hz is not a rate above 0"]);
    assert_has(&error_of(&text(&other), &["snk.datatype=\"cf12_le\""]), &["snk", "datatype", "SigMF datatype \"cf12_le\""]);
    assert_has(&error_of(&text(&other), &["snk.datatype=\"ri16_le\""]), &["snk", "datatype ri16_le holds real samples, but the stream is complex"]);
    assert_has(&error_of(&text(&other), &["src.samples=\"f32\"", "snk.samples=\"f32\"", "snk.datatype=\"rf32_le\""]), &["src", "complex (cf32_le), but the stream is real"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
