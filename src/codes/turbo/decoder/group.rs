//! Whole iterations for L code blocks of one code in lockstep: load the
//! channel LLRs into each constituent decoder's order, alternate the two
//! half-iterations, exchange scaled extrinsics through the interleaver, and
//! stop each block on its own criterion.

use super::config::{DecoderConfig, EarlyStop};
use super::siso::{Edges, Inputs, Lanes, Metric, Tables, Workspace, half_iteration};
use crate::codes::simd::SimdLevel;
use crate::codes::turbo::code::TurboCode;
use crate::codes::crc::{CRC24A, CRC24B, Crc};

/// What one block's decoding found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct BlockResult {
    pub iterations: u32,
    /// The CRC's verdict on the decided bits, when the early stop checks one.
    pub check: Option<bool>,
}

/// A block's hard decisions and (optionally) a-posteriori LLRs, written by
/// [`Group::decode`].
pub(super) struct BlockOut<'a> {
    pub bits: &'a mut [u8],
    pub soft: Option<&'a mut [f32]>,
}

/// Scratch memory of L blocks, reused from group to group.
pub(super) struct Group<M, const L: usize> {
    sys: [Vec<Lanes<M, L>>; 2],
    par: [Vec<Lanes<M, L>>; 2],
    apriori: [Vec<Lanes<M, L>>; 2],
    extrinsic: Vec<Lanes<M, L>>,
    /// Decisions of the last iteration, info order: `[lane][k]`.
    hard: Vec<Vec<u8>>,
    app: Vec<Lanes<M, L>>,
    edges: [Edges<M, L>; 2],
    ws: Workspace<M, L>,
}

impl<M: Metric, const L: usize> Group<M, L> {
    pub(super) fn new(code: &TurboCode, cfg: &DecoderConfig) -> Self {
        let (k, m, s) = (code.k(), code.trellis().memory(), code.trellis().states());
        let stages = k + m;
        let z = || vec![Lanes::splat(M::ZERO); stages];
        let end = |p: usize| if p + 1 == cfg.subblocks { stages } else { cfg.subblock_start(k, p + 1) };
        let longest = (0..cfg.subblocks).map(|p| end(p) - cfg.subblock_start(k, p)).max().unwrap_or(stages);
        Self {
            sys: [z(), z()],
            par: [z(), z()],
            apriori: [vec![Lanes::splat(M::ZERO); k], vec![Lanes::splat(M::ZERO); k]],
            extrinsic: vec![Lanes::splat(M::ZERO); k],
            hard: vec![vec![0; k]; L],
            app: vec![Lanes::splat(M::ZERO); k],
            edges: [Edges::new(s, cfg.subblocks), Edges::new(s, cfg.subblocks)],
            ws: Workspace::new(s, longest),
        }
    }

