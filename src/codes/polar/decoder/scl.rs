//! Successive-cancellation list decoding (Tal and Vardy, "List decoding of
//! polar codes", IEEE Trans. IT 2015) on the plan's nodes, with the path
//! metric of the min-sum approximation (Balatsoukas-Stimming, Bastani Parizi,
//! Burg, "LLR-based successive cancellation list decoding of polar codes",
//! IEEE TSP 2015): deciding bit b against LLR λ costs |λ| when b disagrees
//! with the sign of λ, nothing otherwise.
//!
//! Whole nodes fork as in Hashemi, Condo, Gross, "Fast and flexible
//! successive-cancellation list decoders for polar codes" (IEEE TSP 2017):
//! a Rate-1 node over its min(L − 1, size) least reliable bits, an SPC node
//! over min(L, size − 1) of them after the parity fix, a repetition node
//! between its two codewords; a Rate-0 node only adds its cost. That keeps
//! exactly the paths bit-by-bit SCL keeps (a unit test compares the two
//! frame by frame at L = 2, 8 and 32). Within one
//! step every path's candidates are "keep" then "flip", and the L best are
//! kept with ties going to the earlier candidate: with one path nothing
//! forks and the decisions are SC's (the same plan and arithmetic).
//!
//! Paths share what they have in common: every depth's LLRs and every
//! node's bits live in pools of L buffers with reference counts, a path
//! holds an index into each, a copy of a path copies the indices, and a
//! write into a shared buffer takes a free one instead (each write covers
//! the whole buffer, so nothing is copied).

use super::minsum::{f, g, hard, rep_sum};
use super::plan::{Node, Op, Plan, side};
use crate::codes::llr::Llr;
use crate::codes::polar::spec::{PcRegister, PolarSpec};
use crate::codes::polar::transform::words;

/// No buffer.
const NONE: u8 = u8::MAX;

/// The cost of deciding `b` (a sign mask) against LLR `a`.
#[inline(always)]
fn penalty(a: f32, b: u32) -> f32 {
    if hard(a) != b { a.abs() } else { 0.0 }
}

/// Pools of L buffers of one size with reference counts.
struct Pool<T> {
    size: usize,
    data: Vec<T>,
    refs: Vec<u8>,
}

impl<T: Copy + Default> Pool<T> {
    fn new(size: usize, list: usize) -> Self {
        Self { size, data: vec![T::default(); size * list], refs: vec![0; list] }
    }

    fn get(&self, b: u8) -> &[T] {
        let at = usize::from(b) * self.size;
        &self.data[at..at + self.size]
    }

    /// The buffer a path holding `held` may overwrite whole: its own if no
    /// other path shares it, otherwise a free one (the shared one released).
    fn writable(&mut self, held: &mut u8) -> &mut [T] {
        if *held == NONE || self.refs[usize::from(*held)] > 1 {
            if *held != NONE {
                self.refs[usize::from(*held)] -= 1;
            }
            let free = self.refs.iter().position(|&r| r == 0).expect("a pool holds a buffer for each of the L paths");
            self.refs[free] = 1;
            *held = free as u8;
        }
        let at = usize::from(*held) * self.size;
        &mut self.data[at..at + self.size]
    }
}

/// A candidate while a node forks.
#[derive(Debug, Clone, Copy)]
struct Cand {
    /// Position of the path it comes from in the list.
    origin: usize,
    /// Which fork steps flipped.
    flips: u32,
    /// SPC: whether the least reliable bit is flipped.
    toggled: bool,
    pm: f32,
}

