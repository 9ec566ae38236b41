//! Successive-cancellation decoding of [`LANES`] codewords in lockstep: every
//! LLR and bit is a row of one value per codeword, so each operation of the
//! plan is one vector loop (one 256-bit register per row) whatever the
//! node's size. The arithmetic is [`super::minsum`]'s.

use super::minsum::{SIGN, f, g, hard};
use super::plan::{Node, Op, Plan};
use crate::codes::llr::Llr;
use crate::codes::polar::spec::PcRegister;
use crate::codes::simd::SimdLevel;

/// Codewords decoded together: 8 `f32` rows of 32 bytes. Sixteen (one
/// AVX-512 register a row) ran at 90 Mb/s per CPU-second for (1024, 512)
/// on the 2-core Xeon against 132 for eight, whose scratch (96 KiB) stays
/// in the caches close to the core; four ran at 98.
pub(super) const LANES: usize = 8;

type Row = [f32; LANES];
type Bits = [u32; LANES];

/// The scratch of one thread: LLRs of every depth and the codeword's bits.
pub(super) struct ScLanes {
    /// Depth d at rows 2^d .. 2^(d+1); the channel (depth m) at N .. 2N.
    llr: Vec<Row>,
    /// The codeword's bits as sign masks, a node's at its own u indices.
    bits: Vec<Bits>,
}

impl ScLanes {
    pub(super) fn new(m: u32) -> Self {
        let n = 1usize << m;
        Self { llr: vec![[0.0; LANES]; 2 * n], bits: vec![[0; LANES]; n] }
    }

