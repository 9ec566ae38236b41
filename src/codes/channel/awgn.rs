//! Additive white Gaussian noise at a given Eb/N0, and BPSK over it with the
//! matched LLR demapper.

use super::Channel;
use super::bpsk::bpsk_symbol;
use super::noise::GaussianNoise;
use super::quantize::Quantizer;
use crate::codes::bits::first_non_bit;
use crate::codes::error::{CodeResult, invalid};
use crate::codes::llr::Llr;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Eb/N0 a channel accepts, dB: beyond these the noise is meaningless for a
/// decoder (all noise, or none at f32 precision).
pub const EBN0_RANGE_DB: std::ops::RangeInclusive<f64> = -30.0..=60.0;

/// Noise variance per real BPSK sample for `ebn0_db` at code rate `rate`
/// (information bits over channel bits actually sent): σ² = 1 / (2·R·Eb/N0).
pub fn noise_variance(ebn0_db: f64, rate: f64) -> CodeResult<f64> {
    if !ebn0_db.is_finite() || !EBN0_RANGE_DB.contains(&ebn0_db) {
        // Huge values in exponent form, not three hundred digits.
        let shown = if ebn0_db.abs() < 1e9 { ebn0_db.to_string() } else { format!("{ebn0_db:e}") };
        return Err(invalid!(
            "Eb/N0 = {shown} dB is outside {}..={} dB",
            EBN0_RANGE_DB.start(),
            EBN0_RANGE_DB.end()
        ));
    }
    if !(rate > 0.0 && rate <= 1.0) {
        return Err(invalid!("code rate {rate} is outside (0, 1]"));
    }
    Ok(1.0 / (2.0 * rate * 10f64.powf(ebn0_db / 10.0)))
}

/// Seeded AWGN on real samples: sample `i` of the stream gets noise that
/// depends only on the seed and `i` ([`GaussianNoise`]), so the same seed gives
/// the same noise however the stream is cut and on however many threads.
///
/// # Example
/// ```
/// use gpufec::codes::channel::Awgn;
/// let mut ch = Awgn::new(3.0, 0.5, 7).unwrap();
/// let mut y = vec![1.0f32; 4];
/// ch.add_noise(&mut y);
/// let mut again = Awgn::new(3.0, 0.5, 7).unwrap();
/// let mut z = vec![1.0f32; 4];
/// again.add_noise(&mut z[..1]);
/// again.add_noise(&mut z[1..]);
/// assert_eq!(y, z);
/// ```
#[derive(Debug, Clone)]
pub struct Awgn {
    sigma: f32,
    llr_gain: f32,
    noise: GaussianNoise,
    /// Stream position of the next sample.
    position: u64,
}

impl Awgn {
    /// Channel for `ebn0_db` at effective code rate `rate`, noise drawn from `seed`.
    pub fn new(ebn0_db: f64, rate: f64, seed: u64) -> CodeResult<Self> {
        let var = noise_variance(ebn0_db, rate)?;
        Ok(Self { sigma: var.sqrt() as f32, llr_gain: (2.0 / var) as f32, noise: GaussianNoise::new(seed), position: 0 })
    }

    /// Noise standard deviation σ.
    pub fn sigma(&self) -> f32 {
        self.sigma
    }

    /// LLR gain 2/σ² that the matched demapper applies.
    pub fn llr_gain(&self) -> f32 {
        self.llr_gain
    }

    /// Add the noise of the next `samples.len()` stream positions, on all
    /// cores when there are many.
    pub fn add_noise(&mut self, samples: &mut [f32]) {
        self.noise.par_add_scaled(self.position, self.sigma, samples);
        self.position += samples.len() as u64;
    }
}