/// The scratch of one thread: the paths of one codeword.
pub(super) struct ListDecoder {
    list: usize,
    m: u32,
    channel: Vec<f32>,
    /// LLRs of depth d < m.
    llr: Vec<Pool<f32>>,
    /// Bits of the node at depth d on side s, at 2d + s (d ≤ m).
    bits: Vec<Pool<u8>>,
    /// For every path id, its buffer in each LLR pool and each bit pool.
    path_llr: Vec<Vec<u8>>,
    path_bits: Vec<Vec<u8>>,
    pm: Vec<f32>,
    pc: Vec<PcRegister>,
    /// Path ids in list order.
    active: Vec<usize>,
    /// For each path of the list during a fork: the node's least reliable
    /// positions, least first, and their |λ| (a repetition node's: |Σλ|).
    order: Vec<Vec<usize>>,
    mags: Vec<Vec<f32>>,
    cands: Vec<Cand>,
    /// Scratch of the forks and of `survive`.
    next: Vec<Cand>,
    keys: Vec<u64>,
    old: Vec<usize>,
    uses: Vec<u8>,
    free: Vec<usize>,
}

impl ListDecoder {
    pub(super) fn new(m: u32, list: usize) -> Self {
        let n = 1usize << m;
        Self {
            list,
            m,
            channel: vec![0.0; n],
            llr: (0..m).map(|d| Pool::new(1 << d, list)).collect(),
            bits: (0..=m).flat_map(|d| [Pool::new(1 << d, list), Pool::new(1 << d, list)]).collect(),
            path_llr: vec![vec![NONE; m as usize]; list],
            path_bits: vec![vec![NONE; 2 * m as usize + 2]; list],
            pm: vec![0.0; list],
            pc: vec![PcRegister::default(); list],
            active: Vec::with_capacity(list),
            order: vec![Vec::new(); list],
            mags: vec![Vec::new(); list],
            cands: Vec::with_capacity(2 * list),
            next: Vec::with_capacity(2 * list),
            keys: Vec::with_capacity(2 * list),
            old: Vec::with_capacity(list),
            uses: Vec::with_capacity(list),
            free: Vec::with_capacity(list),
        }
    }

    /// Decode the codeword of `llrs`: its bits packed into `x`, and the
    /// CRC's verdict on the path taken (the best one that passes, else the
    /// best one), `None` when `spec` has no CRC.
    pub(super) fn decode<T: Llr>(&mut self, plan: &Plan, spec: &PolarSpec, llrs: &[T], x: &mut [u64]) -> Option<bool> {
        for (c, &a) in self.channel.iter_mut().zip(llrs) {
            *c = a.to_f32();
        }
        self.reset();
        for &op in &plan.ops {
            match op {
                Op::Left { d } => self.children(d, None),
                Op::Right { d, start } => self.children(d, Some(start)),
                Op::Combine { d, start } => self.combine(d, start),
                Op::Decide { node: Node::Rate0, d, start } => self.rate0(d, start, plan.parity),
                Op::Decide { node: Node::Parity, d, start } => self.parity_bit(d, start),
                Op::Decide { node, d, start } => self.fork(node, d, start, plan.parity),
            }
        }
        self.choose(spec, x)
    }

    fn reset(&mut self) {
        for p in self.llr.iter_mut() {
            p.refs.fill(0);
        }
        for p in self.bits.iter_mut() {
            p.refs.fill(0);
        }
        for v in self.path_llr.iter_mut().chain(self.path_bits.iter_mut()) {
            v.fill(NONE);
        }
        self.active.clear();
        self.active.push(0);
        self.pm[0] = 0.0;
        self.pc[0] = PcRegister::default();
    }

    /// The LLRs of depth `d` of path `id`.
    fn node_llr(&self, id: usize, d: u32) -> &[f32] {
        held_llr(&self.channel, &self.llr, &self.path_llr[id], d)
    }

    /// Every path's left child LLRs (`right` = None) or right child LLRs
    /// (the node's start) from its node at depth `d`.
    fn children(&mut self, d: u32, right: Option<usize>) {
        let h = 1usize << (d - 1);
        for &id in &self.active {
            let (lower, upper) = self.llr.split_at_mut(d as usize);
            let src = match upper.first() {
                Some(pool) => pool.get(self.path_llr[id][d as usize]),
                None => &self.channel[..],
            };
            let dst = lower[d as usize - 1].writable(&mut self.path_llr[id][d as usize - 1]);
            let (a, b) = src.split_at(h);
            match right {
                None => {
                    for ((o, &a), &b) in dst.iter_mut().zip(a).zip(b) {
                        *o = f(a, b);
                    }
                }
                Some(_) => {
                    let u = self.bits[2 * (d as usize - 1)].get(self.path_bits[id][2 * (d as usize - 1)]);
                    for (((o, &a), &b), &u) in dst.iter_mut().zip(a).zip(b).zip(u) {
                        *o = g(a, b, u32::from(u) << 31);
                    }
                }
            }
        }
    }

