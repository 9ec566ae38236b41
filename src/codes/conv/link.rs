//! The convolutional family's link: random bits → encoder → puncturer → BPSK
//! over AWGN → LLRs (→ i8) → depuncturer → tiles or frames → any Viterbi
//! decoder → error count. The `ber conv` command, the BER tests and the
//! benchmarks' noisy inputs share it.

use crate::codes::channel::{BpskAwgn, Quantizer, noise_variance};
use crate::codes::conv::{ConvChain, ConvEncoder, Depuncturer, EncoderMode, PuncturePattern, Punctured, Tiler, Trellis, ViterbiMode};
use crate::codes::decode::{Batch, BatchDecoder, Decoded};
use crate::codes::encode::Encoder;
use crate::codes::error::{CodeResult, invalid};
use crate::codes::llr::Llr;
use crate::codes::bits::BitSource;
use crate::codes::sim::{Link, Tally, Transmitter, noise_seed};
use std::sync::Arc;

/// What a convolutional link sends and how it is cut for the decoder.
#[derive(Debug, Clone)]
pub struct ConvSetup {
    /// Code tables.
    pub trellis: Arc<Trellis>,
    /// Puncturing (the identity for the mother rate).
    pub puncture: PuncturePattern,
    /// Tiled stream or terminated frames.
    pub mode: ViterbiMode,
    /// Information bits per counted frame (the frame itself in frame mode).
    pub frame_bits: usize,
    /// Scale of the `i8` quantizer; `None` picks [`Quantizer::matched`] at
    /// each point. Unused with `f32` LLRs.
    pub i8_scale: Option<f32>,
}

impl ConvSetup {
    /// Check that the parts fit together.
    pub fn validate(&self) -> CodeResult<()> {
        self.puncture.check_fits(self.trellis.n())?;
        if self.frame_bits == 0 {
            return Err(invalid!("a counted frame of 0 bits"));
        }
        if let ViterbiMode::Frame(f) = self.mode
            && self.frame_bits != f.frame
        {
            return Err(invalid!("the counted frame ({}) differs from the code frame ({})", self.frame_bits, f.frame));
        }
        if let Some(s) = self.i8_scale {
            Quantizer::new(s)?;
        }
        Ok(())
    }

    /// The encoder (with its puncturer) that a transmitter of this setup runs.
    pub fn encoder(&self) -> CodeResult<Punctured<ConvEncoder>> {
        let mode = match self.mode {
            ViterbiMode::Tiled(_) => EncoderMode::Streaming,
            ViterbiMode::Frame(f) => EncoderMode::Terminated { frame: f.frame },
        };
        Punctured::new(ConvEncoder::new(self.trellis.clone(), mode)?, self.puncture.clone(), self.trellis.n())
    }

    /// Information bits over channel bits actually sent (puncturing and tails counted).
    pub fn effective_rate(&self) -> CodeResult<f64> {
        Ok(self.encoder()?.rate())
    }

    /// The quantizer of `i8` LLRs at `ebn0_db`.
    pub fn quantizer(&self, ebn0_db: f64) -> CodeResult<Quantizer> {
        match self.i8_scale {
            Some(s) => Quantizer::new(s),
            None => Quantizer::matched(noise_variance(ebn0_db, self.effective_rate()?)?),
        }
    }

    /// LLRs per work unit of a decoder of plain (depunctured) units.
    pub fn unit_llrs(&self) -> usize {
        self.mode.unit_stages(self.trellis.k()) * self.trellis.n()
    }

    /// The transmitter of one point: bits from `seed`, noise from its
    /// [`noise_seed`], at `ebn0_db`.
    /// LLRs arrive as `T`, quantized (for `i8`) by [`Self::quantizer`].
    /// With `counter_bits`, the bits are [`BitSource::counter`]'s.
    fn transmitter<T: Llr>(&self, ebn0_db: f64, seed: u64, counter_bits: bool) -> CodeResult<Transmitter<Punctured<ConvEncoder>, BpskAwgn<T>>> {
        let encoder = self.encoder()?;
        let channel = self.channel(ebn0_db, seed)?;
        let source = if counter_bits { BitSource::counter(seed) } else { BitSource::new(seed) };
        Ok(Transmitter::with_source(source, encoder, channel))
    }

    /// The channel of one point: BPSK over AWGN at `ebn0_db` with the noise
    /// of `seed`'s [`noise_seed`], to `T` LLRs quantized by [`Self::quantizer`].
    pub fn channel<T: Llr>(&self, ebn0_db: f64, seed: u64) -> CodeResult<BpskAwgn<T>> {
        BpskAwgn::with_quantizer(ebn0_db, self.effective_rate()?, noise_seed(seed), self.quantizer(ebn0_db)?)
    }
}

/// A convolutional link decoding `T` LLRs with any [`BatchDecoder`] (CPU or
/// GPU) of depunctured units.
pub struct ConvLink<T: Llr> {
    setup: ConvSetup,
    /// The decoder takes tiles as sent and puts the erasures back itself.
    on_load: bool,
    /// LLRs per unit the decoder takes.
    unit: usize,
    decoder: Box<dyn BatchDecoder<T>>,
    /// Bits from [`BitSource::counter`] instead of [`BitSource::new`].
    counter_bits: bool,
    point: Option<PointState<T>>,
}

