//! The binary substitution, insertion and deletion (BSID) channel of the
//! seed's Section II-B, counter-based like the AWGN channel.
//!
//! At time t one bit enters; an insertion (probability Pi) outputs a random
//! bit and the channel stays at time t, subject to the same events again; a
//! deletion (Pd) discards the bit; a transmission (Pt = 1 − Pi − Pd) outputs
//! it, flipped with probability Ps. So every input bit ends with a
//! transmission or a deletion: the last event is never an insertion.
//!
//! Counter-based: the events of input bit t are drawn from Philox block t of
//! the seed ([`GaussianNoise::words`]): word 0 gives the number of insertions
//! (the geometric law by thresholds Pi^k·2^32, so no logarithm is taken),
//! word 1 deletion or transmission, word 2 the substitution, word 3 the
//! inserted bits (at most 32 insertions, since Pi ≤ [`MAX_INSERTION`]). The
//! received stream therefore depends only on the seed and the input, not on
//! how it is cut into calls or on the number of threads.

use crate::codes::bits::first_non_bit;
use crate::codes::channel::{BpskAwgn, Channel, GaussianNoise, Quantizer};
use crate::codes::llr::Llr;
use crate::codes::error::{CodeResult, invalid};
use rayon::prelude::*;

/// Largest insertion probability: beyond 1/2 insertions outnumber the bits
/// sent, which no code corrects; it also bounds the insertions per bit at 32.
pub const MAX_INSERTION: f64 = 0.5;

/// Input bits per task when a call is cut across rayon's threads.
const PIECE: usize = 1 << 14;

/// 2^32, the scale of a Philox word.
const WORD: f64 = 4_294_967_296.0;

/// Mixed into the seed of the noise of [`BsidAwgn`], so that its Gaussian
/// samples and its events come from different Philox keys.
const AWGN_SALT: u64 = 0x5851_f42d_4c95_7f2d;

/// The seed of the AWGN of [`BsidAwgn`] made from `seed` (its events'
/// seed): what a device twin of the channel keys its noise with.
pub(crate) fn awgn_seed(seed: u64) -> u64 {
    seed ^ AWGN_SALT
}

/// The probabilities of a BSID channel: insertion Pi, deletion Pd,
/// substitution Ps of a transmitted bit.
///
/// # Example
/// ```
/// use gpufec::codes::sync::BsidParams;
/// let p = BsidParams::new(1e-2, 1e-2, 0.0).unwrap();
/// assert!((p.pt() - 0.98).abs() < 1e-12);
/// assert!(BsidParams::new(0.6, 0.6, 0.0).is_err()); // Pi + Pd above 1
/// assert!(BsidParams::new(f64::NAN, 0.0, 0.0).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BsidParams {
    pi: f64,
    pd: f64,
    ps: f64,
}

impl BsidParams {
    /// Pi, Pd, Ps each in [0, 1], Pi + Pd ≤ 1 and Pi ≤ [`MAX_INSERTION`].
    pub fn new(pi: f64, pd: f64, ps: f64) -> CodeResult<Self> {
        for (name, p) in [("Pi", pi), ("Pd", pd), ("Ps", ps)] {
            if !(0.0..=1.0).contains(&p) {
                return Err(invalid!("{name} = {p} is outside [0, 1]"));
            }
        }
        if pi + pd > 1.0 {
            return Err(invalid!("Pi + Pd = {} is above 1: nothing is left for transmission", pi + pd));
        }
        if pi > MAX_INSERTION {
            return Err(invalid!("Pi = {pi} is above {MAX_INSERTION}: insertions would outnumber the bits sent"));
        }
        Ok(Self { pi, pd, ps })
    }

    /// Insertion probability Pi.
    pub fn pi(&self) -> f64 {
        self.pi
    }

    /// Deletion probability Pd.
    pub fn pd(&self) -> f64 {
        self.pd
    }

    /// Substitution probability Ps of a transmitted bit.
    pub fn ps(&self) -> f64 {
        self.ps
    }

    /// Transmission probability Pt = 1 − Pi − Pd.
    pub fn pt(&self) -> f64 {
        1.0 - self.pi - self.pd
    }

    /// `Pi=… Pd=… Ps=…`.
    pub fn describe(&self) -> String {
        format!("Pi={:e} Pd={:e} Ps={:e}", self.pi, self.pd, self.ps)
    }
}

/// Word thresholds of the events: an event of probability p happens when
/// its word is below p·2^32.
#[derive(Debug, Clone)]
pub(super) struct Thresholds {
    /// Pi^k·2^32 for k = 1, 2, … while at least 1: at least k insertions.
    insert: Vec<u64>,
    /// Pd / (1 − Pi)·2^32: deleted, given that the bit is not preceded by
    /// another insertion.
    delete: u64,
    /// Ps·2^32.
    flip: u64,
}