    fn combine(&mut self, d: u32, start: usize) {
        let h = 1usize << (d - 1);
        let (slot_l, slot_out) = (2 * (d as usize - 1), 2 * d as usize + side(d, start));
        for &id in &self.active {
            let (lower, upper) = self.bits.split_at_mut(slot_out);
            let (l, r) = (lower[slot_l].get(self.path_bits[id][slot_l]), lower[slot_l + 1].get(self.path_bits[id][slot_l + 1]));
            let out = upper[0].writable(&mut self.path_bits[id][slot_out]);
            for i in 0..h {
                out[i] = l[i] ^ r[i];
                out[h + i] = r[i];
            }
        }
    }

    fn rate0(&mut self, d: u32, start: usize, parity: bool) {
        let slot = 2 * d as usize + side(d, start);
        for j in 0..self.active.len() {
            let id = self.active[j];
            let cost = penalty_sum(self.node_llr(id, d), 0);
            self.pm[id] += cost;
            self.bits[slot].writable(&mut self.path_bits[id][slot]).fill(0);
            if parity {
                self.pc[id].steps(1 << d);
            }
        }
    }

    fn parity_bit(&mut self, d: u32, start: usize) {
        let slot = 2 * d as usize + side(d, start);
        for j in 0..self.active.len() {
            let id = self.active[j];
            self.pc[id].step();
            let b = self.pc[id].parity();
            self.pm[id] += penalty(self.node_llr(id, d)[0], u32::from(b) << 31);
            self.bits[slot].writable(&mut self.path_bits[id][slot])[0] = b;
        }
    }

    /// Fork every path over a Rate-1, repetition or SPC node and keep the L best.
    fn fork(&mut self, node: Node, d: u32, start: usize, parity: bool) {
        let s = 1usize << d;
        let l = self.list;
        let steps = match node {
            _ if l == 1 => 0,
            Node::Rate1 => (l - 1).min(s),
            Node::Rep => 1,
            _ => l.min(s - 1),
        };
        // Each path's first candidate, the least reliable positions it forks
        // over and what flipping them costs.
        self.cands.clear();
        for j in 0..self.active.len() {
            let id = self.active[j];
            let llr = held_llr(&self.channel, &self.llr, &self.path_llr[id], d);
            let (order, mags) = (&mut self.order[j], &mut self.mags[j]);
            let want = match node {
                Node::Rate1 => steps,
                Node::Spc => steps + 1,
                _ => 0,
            };
            least_reliable(llr, want, order);
            mags.clear();
            mags.extend(order.iter().map(|&i| llr[i].abs()));
            let (pm, toggled) = match node {
                Node::Rep => {
                    let sum = rep_sum(llr.iter().copied());
                    mags.push(sum.abs());
                    (self.pm[id] + penalty_sum(llr, hard(sum)), false)
                }
                Node::Spc => {
                    let odd = llr.iter().fold(0, |p, &a| p ^ hard(a)) != 0;
                    (self.pm[id] + if odd { mags[0] } else { 0.0 }, odd)
                }
                _ => (self.pm[id], false),
            };
            self.cands.push(Cand { origin: j, flips: 0, toggled, pm });
        }
        for t in 0..steps {
            self.next.clear();
            for c in &self.cands {
                let mags = &self.mags[c.origin];
                let cost = match node {
                    Node::Rate1 => mags[t],
                    Node::Rep => mags[0],
                    _ => mags[t + 1] + if c.toggled { -mags[0] } else { mags[0] },
                };
                self.next.push(*c);
                self.next.push(Cand { flips: c.flips | 1 << t, toggled: c.toggled != (node == Node::Spc), pm: c.pm + cost, ..*c });
            }
            keep_best(&mut self.next, l, &mut self.keys);
            std::mem::swap(&mut self.cands, &mut self.next);
        }
        self.survive(node, d, start, parity);
    }