    /// Decode up to L blocks, `llrs[lane]` each a whole sent block in the
    /// family's layout (f32, already scaled; `i16` metrics round them);
    /// lanes past `llrs.len()` idle.
    /// The lane loops are compiled for `level` (which the CPU must support);
    /// every level computes the same IEEE operations, so the same results.
    pub(super) fn decode(&mut self, level: SimdLevel, code: &TurboCode, tables: &Tables, cfg: &DecoderConfig, llrs: &[&[f32]], out: &mut [BlockOut<'_>]) -> [BlockResult; L] {
        assert!(level.is_supported(), "SIMD level {level} is not supported by this CPU");
        match level {
            // SAFETY: the CPU supports the level's features (checked above).
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => unsafe { self.decode_avx512(code, tables, cfg, llrs, out) },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => unsafe { self.decode_avx2(code, tables, cfg, llrs, out) },
            _ => self.decode_body(code, tables, cfg, llrs, out),
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn decode_avx512(&mut self, code: &TurboCode, tables: &Tables, cfg: &DecoderConfig, llrs: &[&[f32]], out: &mut [BlockOut<'_>]) -> [BlockResult; L] {
        self.decode_body(code, tables, cfg, llrs, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn decode_avx2(&mut self, code: &TurboCode, tables: &Tables, cfg: &DecoderConfig, llrs: &[&[f32]], out: &mut [BlockOut<'_>]) -> [BlockResult; L] {
        self.decode_body(code, tables, cfg, llrs, out)
    }

    #[inline(always)]
    fn decode_body(&mut self, code: &TurboCode, tables: &Tables, cfg: &DecoderConfig, llrs: &[&[f32]], out: &mut [BlockOut<'_>]) -> [BlockResult; L] {
        let (k, m) = (code.k(), code.trellis().memory());
        let layout = code.layout();
        let perm = code.permutation();
        let (d1, d2) = (layout.stream_start(1), layout.stream_start(2));
        for v in [&mut self.sys, &mut self.par].into_iter().flatten() {
            v.fill(Lanes::splat(M::ZERO));
        }
        for (l, u) in llrs.iter().enumerate() {
            for i in 0..k {
                self.sys[0][i][l] = M::from_f32(u[i]);
                self.par[0][i][l] = M::from_f32(u[d1 + i]);
                self.sys[1][i][l] = M::from_f32(u[perm[i] as usize]);
                self.par[1][i][l] = M::from_f32(u[d2 + i]);
            }
            for i in 0..m {
                self.sys[0][k + i][l] = M::from_f32(u[layout.tail(2 * i)]);
                self.par[0][k + i][l] = M::from_f32(u[layout.tail(2 * i + 1)]);
                self.sys[1][k + i][l] = M::from_f32(u[layout.tail(2 * m + 2 * i)]);
                self.par[1][k + i][l] = M::from_f32(u[layout.tail(2 * m + 2 * i + 1)]);
            }
        }
        self.apriori[0].fill(Lanes::splat(M::ZERO));
        self.edges.iter_mut().for_each(Edges::reset);
        let mut results = [BlockResult::default(); L];
        let mut done = [false; L];
        done[llrs.len()..].fill(true);
        // The scaling as a fraction of 256, for integer metrics.
        let (scale, q8) = (cfg.scaling, (cfg.scaling * 256.0).round() as i32);
        for it in 1..=cfg.iterations {
            // First decoder, natural order.
            let inputs = Inputs { sys: &self.sys[0], par: &self.par[0], apriori: &self.apriori[0] };
            half_iteration(tables, cfg, k, &inputs, &mut self.edges[0], &mut self.ws, &mut self.extrinsic);
            for (i, a) in self.apriori[1].iter_mut().enumerate() {
                let e = &self.extrinsic[perm[i] as usize];
                *a = Lanes::from_fn(|l| e[l].scaled(scale, q8));
            }
            // Second decoder, interleaved order.
            let inputs = Inputs { sys: &self.sys[1], par: &self.par[1], apriori: &self.apriori[1] };
            half_iteration(tables, cfg, k, &inputs, &mut self.edges[1], &mut self.ws, &mut self.extrinsic);
            for (i, &at) in perm.iter().enumerate() {
                let (e, a, s) = (self.extrinsic[i], self.apriori[1][i], self.sys[1][i]);
                self.app[i] = Lanes::from_fn(|l| s[l].add(a[l]).add(e[l]));
                self.apriori[0][at as usize] = Lanes::from_fn(|l| e[l].scaled(scale, q8));
            }
            for (l, o) in out.iter_mut().enumerate() {
                if done[l] {
                    continue;
                }
                let hard = &mut self.hard[l];
                let mut changed = false;
                for (app, &at) in self.app.iter().zip(perm) {
                    let b = u8::from(app[l] < M::ZERO);
                    changed |= hard[at as usize] != b;
                    hard[at as usize] = b;
                }
                let check = crc_of(cfg.early_stop).map(|c| c.check(hard));
                let stop = match cfg.early_stop {
                    EarlyStop::Never => false,
                    EarlyStop::Stable => it > 1 && !changed,
                    EarlyStop::Crc24A | EarlyStop::Crc24B => check == Some(true),
                };
                if stop || it == cfg.iterations {
                    done[l] = true;
                    results[l] = BlockResult { iterations: it as u32, check };
                    o.bits.copy_from_slice(hard);
                    if let Some(soft) = o.soft.as_deref_mut() {
                        for i in 0..k {
                            soft[perm[i] as usize] = self.app[i][l].to_f32();
                        }
                    }
                }
            }
            if done.iter().all(|&d| d) {
                break;
            }
        }
        results
    }
}

/// The CRC an early stop checks.
fn crc_of(stop: EarlyStop) -> Option<&'static Crc> {
    match stop {
        EarlyStop::Crc24A => Some(&CRC24A),
        EarlyStop::Crc24B => Some(&CRC24B),
        EarlyStop::Never | EarlyStop::Stable => None,
    }
}
