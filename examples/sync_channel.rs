//! The BSID channel against its model, from what it received: per input bit
//! the drift change (k insertions, then the bit sent or deleted) against its
//! law P(−1) = Pd, P(k) = Pi^k·Pt + Pi^(k+1)·Pd, each with a 95 % binomial
//! interval; substitutions among the bits sent alone (no insertion, no
//! deletion); and the drift after T bits against the Markov chain's law
//! (`drift_law`, the one the decoder's limits come from).
//!
//! ```text
//! cargo run --release --example sync_channel -- [bits] [T]
//! ```
//! Defaults: 4·10^6 input bits per channel, T = 100.

use gpufec::codes::bits::BitSource;
use gpufec::codes::sync::drift::drift_law;
use gpufec::codes::sync::{Bsid, BsidParams};

/// Half-width of the 95 % binomial interval of a rate `p` over `n` trials.
fn half_width(p: f64, n: f64) -> f64 {
    1.96 * (p * (1.0 - p) / n).sqrt()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bits = args.first().map_or(Ok(4e6), |a| a.parse::<f64>())? as usize;
    let t = args.get(1).map_or(Ok(100), |a| a.parse::<usize>())?;
    println!("{bits} input bits per channel, seed 7; drift after T = {t} bits over {} segments\n", bits / t);
    println!("| Pi, Pd, Ps | drift change per bit | law | measured | 95 % interval | inside |");
    println!("|---|---|---|---|---|---|");
    let mut drift_rows = Vec::new();
    for (pi, pd, ps) in [(1e-3, 1e-3, 0.0), (1e-2, 1e-2, 1e-2), (5e-2, 3e-2, 2e-2), (0.1, 0.1, 0.0)] {
        let p = BsidParams::new(pi, pd, ps)?;
        let mut input = vec![0u8; bits];
        BitSource::new(7).fill(&mut input);
        let (mut out, mut drift) = (Vec::new(), Vec::new());
        Bsid::new(p, 7).transmit_tracking(&input, &mut out, &mut drift)?;
        let label = format!("{pi:e}, {pd:e}, {ps:e}");
        // Drift changes −1 ..= 3 per input bit, and flips among bits sent alone.
        let mut seen = [0u64; 5];
        let (mut alone, mut flips) = (0u64, 0u64);
        let mut before = 0i64;
        for (i, (&d, &x)) in drift.iter().zip(&input).enumerate() {
            let change = d - before;
            seen[(change + 1).clamp(0, 4) as usize] += 1;
            if change == 0 {
                // The bit's last output is the bit itself (or, after an
                // insertion and a deletion, an inserted one).
                alone += 1;
                flips += u64::from(out[(i as i64 + d) as usize] != x);
            }
            before = d;
        }
        let pt = p.pt();
        for (j, &count) in seen.iter().enumerate().take(4) {
            let k = j as i32 - 1;
            let law = if k < 0 { pd } else { pi.powi(k) * pt + pi.powi(k + 1) * pd };
            let got = count as f64 / bits as f64;
            let w = half_width(law, bits as f64);
            println!("| {label} | {k:+} | {law:.4e} | {got:.4e} | ±{w:.1e} | {} |", if (got - law).abs() <= w { "yes" } else { "no" });
        }
        // Among bits sent alone, a transmission flips with Ps; an insertion
        // followed by a deletion leaves a random bit.
        let both = pi * pd;
        let law = (pt * ps + both / 2.0) / (pt + both);
        let got = flips as f64 / alone as f64;
        let w = half_width(law, alone as f64);
        println!("| {label} | substitutions of the {alone} bits sent alone | {law:.4e} | {got:.4e} | ±{w:.1e} | {} |", if (got - law).abs() <= w { "yes" } else { "no" });
        // The drift after T bits, segment by segment.
        let (lo, law) = drift_law(&p, t)?;
        let segments = bits / t;
        let mut hist = vec![0u64; law.len()];
        let mut start = 0i64;
        for s in 0..segments {
            let end = drift[(s + 1) * t - 1];
            hist[((end - start - lo).max(0) as usize).min(law.len() - 1)] += 1;
            start = end;
        }
        let n = segments as f64;
        let moments = |f: &dyn Fn(usize) -> f64| -> (f64, f64) {
            let mean: f64 = (0..law.len()).map(|i| f(i) * (lo + i as i64) as f64).sum();
            let var: f64 = (0..law.len()).map(|i| f(i) * ((lo + i as i64) as f64 - mean).powi(2)).sum();
            (mean, var)
        };
        let (law_mean, law_var) = moments(&|i| law[i]);
        let (mean, var) = moments(&|i| hist[i] as f64 / n);
        // Pearson's χ² over the bins with at least 20 expected (the rest
        // pooled into one), against its degrees of freedom.
        let (mut chi2, mut bins, mut rest_law, mut rest_seen) = (0.0, 0usize, 0.0, 0.0);
        for i in 0..law.len() {
            if law[i] * n >= 20.0 {
                chi2 += (hist[i] as f64 - law[i] * n).powi(2) / (law[i] * n);
                bins += 1;
            } else {
                (rest_law, rest_seen) = (rest_law + law[i] * n, rest_seen + hist[i] as f64);
            }
        }
        if rest_law > 0.0 {
            chi2 += (rest_seen - rest_law).powi(2) / rest_law;
            bins += 1;
        }
        drift_rows.push(format!("| {label} | {law_mean:.4} | {mean:.4} | {law_var:.4} | {var:.4} | {chi2:.1} on {} |", bins - 1));
    }
    println!("\n| Pi, Pd, Ps | drift after T: mean, law | measured | variance, law | measured | χ² on degrees of freedom (bins ≥ 20 expected, the rest pooled) |");
    println!("|---|---|---|---|---|---|");
    for row in drift_rows {
        println!("{row}");
    }
    Ok(())
}