    /// Make the candidates the new list: paths no candidate comes from are
    /// dropped, the others copied for each further candidate, then each
    /// candidate's bits written.
    fn survive(&mut self, node: Node, d: u32, start: usize, parity: bool) {
        let slot = 2 * d as usize + side(d, start);
        let mut old = std::mem::take(&mut self.old);
        old.clear();
        old.extend_from_slice(&self.active);
        self.uses.clear();
        self.uses.resize(old.len(), 0);
        for c in &self.cands {
            self.uses[c.origin] += 1;
        }
        self.free.clear();
        self.free.extend((0..self.list).filter(|id| !old.contains(id)));
        for (j, &id) in old.iter().enumerate() {
            if self.uses[j] == 0 {
                self.drop_path(id);
                self.free.push(id);
            }
        }
        // Every copy before any write: a copy takes its origin as it was.
        let cands = std::mem::take(&mut self.cands);
        self.active.clear();
        for c in &cands {
            let from = old[c.origin];
            // The last candidate of an origin takes the origin itself.
            self.uses[c.origin] -= 1;
            let id = if self.uses[c.origin] > 0 {
                let id = self.free.pop().expect("at most L candidates survive");
                self.copy_path(from, id);
                id
            } else {
                from
            };
            self.active.push(id);
        }
        for (c, &id) in cands.iter().zip(&self.active) {
            self.pm[id] = c.pm;
            let llr = held_llr(&self.channel, &self.llr, &self.path_llr[id], d);
            let out = self.bits[slot].writable(&mut self.path_bits[id][slot]);
            write_node(node, llr, &self.order[c.origin], c, out);
            if parity {
                self.pc[id].step();
                self.pc[id].take(out[0]);
            }
        }
        self.cands = cands;
        self.old = old;
    }

    fn copy_path(&mut self, from: usize, to: usize) {
        for d in 0..self.path_llr[from].len() {
            let b = self.path_llr[from][d];
            if b != NONE {
                self.llr[d].refs[usize::from(b)] += 1;
            }
            self.path_llr[to][d] = b;
        }
        for slot in 0..self.path_bits[from].len() {
            let b = self.path_bits[from][slot];
            if b != NONE {
                self.bits[slot].refs[usize::from(b)] += 1;
            }
            self.path_bits[to][slot] = b;
        }
        self.pm[to] = self.pm[from];
        self.pc[to] = self.pc[from];
    }

    fn drop_path(&mut self, id: usize) {
        for (pool, b) in self.llr.iter_mut().zip(self.path_llr[id].iter_mut()) {
            if *b != NONE {
                pool.refs[usize::from(*b)] -= 1;
                *b = NONE;
            }
        }
        for (pool, b) in self.bits.iter_mut().zip(self.path_bits[id].iter_mut()) {
            if *b != NONE {
                pool.refs[usize::from(*b)] -= 1;
                *b = NONE;
            }
        }
    }

    /// The path to output, its codeword into `x`, and its CRC verdict.
    fn choose(&self, spec: &PolarSpec, x: &mut [u64]) -> Option<bool> {
        let root = 2 * self.m as usize;
        let mut by_metric: Vec<usize> = (0..self.active.len()).collect();
        by_metric.sort_by(|&a, &b| self.pm[self.active[a]].total_cmp(&self.pm[self.active[b]]).then(a.cmp(&b)));
        let pack = |j: usize, x: &mut [u64]| {
            let bits = self.bits[root].get(self.path_bits[self.active[j]][root]);
            for (w, chunk) in x.iter_mut().zip(bits.chunks(64)) {
                *w = chunk.iter().enumerate().fold(0, |acc, (i, &b)| acc | u64::from(b) << i);
            }
        };
        if spec.check().is_none() {
            pack(by_metric[0], x);
            return None;
        }
        let mut info = vec![0u8; spec.code().k()];
        let mut candidate = vec![0u64; words(spec.n())];
        for &j in &by_metric {
            pack(j, &mut candidate);
            spec.info_of_x(&candidate, &mut info);
            if spec.check().is_some_and(|c| c.passes(&info)) {
                x.copy_from_slice(&candidate);
                return Some(true);
            }
        }
        pack(by_metric[0], x);
        Some(false)
    }
}