/// BPSK over AWGN with the matched demapper: channel bits in, LLRs 2y/σ² out
/// as `f32`, or quantized to `i8` by a [`Quantizer`]. Bit for bit what the
/// `BpskMapper` → `Awgn` → `LlrDemapper` (→ `Quantize`) blocks give for the
/// same seed, Eb/N0 and rate, in one pass over each piece of the stream and on
/// all cores when the input is large.
///
/// # Example
/// ```
/// use gpufec::codes::channel::{BpskAwgn, Channel, Quantizer};
/// let mut ch = BpskAwgn::new(60.0, 0.5, 1).unwrap();
/// let mut llrs = Vec::new();
/// ch.transmit(&[0, 1], &mut llrs).unwrap();
/// assert!(llrs[0] > 0.0 && llrs[1] < 0.0);
/// let mut q = BpskAwgn::<i8>::with_quantizer(60.0, 0.5, 1, Quantizer::new(1.0).unwrap()).unwrap();
/// let mut soft = Vec::new();
/// q.transmit(&[0, 1], &mut soft).unwrap();
/// assert_eq!(soft, vec![127, -127]);
/// ```
#[derive(Debug, Clone)]
pub struct BpskAwgn<T: Llr = f32> {
    awgn: Awgn,
    quantizer: Quantizer,
    _llr: PhantomData<T>,
}

impl BpskAwgn<f32> {
    /// BPSK at `ebn0_db` for effective code rate `rate`, noise from `seed`, `f32` LLRs.
    pub fn new(ebn0_db: f64, rate: f64, seed: u64) -> CodeResult<Self> {
        Self::with_quantizer(ebn0_db, rate, seed, Quantizer::new(1.0)?)
    }
}

impl<T: Llr> BpskAwgn<T> {
    /// BPSK at `ebn0_db` for effective code rate `rate`, noise from `seed`,
    /// LLRs as `T` (`quantizer` makes `i8` ones; `f32` ignores it).
    pub fn with_quantizer(ebn0_db: f64, rate: f64, seed: u64, quantizer: Quantizer) -> CodeResult<Self> {
        Ok(Self { awgn: Awgn::new(ebn0_db, rate, seed)?, quantizer, _llr: PhantomData })
    }
}

impl<T: Llr> BpskAwgn<T> {
    /// [`Channel::transmit`] into a slice: the LLRs of `bits` (0/1; anything
    /// else is an error and nothing is sent) into `out`, of the same length.
    pub fn transmit_into(&mut self, bits: &[u8], out: &mut [T]) -> CodeResult<()> {
        assert_eq!(bits.len(), out.len(), "one LLR per channel bit");
        let Awgn { sigma, llr_gain, noise, position } = &mut self.awgn;
        let (sigma, gain, q) = (*sigma, *llr_gain, self.quantizer);
        // Each piece checks its own bits on its thread, where the map reads
        // them next: a scan of the whole input first would hold every core
        // up behind this block's thread. The first bad bit of all is the
        // one reported; what the pieces wrote then is not sent.
        let bad = AtomicUsize::new(usize::MAX);
        noise.par_pieces(*position, out, |first, offset, piece| {
            let bits = &bits[offset..offset + piece.len()];
            if let Some(i) = first_non_bit(bits) {
                bad.fetch_min(offset + i, Ordering::Relaxed);
                return;
            }
            // The three blocks' operations in their order (map, add σ·z,
            // demap, quantize), in the noise generator's vector loop.
            noise.map_into(first, bits, piece, move |b, z| T::from_llr((bpsk_symbol(b) + sigma * z) * gain, &q));
        });
        let i = bad.into_inner();
        if i != usize::MAX {
            return Err(invalid!("channel bit at index {i} is {}, not 0 or 1", bits[i]));
        }
        *position += bits.len() as u64;
        Ok(())
    }
}

impl<T: Llr> Channel for BpskAwgn<T> {
    type In = u8;
    type Out = T;