/// The streams and buffers of the point being run.
struct PointState<T: Llr> {
    tx: Transmitter<Punctured<ConvEncoder>, BpskAwgn<T>>,
    /// Puts the erasures back before the tiler, unless the decoder does.
    depuncturer: Option<Depuncturer>,
    tiler: Option<Tiler<T>>,
    /// Bits sent and not yet matched by decoded ones (the tiler holds some back).
    reference: Vec<u8>,
    received: Vec<T>,
    depunctured: Vec<T>,
    units: Vec<T>,
    decoded: Decoded,
}

impl<T: Llr> ConvLink<T> {
    /// The link of `setup`, decoded by `decoder` (which must take the setup's
    /// depunctured units).
    pub fn new(setup: ConvSetup, decoder: Box<dyn BatchDecoder<T>>) -> CodeResult<Self> {
        Self::build(setup, false, decoder)
    }

    /// The link of `chain`, decoded by `decoder` (which must take the
    /// chain's units: as sent when the chain's decoder depunctures).
    pub fn of(chain: &ConvChain, decoder: Box<dyn BatchDecoder<T>>) -> CodeResult<Self> {
        Self::build(chain.setup().clone(), chain.decoder_depunctures(), decoder)
    }

    /// Draw the bits by counter, as the device link simulator does
    /// (`gpu::DeviceConvLink`): with the same seed, decoder model and tiles,
    /// this link is that simulator's host model and counts the same errors.
    pub fn with_counter_bits(mut self) -> Self {
        self.counter_bits = true;
        self
    }

    fn build(setup: ConvSetup, on_load: bool, decoder: Box<dyn BatchDecoder<T>>) -> CodeResult<Self> {
        setup.validate()?;
        let unit = match (setup.mode, on_load) {
            (ViterbiMode::Tiled(t), true) => Tiler::<T>::punctured(t, setup.puncture.clone())?.unit_len(),
            _ => setup.unit_llrs(),
        };
        let takes = decoder.shapes()[0];
        if !takes.accepts(unit) {
            return Err(invalid!("the decoder takes units of {} LLRs, the link cuts units of {unit}: give both the same geometry", takes.items));
        }
        Ok(Self { setup, on_load, unit, decoder, counter_bits: false, point: None })
    }
}

impl<T: Llr> Link for ConvLink<T> {
    fn start(&mut self, ebn0_db: f64, seed: u64) -> CodeResult<()> {
        let s = &self.setup;
        self.point = Some(PointState {
            tx: s.transmitter(ebn0_db, seed, self.counter_bits)?,
            depuncturer: (!self.on_load).then(|| Depuncturer::new(s.puncture.clone())),
            tiler: match s.mode {
                ViterbiMode::Tiled(t) if self.on_load => Some(Tiler::punctured(t, s.puncture.clone())?.inverting(s.trellis.code().inverted())),
                ViterbiMode::Tiled(t) => Some(Tiler::new(t, s.trellis.n()).inverting(s.trellis.code().inverted())),
                ViterbiMode::Frame(_) => None,
            },
            reference: Vec::new(),
            received: Vec::new(),
            depunctured: Vec::new(),
            units: Vec::new(),
            decoded: Decoded::default(),
        });
        Ok(())
    }

    fn check(&self, ebn0_db: f64) -> CodeResult<()> {
        noise_variance(ebn0_db, self.setup.effective_rate()?).map(drop)
    }

    fn frame_bits(&self) -> usize {
        self.setup.frame_bits
    }

    fn run(&mut self, bits: u64, last: bool, tally: &mut Tally) -> CodeResult<()> {
        let st = self.point.as_mut().ok_or_else(|| invalid!("a link runs only after start"))?;
        let mut want = usize::try_from(bits).map_err(|_| invalid!("{bits} bits in one chunk"))?;
        if let ViterbiMode::Frame(f) = self.setup.mode {
            // Frames decode whole: round up to a frame.
            want = want.next_multiple_of(f.frame);
        }
        st.received.clear();
        // The bits go straight behind those still awaiting their decoded twins.
        st.tx.send(want, &mut st.reference, &mut st.received)?;
        let stream = match st.depuncturer.as_mut() {
            Some(d) => {
                st.depunctured.clear();
                d.depuncture(&st.received, &mut st.depunctured);
                if last {
                    d.finish()?;
                }
                &st.depunctured
            }
            None => &st.received,
        };
        let units = match st.tiler.as_mut() {
            Some(t) => {
                st.units.clear();
                t.push(stream, &mut st.units);
                if last {
                    t.finish(&mut st.units)?;
                }
                &st.units
            }
            None => stream,
        };
        st.decoded.clear();
        self.decoder.decode(&Batch::uniform(units, self.unit)?, &mut st.decoded)?;
        tally.count_units(&st.decoded.reports);
        let m = st.decoded.bits.len().min(st.reference.len());
        tally.add(&st.decoded.bits[..m], &st.reference[..m]);
        st.reference.drain(..m);
        Ok(())
    }

