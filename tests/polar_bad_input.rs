//! Every size and input a user gives the polar family, out of range: each
//! one refused with one clear error before anything large is allocated.

use gpufec::codes::crc::CRC11;
use gpufec::codes::polar::nr::{NrDecoder, NrPolar, RateMatch};
use gpufec::codes::polar::{
    Algorithm, BpConfig, BpPrecision, Construction, CpuPolar, EarlyStop, InfoCheck, MAX_FROZEN_FILE_BYTES, MAX_ITERATIONS, MAX_LIST, MAX_N, PolarCode, PolarFrames,
    PolarLink, PolarSpec,
};
use gpufec::codes::{Batch, BatchDecoder, CodeError, Decoded};
use std::sync::Arc;

fn says<T>(r: Result<T, CodeError>, want: &str) {
    match r {
        Ok(_) => panic!("accepted; wanted an error saying '{want}'"),
        Err(e) => assert!(e.to_string().contains(want), "'{e}' does not say '{want}'"),
    }
}

#[test]
fn lengths_and_sizes() {
    for c in [Construction::Nr, Construction::Ga { design_ebn0_db: 1.0 }] {
        says(c.build(12, 6), "must be a power of two");
        says(c.build(4, 2), "power of two from 8");
        says(c.build(0, 0), "power of two");
        says(c.build(64, 0), "K must be 1..=64");
        says(c.build(64, 65), "K must be 1..=64");
    }
    // Beyond the limit: refused by the size check, not by allocating 2^40 bits.
    says(Construction::Ga { design_ebn0_db: 1.0 }.build(MAX_N * 2, 8), "from 8 to 65536");
    says(Construction::Ga { design_ebn0_db: 1.0 }.build(1 << 40, 8), "from 8 to 65536");
    says(Construction::Nr.build(2048, 1024), "N = 2..=1024 bits");
    says(PolarCode::from_reliability(8, 4, &[0u32, 1, 2, 3, 4, 5, 6, 6]), "twice");
    says("ga:".parse::<Construction>(), "design Eb/N0");
    says("ga:200".parse::<Construction>(), "outside");
}