    fn transmit(&mut self, bits: &[u8], out: &mut Vec<T>) -> CodeResult<()> {
        let at = out.len();
        out.resize(at + bits.len(), T::default());
        let r = self.transmit_into(bits, &mut out[at..]);
        if r.is_err() {
            out.truncate(at);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variance_follows_ebn0_and_rate() {
        let v = noise_variance(0.0, 0.5).unwrap();
        assert!((v - 1.0).abs() < 1e-12);
        let v = noise_variance(10.0, 1.0).unwrap();
        assert!((v - 0.05).abs() < 1e-12);
        assert!(noise_variance(f64::NAN, 0.5).is_err());
        assert!(noise_variance(3.0, 0.0).is_err());
        assert!(noise_variance(3.0, 1.5).is_err());
    }

    #[test]
    fn noise_has_the_asked_variance_and_is_seeded() {
        let mut a = Awgn::new(2.0, 0.5, 11).unwrap();
        let mut y = vec![0.0f32; 200_000];
        a.add_noise(&mut y);
        let var = y.iter().map(|&x| (x as f64).powi(2)).sum::<f64>() / y.len() as f64;
        let want = noise_variance(2.0, 0.5).unwrap();
        // Standard error of the variance estimate is want*sqrt(2/N) ≈ 0.3 %.
        assert!((var / want - 1.0).abs() < 0.015, "{var} vs {want}");
        let mut b = Awgn::new(2.0, 0.5, 11).unwrap();
        let mut z = vec![0.0f32; 200_000];
        b.add_noise(&mut z);
        assert_eq!(y, z);
    }

    #[test]
    fn bpsk_awgn_is_the_block_chain_in_one_pass() {
        let bits: Vec<u8> = (0..10_001u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 31) as u8).collect();
        let mut ch = BpskAwgn::new(1.5, 0.75, 4).unwrap();
        let mut llrs = Vec::new();
        ch.transmit(&bits[..77], &mut llrs).unwrap();
        ch.transmit(&bits[77..], &mut llrs).unwrap();
        // Map, add noise, demap: the three blocks' operations in their order.
        let mut awgn = Awgn::new(1.5, 0.75, 4).unwrap();
        let mut y: Vec<f32> = bits.iter().map(|&b| bpsk_symbol(b)).collect();
        awgn.add_noise(&mut y);
        let want: Vec<f32> = y.iter().map(|&v| awgn.llr_gain() * v).collect();
        assert_eq!(llrs, want);
        assert!(ch.transmit(&[0, 2], &mut llrs).is_err());
        // Bad bits in several of the pieces that run on all cores: the first
        // is named, nothing is appended and the stream does not move on.
        let mut bad = vec![0u8; 1 << 20];
        (bad[300_001], bad[700_000], bad[1_000_000]) = (5, 2, 9);
        let before = llrs.len();
        let e = ch.transmit(&bad, &mut llrs).unwrap_err().to_string();
        assert!(e.contains("index 300001 is 5"), "{e}");
        assert_eq!(llrs.len(), before);
        let mut again = BpskAwgn::new(1.5, 0.75, 4).unwrap();
        let (mut x, mut y) = (Vec::new(), Vec::new());
        ch.transmit(&bits[..100], &mut x).unwrap();
        again.transmit(&bits, &mut y).unwrap();
        again.transmit(&bits[..100], &mut y).unwrap();
        assert_eq!(x, y[bits.len()..]);
        // Quantized in the same pass, over pieces large enough to run on all cores.
        let long: Vec<u8> = (0..300_001u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 31) as u8).collect();
        let q = Quantizer::new(3.7).unwrap();
        let mut f = Vec::new();
        let mut whole = BpskAwgn::new(2.5, 0.5, 8).unwrap();
        whole.transmit(&long[..5], &mut f).unwrap();
        whole.transmit(&long[5..], &mut f).unwrap();
        let mut want = Vec::new();
        q.quantize(&f, &mut want).unwrap();
        let mut ch = BpskAwgn::<i8>::with_quantizer(2.5, 0.5, 8, q).unwrap();
        let mut got = Vec::new();
        for c in long.chunks(70_001) {
            ch.transmit(c, &mut got).unwrap();
        }
        assert_eq!(got, want);
    }
}