/// The LLRs of depth `d` of a path holding the LLR buffers `held`: the
/// channel's at the root.
fn held_llr<'a>(channel: &'a [f32], pools: &'a [Pool<f32>], held: &[u8], d: u32) -> &'a [f32] {
    match pools.get(d as usize) {
        Some(pool) => pool.get(held[d as usize]),
        None => channel,
    }
}

/// The `want` least reliable positions of `llr` (smallest |λ| first, the
/// lower index first on a tie) into `order`. |λ|'s bit pattern orders as
/// |λ| does, and with the index below it every key is distinct; the least
/// `want` keys are kept sorted in a short array that most keys pass by
/// after one comparison.
fn least_reliable(llr: &[f32], want: usize, order: &mut Vec<usize>) {
    order.clear();
    if want == 0 {
        return;
    }
    let mut best = [u64::MAX; super::MAX_LIST + 1];
    let best = &mut best[..want];
    for (i, a) in llr.iter().enumerate() {
        let key = u64::from(a.abs().to_bits()) << 32 | i as u64;
        if key >= best[want - 1] {
            continue;
        }
        let mut at = want - 1;
        while at > 0 && best[at - 1] > key {
            best[at] = best[at - 1];
            at -= 1;
        }
        best[at] = key;
    }
    order.extend(best.iter().take_while(|&&k| k != u64::MAX).map(|&k| (k & 0xFFFF_FFFF) as usize));
}

/// The cost of deciding every LLR of `llr` as `b` (a sign mask), summed in
/// eight interleaved partial sums (the order is fixed, so the value is).
fn penalty_sum(llr: &[f32], b: u32) -> f32 {
    let mut acc = [0.0f32; 8];
    let mut chunks = llr.chunks_exact(8);
    for c in &mut chunks {
        acc = std::array::from_fn(|k| acc[k] + penalty(c[k], b));
    }
    let rest = chunks.remainder().iter().fold(0.0, |s, &a| s + penalty(a, b));
    acc.iter().fold(rest, |s, &a| s + a)
}

/// Keep the `l` candidates of least metric (the earlier on a tie), in order.
/// Metrics are sums of non-negative costs, so their bit patterns order as
/// they do; with the index below them every key is distinct, and the l-th
/// least key is the last one kept.
fn keep_best(cands: &mut Vec<Cand>, l: usize, keys: &mut Vec<u64>) {
    if cands.len() <= l {
        return;
    }
    let key = |i: usize, c: &Cand| u64::from(c.pm.to_bits()) << 32 | i as u64;
    keys.clear();
    keys.extend(cands.iter().enumerate().map(|(i, c)| key(i, c)));
    keys.sort_unstable();
    let last = keys[l - 1];
    let mut i = 0;
    cands.retain(|c| {
        i += 1;
        key(i - 1, c) <= last
    });
}

/// A forked node's bits for candidate `c` into `out`.
fn write_node(node: Node, llr: &[f32], order: &[usize], c: &Cand, out: &mut [u8]) {
    match node {
        Node::Rep => {
            let b = (hard(rep_sum(llr.iter().copied())) >> 31) as u8 ^ (c.flips & 1) as u8;
            out.fill(b);
        }
        _ => {
            for (o, &a) in out.iter_mut().zip(llr) {
                *o = (hard(a) >> 31) as u8;
            }
            // Rate-1 step t flips order[t]; SPC step t flips order[t + 1].
            let shift = usize::from(node == Node::Spc);
            for (t, &p) in order.iter().skip(shift).enumerate() {
                if c.flips >> t & 1 == 1 {
                    out[p] ^= 1;
                }
            }
            if c.toggled {
                out[order[0]] ^= 1;
            }
        }
    }
}