    fn describe(&self) -> String {
        self.decoder.describe()
    }
}

/// A seeded stream of noisy channel LLRs of one setup (BPSK over AWGN at a
/// stated Eb/N0, as sent: punctured if the setup is), grown on demand and cut
/// into the units of any decoder geometry: the benchmarks' inputs, generated
/// once per code, rate and LLR type.
///
/// # Example
/// ```
/// use gpufec::codes::conv::{ConvCode, ConvSetup, NoisyLlrs, PuncturePattern, TileConfig, Traceback, Trellis, ViterbiMode};
/// use std::sync::Arc;
/// let tile = TileConfig::new(64, 8, 8, Traceback::Serial).unwrap().with_group(4).unwrap();
/// let setup = ConvSetup {
///     trellis: Arc::new(Trellis::new(&ConvCode::k7_171_133())),
///     puncture: PuncturePattern::none(2),
///     mode: ViterbiMode::Tiled(tile),
///     frame_bits: 64,
///     i8_scale: None,
/// };
/// let mut noisy = NoisyLlrs::<i8>::new(&setup, 3.0, 1).unwrap();
/// let (units, bits) = noisy.units(ViterbiMode::Tiled(tile), false, 1000).unwrap();
/// assert_eq!(bits, 1024);
/// assert_eq!(units.len(), 4 * tile.unit_stages() * 2);
/// ```
pub struct NoisyLlrs<T: Llr> {
    setup: ConvSetup,
    tx: Transmitter<Punctured<ConvEncoder>, BpskAwgn<T>>,
    /// The channel LLRs as sent, and the information bits behind them.
    sent: Vec<T>,
    info: Vec<u8>,
}

impl<T: Llr> NoisyLlrs<T> {
    /// The stream of `setup` at `ebn0_db`, bits and noise from `seed`.
    pub fn new(setup: &ConvSetup, ebn0_db: f64, seed: u64) -> CodeResult<Self> {
        setup.validate()?;
        Ok(Self { setup: setup.clone(), tx: setup.transmitter(ebn0_db, seed, false)?, sent: Vec::new(), info: Vec::new() })
    }

    /// The channel LLRs of the first `bits` information bits (whole frames
    /// with their tails, for frames), sending more as needed.
    pub fn sent(&mut self, bits: usize) -> CodeResult<&[T]> {
        if self.info.len() < bits {
            self.tx.send(bits - self.info.len(), &mut self.info, &mut self.sent)?;
        }
        // Trellis stages of the first `bits` bits (frames are whole, tails included).
        let stages = match self.setup.mode {
            ViterbiMode::Tiled(_) => bits,
            ViterbiMode::Frame(f) => bits / f.frame * f.stages(self.setup.trellis.k()),
        };
        Ok(&self.sent[..self.setup.puncture.kept_before(stages as isize) as usize])
    }

    /// Work units of `mode` for at least `bits` information bits (whole
    /// units): tiles of the stream (`mode` tiled, the setup streaming) or its
    /// frames (`mode` the setup's frames). With `on_load`, tiles hold only the
    /// sent LLRs, for a decoder that depunctures as it loads; otherwise they are
    /// depunctured. Returns the units and their information bits.
    pub fn units(&mut self, mode: ViterbiMode, on_load: bool, bits: u64) -> CodeResult<(Vec<T>, u64)> {
        let unit_bits = match (mode, self.setup.mode) {
            (ViterbiMode::Tiled(t), ViterbiMode::Tiled(_)) => t.unit_bits(),
            (ViterbiMode::Frame(f), ViterbiMode::Frame(s)) if f == s && !on_load => f.frame,
            _ => return Err(invalid!("units of {mode:?} cannot be cut from a stream of {:?}", self.setup.mode)),
        } as u64;
        let units = bits.div_ceil(unit_bits).max(1);
        let info_bits = usize::try_from(units * unit_bits).map_err(|_| invalid!("{bits} bits do not fit this machine"))?;
        let (pattern, n, inverted) = (self.setup.puncture.clone(), self.setup.trellis.n(), self.setup.trellis.code().inverted());
        let sent = self.sent(info_bits)?;
        let mut out = Vec::new();
        match mode {
            ViterbiMode::Tiled(t) if on_load => {
                let mut tiler = Tiler::punctured(t, pattern)?.inverting(inverted);
                tiler.push(sent, &mut out);
                tiler.finish(&mut out)?;
            }
            ViterbiMode::Tiled(t) => {
                let mut depunctured = Vec::new();
                Depuncturer::new(pattern).depuncture(sent, &mut depunctured);
                let mut tiler = Tiler::new(t, n).inverting(inverted);
                tiler.push(&depunctured, &mut out);
                tiler.finish(&mut out)?;
            }
            ViterbiMode::Frame(_) => Depuncturer::new(pattern).depuncture(sent, &mut out),
        }
        Ok((out, info_bits as u64))
    }
}