#[test]
fn frozen_set_files() {
    let dir = std::env::temp_dir().join(format!("gpufec-polar-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        Construction::File(p)
    };
    says(file("short.txt", b"0 1 2").build(8, 4), "3 frozen indices for an (8, 4) code, which has N − K = 4");
    says(file("long.txt", b"0 1 2 3 4").build(8, 4), "more than the N − K = 4");
    says(file("twice.txt", b"0 1 2\n2").build(8, 4), "line 2: index 2 is frozen twice");
    says(file("range.txt", b"0 1 2 8").build(8, 4), "index 8 is outside");
    says(file("word.txt", b"0 1 two 3").build(8, 4), "'two' is not a bit index");
    says(file("huge.txt", &vec![b'0'; MAX_FROZEN_FILE_BYTES as usize + 1]).build(8, 4), "more than the 1048576 accepted");
    says(Construction::File(dir.join("absent.txt")).build(8, 4), "absent.txt");
    // N and K are checked before the file is opened.
    says(Construction::File(dir.join("absent.txt")).build(9, 4), "power of two");
    assert!(file("good.txt", b"# the (8, 4) code of the seed paper\n0, 1, 2, 4\n").build(8, 4).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn five_g_sizes() {
    says(NrPolar::uci(100, 100), "E = 100 is too small for K = 111");
    says(NrPolar::uci(12, 20), "too small for K = 18 and 3 parity-check bits");
    says(NrPolar::dci(40, 60, 1), "too small for K = 64");
    says(NrPolar::uci(11, 100), "12..=1706");
    says(NrPolar::uci(1707, 5000), "12..=1706");
    says(NrPolar::dci(0, 100, 1), "1..=140");
    says(NrPolar::dci(141, 1000, 1), "1..=140");
    says(NrPolar::uci(20, 8193), "1..=8192");
    says(NrPolar::dci(40, usize::MAX, 1), "1..=8192");
    says(RateMatch::new(20, 60, 100, false), "power of two from 32 to 1024");
    says(RateMatch::new(20, 0, 64, false), "1..=8192");
}

#[test]
fn decoder_parameters() {
    let spec = PolarSpec::plain(Arc::new(Construction::Nr.build(64, 32).unwrap()));
    let bp = |iterations, early_stop, precision| Algorithm::Bp(BpConfig { iterations, early_stop, precision });
    let f32bp = BpPrecision::F32 { alpha: 0.9375 };
    says(CpuPolar::<f32>::new(spec.clone(), Algorithm::Scl { list: 0 }, 1), "1..=32");
    says(CpuPolar::<f32>::new(spec.clone(), Algorithm::Scl { list: 1_000_000_000 }, 1), "1..=32");
    says(CpuPolar::<f32>::new(spec.clone(), Algorithm::Scl { list: MAX_LIST + 1 }, 1), "1..=32");
    says("scl:1000000000".parse::<Algorithm>(), "1..=32");
    says("bp:fast".parse::<Algorithm>(), "give bp, sc or scl:L");
    says(CpuPolar::<f32>::new(spec.clone(), bp(0, EarlyStop::GMatrix, f32bp), 1), "0 BP iterations");
    says(CpuPolar::<f32>::new(spec.clone(), bp(MAX_ITERATIONS + 1, EarlyStop::GMatrix, f32bp), 1), "1..=1000");
    says(CpuPolar::<f32>::new(spec.clone(), bp(u32::MAX, EarlyStop::Never, f32bp), 1), "1..=1000");
    says(CpuPolar::<f32>::new(spec.clone(), bp(20, EarlyStop::Crc, f32bp), 1), "needs a code that carries a CRC");
    says(CpuPolar::<f32>::new(spec.clone(), bp(20, EarlyStop::GMatrix, BpPrecision::F32 { alpha: 1.5 }), 1), "0 < α ≤ 1");
    says(CpuPolar::<f32>::new(spec.clone(), Algorithm::Sc, 1).unwrap().with_soft_output(), "only BP gives it");
    says(CpuPolar::<f32>::new(spec.clone(), Algorithm::Sc, 5000), "more than 1024");
    says(InfoCheck::new(&CRC11, 11), "cannot carry a payload");
    says(PolarSpec::new(Arc::new(PolarCode::from_frozen(8, &[0, 1, 2, 7]).unwrap()), true, None), "closed under binary domination");
}

#[test]
fn nan_and_infinite_llrs() {
    let spec = PolarSpec::plain(Arc::new(Construction::Nr.build(64, 32).unwrap()));
    let mut llrs = vec![2.0f32; 64 * 4];
    for (at, bad) in [(130, f32::NAN), (7, f32::INFINITY), (255, f32::NEG_INFINITY)] {
        llrs[at] = bad;
        let i8_model = Algorithm::Bp(BpConfig { precision: BpPrecision::I8, ..BpConfig::default() });
        for alg in [Algorithm::Sc, Algorithm::Scl { list: 8 }, Algorithm::Bp(BpConfig::default()), i8_model] {
            let mut dec = CpuPolar::<f32>::new(spec.clone(), alg, 2).unwrap();
            let mut out = Decoded::default();
            assert_eq!(dec.decode(&Batch::uniform(&llrs, 64).unwrap(), &mut out), Err(CodeError::NonFiniteLlr { index: at }), "{}", alg.describe());
        }
        llrs[at] = 2.0;
    }
    // Through the 5G chain the index is the received LLR's.
    let chain = NrPolar::uci(40, 150).unwrap();
    let mut dec = NrDecoder::new(chain, |s| Ok(Box::new(CpuPolar::<f32>::new(s.clone(), Algorithm::Sc, 1)?))).unwrap();
    let mut rx = vec![1.0f32; 300];
    rx[222] = f32::NAN;
    let mut out = Decoded::default();
    assert_eq!(dec.decode(&Batch::uniform(&rx, 150).unwrap(), &mut out), Err(CodeError::NonFiniteLlr { index: 222 }));
    // A decoder of the wrong units is refused by the link and by the chain.
    let other = CpuPolar::<f32>::new(PolarSpec::plain(Arc::new(Construction::Nr.build(128, 32).unwrap())), Algorithm::Sc, 1).unwrap();
    says(PolarLink::new(PolarFrames::Codewords(spec), Box::new(other), None), "the decoder takes units of 128 LLRs");
    says(NrDecoder::new(NrPolar::uci(40, 150).unwrap(), |_| Ok(Box::new(CpuPolar::<f32>::new(PolarSpec::plain(Arc::new(Construction::Nr.build(64, 51).unwrap())), Algorithm::Sc, 1)?) as Box<dyn BatchDecoder<f32>>)), "the block decoder takes");
}
