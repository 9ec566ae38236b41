//! The family's link simulation: random frames through the encoder and the
//! BSID channel, decoded frame by frame, with symbol, bit and frame errors
//! counted in the shared tally.

use super::channel::{Bsid, BsidAwgn, BsidParams};
use super::code::SyncCode;
use super::decoder::{DecoderConfig, Framing, Received, SyncMapDecoder};
use super::encoder::SyncEncoder;
use crate::codes::bits::BitSource;
use crate::codes::channel::Channel;
use crate::codes::decode::{Batch, BatchDecoder, Decoded, UnitSpan};
use crate::codes::error::{CodeResult, invalid};
use crate::codes::framing::{Cut, Cutter, WindowCutter};
use crate::codes::sim::{Link, Tally, Transmitter, noise_seed};
use std::collections::VecDeque;

/// Which channel probabilities the link's x axis sets (the others keep the
/// base values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// Pi = Pd = x.
    PiPd,
    /// Pi = x.
    Pi,
    /// Pd = x.
    Pd,
    /// Ps = x.
    Ps,
}

impl Sweep {
    /// The channel at `x`.
    pub fn at(self, base: &BsidParams, x: f64) -> CodeResult<BsidParams> {
        let (pi, pd, ps) = (base.pi(), base.pd(), base.ps());
        match self {
            Sweep::PiPd => BsidParams::new(x, x, ps),
            Sweep::Pi => BsidParams::new(x, pd, ps),
            Sweep::Pd => BsidParams::new(pi, x, ps),
            Sweep::Ps => BsidParams::new(pi, pd, x),
        }
    }
}

/// Makes the channel of a point from its probabilities and seed.
pub type MakeChannel<C> = Box<dyn Fn(BsidParams, u64) -> CodeResult<C> + Send>;

/// Makes the decoder of a point for its channel's probabilities (its limits
/// depend on them): a decoder of windows of a stream for
/// [`Framing::Stream`], of whole frames for [`Framing::Frames`].
pub type MakeDecoder<T> = Box<dyn Fn(BsidParams) -> CodeResult<Box<dyn BatchDecoder<T>>> + Send>;

/// Frames of a [`SyncCode`] over a BSID channel whose probabilities follow
/// the x axis ([`Sweep`]), decoded by a decoder made for each point (its
/// limits depend on the channel): a [`SyncMapDecoder`], or any other. Each frame is a counted frame,
/// its symbols counted too. With [`Framing::Stream`] the received stream is
/// cut by the shared [`WindowCutter`], which learns from each report where
/// the next frame starts; with [`Framing::Frames`] each frame's received
/// block is handed whole.
///
/// # Example
/// ```
/// use gpufec::codes::sim::{Link, Tally};
/// use gpufec::codes::sync::{BsidParams, DecoderConfig, Framing, Sweep, SyncCode, SyncLink};
/// let code = SyncCode::random(16, 8, 30, 1).unwrap();
/// let base = BsidParams::new(0.0, 0.0, 0.0).unwrap();
/// let cfg = DecoderConfig { framing: Framing::Stream, ..DecoderConfig::default() };
/// let mut link = SyncLink::hard(code, base, Sweep::PiPd, cfg, 1);
/// link.start(1e-3, 5).unwrap();
/// let mut tally = Tally::new(1e-3, link.frame_bits()).counting_symbols(link.symbol_bits());
/// link.run(1200, true, &mut tally).unwrap();
/// assert_eq!((tally.point().frames, tally.point().symbols), (10, 300));
/// ```
pub struct SyncLink<C: Channel<In = u8>>
where
    C::Out: Received,
{
    code: SyncCode,
    base: BsidParams,
    sweep: Sweep,
    framing: Framing,
    make: MakeChannel<C>,
    make_decoder: MakeDecoder<C::Out>,
    point: Option<PointState<C>>,
    /// What the decoder is, before a point built its own.
    about: Option<String>,
    /// Information bits by counter ([`Self::with_counter_bits`]).
    counter_bits: bool,
}

struct PointState<C: Channel<In = u8>>
where
    C::Out: Received,
{
    tx: Transmitter<SyncEncoder, C>,
    decoder: Box<dyn BatchDecoder<C::Out>>,
    cutter: WindowCutter<C::Out>,
    cut: Cut<C::Out>,
    /// Information bits of frames sent and not yet counted, in order.
    reference: VecDeque<Vec<u8>>,
    info: Vec<u8>,
    received: Vec<C::Out>,
    decoded: Decoded,
}

/// The CPU decoder of `code` with `cfg` on `threads` threads, for each point.
fn cpu_decoders<T: Received>(code: &SyncCode, cfg: DecoderConfig, threads: usize) -> MakeDecoder<T> {
    let code = code.clone();
    Box::new(move |p| Ok(Box::new(SyncMapDecoder::<T>::new(code.clone(), p, cfg, threads)?) as Box<dyn BatchDecoder<T>>))
}

impl SyncLink<Bsid> {
    /// Hard bits: the [`Bsid`] channel, decoded from its received bits by
    /// the CPU decoder.
    pub fn hard(code: SyncCode, base: BsidParams, sweep: Sweep, cfg: DecoderConfig, threads: usize) -> Self {
        let decoders = cpu_decoders(&code, cfg, threads);
        Self::new(code, base, sweep, cfg.framing, Box::new(|p, seed| Ok(Bsid::new(p, seed))), decoders)
    }
}

