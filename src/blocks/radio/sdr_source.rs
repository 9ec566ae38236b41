//! The SDR source block: complex samples from a radio through seify (cargo
//! feature `seify`).

use crate::blocks::stream;
use crate::blocks::{FirstError, Reporting};
use futuresdr::runtime::dev::prelude::*;
use futuresdr::seify::{Device, DeviceTrait, Direction, GenericDevice, RxStreamer};
use num_complex::Complex32;

/// How long one read waits for the radio, µs: short enough that a stopped
/// flowgraph is not held up by a radio that sends nothing.
const READ_TIMEOUT_US: i64 = 200_000;

/// What an [`SdrSource`] opens and tunes.
#[derive(Debug, Clone, PartialEq)]
pub struct SdrSettings {
    /// seify device arguments: `driver=rtlsdr`, `driver=soapy,soapy_driver=airspy`,
    /// `driver=hackrf`, `driver=dummy` (no radio: zeros).
    pub args: String,
    /// Centre frequency, Hz (above 0).
    pub frequency: f64,
    /// Sample rate, Hz (above 0).
    pub sample_rate: f64,
    /// Receive gain, dB (0 and up); `None` leaves the radio's own.
    pub gain: Option<f64>,
    /// Stop after this many samples; `None` runs until the flowgraph is stopped.
    pub samples: Option<u64>,
}

impl SdrSettings {
    /// The first setting that no radio could take, as (field, problem).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.args.trim().is_empty() {
            return Err(("args", "is empty (driver=dummy, driver=rtlsdr, driver=soapy, driver=hackrf, ...)".into()));
        }
        for (field, hz) in [("frequency", self.frequency), ("sample_rate", self.sample_rate)] {
            if !(hz.is_finite() && hz > 0.0) {
                return Err((field, format!("{hz} Hz is not a frequency above 0")));
            }
        }
        match self.gain {
            Some(g) if !(g.is_finite() && g >= 0.0) => Err(("gain", format!("{g} dB is not a gain of 0 dB or more"))),
            _ => Ok(()),
        }
    }
}

/// Receives complex baseband samples from a radio through
/// [seify](https://github.com/FutureSDR/seify): opens the device its
/// arguments name, tunes it (frequency, sample rate, gain) and streams its
/// first channel, for a given number of samples or until the flowgraph is
/// stopped.
///
/// A setting no radio could take is refused naming it, before the device is
/// opened; a device that cannot be opened or tuned is refused naming the
/// device arguments; a radio that fails while streaming fails the flowgraph.
///
/// # Stream Inputs
///
/// None.
///
/// # Stream Outputs
///
/// `output`: `Complex32` samples at the sample rate.
///
/// # Usage
/// ```no_run
/// use gpufec::blocks::{SdrSettings, SdrSource};
/// let settings = SdrSettings {
///     args: "driver=dummy".into(),
///     frequency: 437.5e6,
///     sample_rate: 250e3,
///     gain: Some(30.0),
///     samples: Some(1 << 20),
/// };
/// let src = SdrSource::new(settings)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
#[type_name(SdrSource)]
#[blocking]
pub struct SdrSource {
    device: Device<GenericDevice>,
    streamer: Option<<GenericDevice as DeviceTrait>::RxStreamer>,
    settings: SdrSettings,
    emitted: u64,
    errors: FirstError,
    #[output]
    output: DefaultCpuWriter<Complex32>,
}

impl SdrSource {
    /// Checks the settings, then opens and tunes the device.
    pub fn new(settings: SdrSettings) -> anyhow::Result<Self> {
        settings.check().map_err(|(field, problem)| anyhow::anyhow!("{field}: {problem}"))?;
        let radio = |e: futuresdr::seify::Error, what: &str| anyhow::anyhow!("radio '{}': {what}: {e}", settings.args);
        let device = Device::from_args(settings.args.as_str()).map_err(|e| radio(e, "cannot open it (is it plugged in, and its driver's cargo feature on?)"))?;
        device.set_sample_rate(Direction::Rx, 0, settings.sample_rate).map_err(|e| radio(e, "cannot set the sample rate"))?;
        device.set_frequency(Direction::Rx, 0, settings.frequency).map_err(|e| radio(e, "cannot set the frequency"))?;
        if let Some(gain) = settings.gain {
            device.set_gain(Direction::Rx, 0, gain).map_err(|e| radio(e, "cannot set the gain"))?;
        }
        Ok(Self { device, streamer: None, settings, emitted: 0, errors: FirstError::default(), output: stream::output() })
    }

    /// The settings it was made with.
    pub fn settings(&self) -> &SdrSettings {
        &self.settings
    }

    fn step(&mut self, io: &mut WorkIo) -> anyhow::Result<()> {
        let left = self.settings.samples.map_or(u64::MAX, |n| n - self.emitted);
        let room = (self.output.slice().len() as u64).min(left) as usize;
        if left == 0 {
            io.finished = true;
            return Ok(());
        }
        if room == 0 {
            return Ok(());
        }
        let streamer = self.streamer.as_mut().ok_or_else(|| anyhow::anyhow!("radio '{}': not streaming", self.settings.args))?;
        match streamer.read(&mut [&mut self.output.slice()[..room]], READ_TIMEOUT_US) {
            Ok(n) => {
                self.output.produce(n);
                self.emitted += n as u64;
            }
            // Samples the radio dropped (the host fell behind) do not end the stream.
            Err(futuresdr::seify::Error::Overflow) => {}
            Err(e) => anyhow::bail!("radio '{}': reading samples failed: {e}", self.settings.args),
        }
        io.finished = Some(self.emitted) == self.settings.samples;
        io.call_again = !io.finished;
        Ok(())
    }
}

impl Reporting for SdrSource {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl crate::blocks::Counted for SdrSource {
    fn items(&self) -> u64 {
        self.emitted
    }
}

#[doc(hidden)]
impl Kernel for SdrSource {
    async fn init(&mut self, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let args = &self.settings.args;
        let r = (|| {
            let mut streamer = self.device.rx_streamer(&[0]).map_err(|e| anyhow::anyhow!("radio '{args}': cannot stream: {e}"))?;
            streamer.activate().map_err(|e| anyhow::anyhow!("radio '{args}': cannot start streaming: {e}"))?;
            self.streamer = Some(streamer);
            Ok(())
        })();
        self.errors.keep(meta, r)
    }

    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.step(io);
        self.errors.keep(meta, r)
    }

    async fn deinit(&mut self, _mo: &mut MessageOutputs, _meta: &mut BlockMeta) -> Result<()> {
        if let Some(streamer) = self.streamer.as_mut() {
            // The samples are all out; a radio that will not stop cleanly changes none of them.
            let _ = streamer.deactivate();
        }
        Ok(())
    }
}