impl Thresholds {
    pub(super) fn new(p: &BsidParams) -> Self {
        let mut insert = Vec::new();
        let mut power = p.pi;
        while power * WORD >= 1.0 {
            insert.push((power * WORD) as u64);
            power *= p.pi;
        }
        let delete = (p.pd / (1.0 - p.pi) * WORD).min(WORD) as u64;
        Self { insert, delete, flip: (p.ps * WORD) as u64 }
    }

    /// What happens to bit `x` under the words of its block: writes the
    /// inserted bits, then the bit if it is not deleted, to the front of
    /// `out`; returns how many were written.
    #[inline]
    pub(super) fn emit(&self, w: [u32; 4], x: u8, out: &mut [u8]) -> usize {
        let k = self.count(w);
        for (j, o) in out[..k].iter_mut().enumerate() {
            *o = (w[3] >> j) as u8 & 1;
        }
        if u64::from(w[1]) < self.delete {
            return k;
        }
        out[k] = x ^ u8::from(u64::from(w[2]) < self.flip);
        k + 1
    }

    /// How many bits the events of one block output.
    #[inline]
    fn count(&self, w: [u32; 4]) -> usize {
        self.insert.iter().take_while(|&&t| u64::from(w[0]) < t).count()
    }

    #[inline]
    fn outputs(&self, w: [u32; 4]) -> usize {
        self.count(w) + usize::from(u64::from(w[1]) >= self.delete)
    }
}

/// The event thresholds of `p` as a device channel takes them: at least k
/// insertions for k = 1..=32 (zero past the last), deletion, substitution
/// ([`Thresholds`]; Pi ≤ [`MAX_INSERTION`] gives at most 32).
pub(crate) fn event_thresholds(p: &BsidParams) -> ([u64; 32], u64, u64) {
    let th = Thresholds::new(p);
    let mut insert = [0u64; 32];
    insert[..th.insert.len()].copy_from_slice(&th.insert);
    (insert, th.delete, th.flip)
}

/// The BSID channel on hard bits: bits in, received bits out (as many, more
/// or fewer). It keeps its place in the stream and the drift so far.
///
/// # Example
/// ```
/// use gpufec::codes::channel::Channel;
/// use gpufec::codes::sync::{Bsid, BsidParams};
/// let p = BsidParams::new(0.05, 0.05, 0.01).unwrap();
/// let bits: Vec<u8> = (0..1000).map(|i| (i % 3 == 0) as u8).collect();
/// let (mut whole, mut parts) = (Vec::new(), Vec::new());
/// Bsid::new(p, 9).transmit(&bits, &mut whole).unwrap();
/// let mut ch = Bsid::new(p, 9);
/// ch.transmit(&bits[..337], &mut parts).unwrap();
/// ch.transmit(&bits[337..], &mut parts).unwrap();
/// assert_eq!(whole, parts); // the same events in any chunking
/// assert_eq!(ch.drift(), whole.len() as i64 - 1000);
/// ```
#[derive(Debug, Clone)]
pub struct Bsid {
    params: BsidParams,
    thresholds: Thresholds,
    words: GaussianNoise,
    /// Input bits sent so far: the block of the next one.
    position: u64,
    /// Received minus sent so far.
    drift: i64,
}

impl Bsid {
    /// The channel of `params`, its events drawn from `seed`.
    pub fn new(params: BsidParams, seed: u64) -> Self {
        Self { params, thresholds: Thresholds::new(&params), words: GaussianNoise::new(seed), position: 0, drift: 0 }
    }

    /// Its probabilities.
    pub fn params(&self) -> &BsidParams {
        &self.params
    }

    /// Bits received minus bits sent so far: the drift before the next bit.
    pub fn drift(&self) -> i64 {
        self.drift
    }

    /// [`Channel::transmit`], also appending to `drift` the drift after each
    /// input bit (so the true drift at any frame boundary can be read off).
    pub fn transmit_tracking(&mut self, bits: &[u8], out: &mut Vec<u8>, drift: &mut Vec<i64>) -> CodeResult<()> {
        self.send(bits, out, Some(drift))
    }

