//! The prebuilt concatenated chain for insertion/deletion channels
//! (`flowgraphs/sync_concatenated.toml`: the convolutional code outside a
//! time-varying block code, the inner MAP decoder's bit LLRs into the
//! Viterbi decoder), on the CPU with a short inner code: error-free after the
//! outer code at a small Pi = Pd although the inner code alone errs, and the
//! outer code's BER rising with Pi = Pd; and both sync flowgraphs counting
//! the same errors with the decoder's frames many at a time (speculative
//! segments, the GPU's way) as one at a time.

use gpufec::flowgraph::Summary;

mod common;

const SHIPPED: &str = "flowgraphs/sync_concatenated.toml";

/// The outer and inner BER counts at Pi = Pd = `p`: 32000 information bits,
/// 400 inner frames of q = 16, n = 8, N = 40.
fn counts(p: f64) -> (gpufec::blocks::BerCounts, gpufec::blocks::BerCounts) {
    let p = format!("vars.p={p}");
    let sets = [p.as_str(), "source.total=32000", "inner.q=16", "inner.n=8", "inner.N=40"];
    let s: Summary = common::run_file(SHIPPED, &sets).unwrap();
    let of = |name: &str| s.ber.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no BER sink {name}")).1;
    (of("ber"), of("inner_ber"))
}

#[test]
fn the_outer_code_corrects_the_inner_codes_errors_and_its_ber_rises_with_the_channel() {
    let points: Vec<_> = [1e-3, 1e-2, 3e-2, 6e-2].into_iter().map(|p| (p, counts(p))).collect();
    for (p, (outer, inner)) in &points {
        assert_eq!((outer.bits, inner.bits), (32000, 64000), "every bit decoded at {p}");
    }
    let (_, (outer, inner)) = points[0];
    assert_eq!(outer.bit_errors, 0, "error-free after the outer code at 1e-3");
    assert!(inner.bit_errors > 0, "the inner code alone errs at 1e-3: {inner:?}");
    for pair in points.windows(2) {
        let ((p, (o0, i0)), (q, (o1, i1))) = (pair[0], pair[1]);
        assert!(i1.bit_errors > i0.bit_errors, "inner errors rise from {p} to {q}: {i0:?} {i1:?}");
        assert!(o1.bit_errors >= o0.bit_errors, "outer errors do not fall from {p} to {q}: {o0:?} {o1:?}");
    }
    let (first, last) = (points[1].1.0, points[3].1.0);
    assert!(last.bit_errors > first.bit_errors.max(10), "the outer code's errors rise with the channel: {first:?} at 1e-2, {last:?} at 6e-2");
}

#[test]
fn speculative_segments_count_what_frame_at_a_time_decoding_counts() {
    for (file, p) in [("flowgraphs/sync_bsid.toml", "sync"), (SHIPPED, "inner")] {
        let sets: Vec<String> = ["vars.p=2e-2", "source.total=24000"].iter().map(|s| s.to_string()).chain([format!("{p}.q=16"), format!("{p}.n=8"), format!("{p}.N=40")]).collect();
        let run = |speculative: &str| {
            let decoder = if p == "sync" { "decoder" } else { "inner_decoder" };
            let mut sets = sets.clone();
            sets.push(format!("{decoder}.speculative=\"{speculative}\""));
            let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
            common::run_file(file, &sets).unwrap().ber
        };
        let (one, many) = (run("off"), run("on"));
        assert!(one.iter().all(|(_, c)| c.bit_errors > 0), "{file}: errors to compare: {one:?}");
        assert_eq!(one, many, "{file}");
    }
}