    /// Decode up to [`LANES`] codewords (`units[l]` the N LLRs of lane l;
    /// lanes past `units.len()` decode zeros and are ignored) into
    /// `x[l]`, the codeword's bits packed 64 to a word.
    pub(super) fn decode<T: Llr>(&mut self, level: SimdLevel, plan: &Plan, units: &[&[T]], x: &mut [Vec<u64>]) {
        assert!(level.is_supported(), "SIMD level {level} is not supported by this CPU");
        match level {
            // SAFETY: the CPU supports the level's features (checked above).
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => unsafe { self.decode_avx512(plan, units, x) },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => unsafe { self.decode_avx2(plan, units, x) },
            _ => self.decode_body(plan, units, x),
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn decode_avx512<T: Llr>(&mut self, plan: &Plan, units: &[&[T]], x: &mut [Vec<u64>]) {
        self.decode_body(plan, units, x);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn decode_avx2<T: Llr>(&mut self, plan: &Plan, units: &[&[T]], x: &mut [Vec<u64>]) {
        self.decode_body(plan, units, x);
    }

    #[inline(always)]
    fn decode_body<T: Llr>(&mut self, plan: &Plan, units: &[&[T]], x: &mut [Vec<u64>]) {
        let n = 1usize << plan.m;
        // Transposed in tiles of LANES × LANES: whole runs of each unit read,
        // whole rows written (a plain loop either way becomes gathers or
        // scatters, a third of the decoder's time).
        for (at, rows) in (0..n).step_by(LANES).zip(self.llr[n..].chunks_mut(LANES)) {
            let mut tile = [[0.0f32; LANES]; LANES];
            for (t, u) in tile.iter_mut().zip(units) {
                for (v, a) in t.iter_mut().zip(&u[at..]) {
                    *v = a.to_f32();
                }
            }
            for (r, row) in rows.iter_mut().enumerate() {
                *row = std::array::from_fn(|l| tile[l][r]);
            }
        }
        let mut pc = [PcRegister::default(); LANES];
        for &op in &plan.ops {
            match op {
                Op::Left { d } => {
                    let (dst, src) = self.llr.split_at_mut(1 << d);
                    let h = 1 << (d - 1);
                    let (a, b) = src[..2 * h].split_at(h);
                    for ((o, a), b) in dst[h..].iter_mut().zip(a).zip(b) {
                        *o = std::array::from_fn(|l| f(a[l], b[l]));
                    }
                }
                Op::Right { d, start } => {
                    let (dst, src) = self.llr.split_at_mut(1 << d);
                    let h = 1 << (d - 1);
                    let (a, b) = src[..2 * h].split_at(h);
                    for (((o, a), b), u) in dst[h..].iter_mut().zip(a).zip(b).zip(&self.bits[start..start + h]) {
                        *o = std::array::from_fn(|l| g(a[l], b[l], u[l]));
                    }
                }
                Op::Combine { d, start } => {
                    let h = 1 << (d - 1);
                    let (l, r) = self.bits[start..start + 2 * h].split_at_mut(h);
                    for (l, r) in l.iter_mut().zip(r.iter()) {
                        *l = std::array::from_fn(|k| l[k] ^ r[k]);
                    }
                }
                Op::Decide { node, d, start } => {
                    let s = 1usize << d;
                    let llr = &self.llr[s..2 * s];
                    let bits = &mut self.bits[start..start + s];
                    decide(node, llr, bits);
                    if plan.parity {
                        for (l, y) in pc.iter_mut().enumerate() {
                            match node {
                                Node::Parity => {
                                    y.step();
                                    bits[0][l] = if y.parity() == 1 { SIGN } else { 0 };
                                }
                                Node::Rate0 => y.steps(s),
                                _ => {
                                    y.step();
                                    y.take((bits[0][l] >> 31) as u8);
                                }
                            }
                        }
                    }
                }
            }
        }
        // Each row's sign bits as one mask (bit l for lane l), then each
        // lane's bits gathered from 64 masks at a time.
        for (w, chunk) in self.bits.chunks(64).enumerate() {
            let mut masks = [0u16; 64];
            for (m, b) in masks.iter_mut().zip(chunk) {
                *m = b.iter().enumerate().fold(0, |acc, (l, &v)| acc | ((v >> 31) as u16) << l);
            }
            for (l, words) in x.iter_mut().enumerate().take(units.len()) {
                words[w] = masks.iter().enumerate().fold(0, |acc, (i, &m)| acc | u64::from((m >> l) & 1) << i);
            }
        }
    }
}

/// A whole node's bits from its LLRs, lane by lane.
#[inline(always)]
fn decide(node: Node, llr: &[Row], bits: &mut [Bits]) {
    match node {
        // A parity-check bit is set from the register after this.
        Node::Rate0 | Node::Parity => bits.fill([0; LANES]),
        Node::Rate1 => {
            for (b, a) in bits.iter_mut().zip(llr) {
                *b = std::array::from_fn(|l| hard(a[l]));
            }
        }
        Node::Rep => {
            // Row by row, each lane summing its LLRs in index order from 0.0
            // as `rep_sum` does.
            let mut sum: Row = [0.0; LANES];
            for a in llr {
                sum = std::array::from_fn(|l| sum[l] + a[l]);
            }
            let b: Bits = std::array::from_fn(|l| hard(sum[l]));
            bits.fill(b);
        }
        Node::Spc => {
            let mut parity = [0u32; LANES];
            let mut least = [f32::INFINITY; LANES];
            for (b, a) in bits.iter_mut().zip(llr) {
                *b = std::array::from_fn(|l| hard(a[l]));
                parity = std::array::from_fn(|l| parity[l] ^ b[l]);
                least = std::array::from_fn(|l| least[l].min(a[l].abs()));
            }
            // Flip the first of the least reliable bits where the parity is odd.
            for (b, a) in bits.iter_mut().zip(llr) {
                let flip: Bits = std::array::from_fn(|l| if parity[l] != 0 && a[l].abs() == least[l] { SIGN } else { 0 });
                *b = std::array::from_fn(|l| b[l] ^ flip[l]);
                parity = std::array::from_fn(|l| parity[l] ^ flip[l]);
            }
        }
    }
}