impl SyncLink<BsidAwgn> {
    /// `f32` LLRs: the BSID events, then BPSK over AWGN at `ebn0_db` (per
    /// information bit, at the code's rate), decoded by the CPU decoder.
    pub fn soft(code: SyncCode, base: BsidParams, sweep: Sweep, cfg: DecoderConfig, threads: usize, ebn0_db: f64) -> Self {
        let rate = code.rate().min(1.0);
        let decoders = cpu_decoders(&code, cfg, threads);
        Self::new(code, base, sweep, cfg.framing, Box::new(move |p, seed| BsidAwgn::new(p, ebn0_db, rate, seed)), decoders)
    }
}

impl<C: Channel<In = u8> + Send> SyncLink<C>
where
    C::Out: Received,
{
    /// A link of `code` whose channel and decoder at each point `make` and
    /// `make_decoder` build; `framing` says whether the decoder takes
    /// windows of the stream or whole frames.
    pub fn new(code: SyncCode, base: BsidParams, sweep: Sweep, framing: Framing, make: MakeChannel<C>, make_decoder: MakeDecoder<C::Out>) -> Self {
        Self { code, base, sweep, framing, make, make_decoder, point: None, about: None, counter_bits: false }
    }

    /// Draw the information bits by counter ([`BitSource::counter`]), as
    /// the device link simulator does (`gpu::DeviceSyncLink`): with the
    /// same seed and whole frames, this link is that simulator's host model
    /// and counts the same errors.
    pub fn with_counter_bits(mut self) -> Self {
        self.counter_bits = true;
        self
    }

    /// Described as `about` (where its decoder runs, and how) until a
    /// point builds the decoder of its own channel.
    pub fn described(mut self, about: String) -> Self {
        self.about = Some(about);
        self
    }

    fn decoder_at(&self, x: f64) -> CodeResult<Box<dyn BatchDecoder<C::Out>>> {
        (self.make_decoder)(self.sweep.at(&self.base, x)?)
    }
}

impl<C: Channel<In = u8> + Send> Link for SyncLink<C>
where
    C::Out: Received,
{
    fn start(&mut self, x: f64, seed: u64) -> CodeResult<()> {
        let decoder = self.decoder_at(x)?;
        let channel = (self.make)(self.sweep.at(&self.base, x)?, noise_seed(seed))?;
        let cutter = WindowCutter::new(decoder.shapes()[0].items)?;
        let source = if self.counter_bits { BitSource::counter(seed) } else { BitSource::new(seed) };
        let tx = Transmitter::with_source(source, SyncEncoder::new(self.code.clone()), channel);
        self.point = Some(PointState {
            tx,
            decoder,
            cutter,
            cut: Cut::default(),
            reference: VecDeque::new(),
            info: Vec::new(),
            received: Vec::new(),
            decoded: Decoded::default(),
        });
        Ok(())
    }

    fn check(&self, x: f64) -> CodeResult<()> {
        self.decoder_at(x).map(drop)
    }

    fn frame_bits(&self) -> usize {
        self.code.info_bits()
    }

    fn symbol_bits(&self) -> usize {
        self.code.symbol_bits()
    }

    fn run(&mut self, bits: u64, last: bool, tally: &mut Tally) -> CodeResult<()> {
        let k = self.code.info_bits();
        let framing = self.framing;
        let st = self.point.as_mut().ok_or_else(|| invalid!("a link runs only after start"))?;
        let frames = usize::try_from(bits).map_err(|_| invalid!("{bits} bits in one chunk"))?.div_ceil(k).max(1);
        let mut blocks = Vec::with_capacity(frames);
        st.received.clear();
        for _ in 0..frames {
            let (start, info_at) = (st.received.len(), st.info.len());
            st.tx.send(k, &mut st.info, &mut st.received)?;
            st.reference.push_back(st.info.split_off(info_at));
            blocks.push(UnitSpan { start, len: st.received.len() - start, format: 0 });
        }
        match framing {
            Framing::Frames => {
                // Frames the channel deleted whole are no unit: count them lost.
                let spans: Vec<UnitSpan> = blocks.iter().copied().filter(|s| s.len > 0).collect();
                st.decoded.clear();
                st.decoder.decode(&Batch::spans(&st.received, &spans)?, &mut st.decoded)?;
                let mut reports = st.decoded.reports.iter();
                let mut got = st.decoded.bits.chunks(k);
                for block in &blocks {
                    let sent = st.reference.pop_front().unwrap_or_default();
                    match (block.len > 0).then(|| (got.next(), reports.next())) {
                        Some((Some(bits), Some(r))) => tally.add_unit(bits, &sent, r),
                        _ => tally.add_unit(&vec![0; k], &sent, &Default::default()),
                    };
                }
            }
            Framing::Stream => {
                if last {
                    // One more frame, never counted, so that the last
                    // counted frame's window is as full as any other's.
                    let mut spare = Vec::new();
                    st.tx.send(k, &mut spare, &mut st.received)?;
                }
                st.cutter.cut(&st.received, &[], &mut st.cut)?;
                let mut next = 0;
                while next < st.cut.units.len() && !st.reference.is_empty() {
                    let unit = st.cut.units[next];
                    let items = &st.cut.items[unit.span.start..unit.span.start + unit.span.len];
                    st.decoded.clear();
                    st.decoder.decode(&Batch::spans(items, &[UnitSpan { start: 0, len: items.len(), format: 0 }])?, &mut st.decoded)?;
                    let report = st.decoded.reports[0];
                    let sent = st.reference.pop_front().unwrap_or_default();
                    if !tally.done() {
                        tally.add_unit(&st.decoded.bits, &sent, &report);
                    }
                    st.cutter.learn(report.consumed, &mut st.cut)?;
                    next += 1;
                }
                if next == st.cut.units.len() {
                    st.cut.clear();
                }
            }
        }
        Ok(())
    }

    fn describe(&self) -> String {
        match &self.point {
            Some(p) => p.decoder.describe(),
            None => self.about.clone().unwrap_or_else(|| self.code.describe()),
        }
    }
}