    fn send(&mut self, bits: &[u8], out: &mut Vec<u8>, drift: Option<&mut Vec<i64>>) -> CodeResult<()> {
        if let Some(i) = first_non_bit(bits) {
            return Err(invalid!("channel bit at index {i} is {}, not 0 or 1", bits[i]));
        }
        let (th, philox, first) = (&self.thresholds, &self.words, self.position);
        let words_of = |piece: usize, len: usize| {
            let mut w = vec![[0u32; 4]; len];
            philox.words(first + (piece * PIECE) as u64, &mut w);
            w
        };
        // Two passes: how much each piece outputs, then every piece writes
        // its own part of `out`.
        let counts: Vec<usize> =
            bits.par_chunks(PIECE).enumerate().map(|(p, piece)| words_of(p, piece.len()).into_iter().map(|w| th.outputs(w)).sum()).collect();
        let at = out.len();
        out.resize(at + counts.iter().sum::<usize>(), 0);
        let mut slices = Vec::with_capacity(counts.len());
        let mut rest = &mut out[at..];
        for &c in &counts {
            let (mine, later) = rest.split_at_mut(c);
            slices.push(mine);
            rest = later;
        }
        slices.into_par_iter().zip(bits.par_chunks(PIECE)).enumerate().for_each(|(p, (dst, piece))| {
            let mut written = 0;
            for (w, &x) in words_of(p, piece.len()).into_iter().zip(piece) {
                written += th.emit(w, x, &mut dst[written..]);
            }
        });
        if let Some(d) = drift {
            // Sequential and cheap: the counts again, bit by bit.
            let mut now = self.drift;
            for (p, piece) in bits.chunks(PIECE).enumerate() {
                for w in words_of(p, piece.len()) {
                    now += th.outputs(w) as i64 - 1;
                    d.push(now);
                }
            }
        }
        self.position += bits.len() as u64;
        self.drift += (out.len() - at) as i64 - bits.len() as i64;
        Ok(())
    }
}

impl Channel for Bsid {
    type In = u8;
    type Out = u8;

    fn transmit(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        self.send(bits, out, None)
    }
}

/// The BSID channel with soft output: the received bits are sent as BPSK
/// over AWGN and arrive as LLRs of `T` ([`BpskAwgn`], its noise indexed by
/// the received bit's place in the stream; `i8` ones quantized), so the
/// decoder's receiver metric works on LLRs.
///
/// # Example
/// ```
/// use gpufec::codes::channel::Channel;
/// use gpufec::codes::sync::{BsidAwgn, BsidParams};
/// let p = BsidParams::new(0.0, 0.0, 0.0).unwrap();
/// let mut ch = BsidAwgn::new(p, 8.0, 0.5, 3).unwrap();
/// let mut llrs = Vec::new();
/// ch.transmit(&[0, 1, 1], &mut llrs).unwrap();
/// assert_eq!(llrs.len(), 3);
/// assert!(llrs[0] > 0.0 && llrs[1] < 0.0 && llrs[2] < 0.0);
/// ```
#[derive(Debug, Clone)]
pub struct BsidAwgn<T: Llr = f32> {
    bsid: Bsid,
    awgn: BpskAwgn<T>,
    received: Vec<u8>,
}

impl BsidAwgn<f32> {
    /// BSID events of `params` from `seed`, then BPSK at `ebn0_db` for code
    /// rate `rate` (information bits over bits sent), noise from a key
    /// derived from `seed`.
    pub fn new(params: BsidParams, ebn0_db: f64, rate: f64, seed: u64) -> CodeResult<Self> {
        Self::with_quantizer(params, ebn0_db, rate, seed, Quantizer::new(1.0)?)
    }
}

impl<T: Llr> BsidAwgn<T> {
    /// [`BsidAwgn::new`] with LLRs of `T`, `i8` ones quantized by `quantizer`.
    pub fn with_quantizer(params: BsidParams, ebn0_db: f64, rate: f64, seed: u64, quantizer: Quantizer) -> CodeResult<Self> {
        Ok(Self { bsid: Bsid::new(params, seed), awgn: BpskAwgn::with_quantizer(ebn0_db, rate, seed ^ AWGN_SALT, quantizer)?, received: Vec::new() })
    }

    /// The BSID part: its probabilities and drift.
    pub fn bsid(&self) -> &Bsid {
        &self.bsid
    }

    /// [`Channel::transmit`], appending the drift after each input bit to `drift`.
    pub fn transmit_tracking(&mut self, bits: &[u8], out: &mut Vec<T>, drift: &mut Vec<i64>) -> CodeResult<()> {
        self.send(bits, out, Some(drift))
    }

    fn send(&mut self, bits: &[u8], out: &mut Vec<T>, drift: Option<&mut Vec<i64>>) -> CodeResult<()> {
        self.received.clear();
        self.bsid.send(bits, &mut self.received, drift)?;
        self.awgn.transmit(&self.received, out)
    }
}

impl<T: Llr> Channel for BsidAwgn<T> {
    type In = u8;
    type Out = T;

    fn transmit(&mut self, bits: &[u8], out: &mut Vec<T>) -> CodeResult<()> {
        self.send(bits, out, None)
    }
}
