//! The SDR source block: complex samples from a radio through seify (cargo
//! feature `seify`).

use crate::blocks::stream;
use crate::blocks::{FirstError, Reporting};
use crate::codes::words::count_of;
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
/// An overflow (the radio dropped samples because the host fell behind:
/// seify's read returns `Error::Overflow`, without the number dropped) does
/// not stop the stream: it is counted, and the count is said on stderr at
/// the end of the run (`block 'NAME': the radio overflowed N times ...`).
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
    overflows: u64,
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
        Ok(Self { device, streamer: None, settings, emitted: 0, overflows: 0, errors: FirstError::default(), output: stream::output() })
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
        let read = streamer.read(&mut [&mut self.output.slice()[..room]], READ_TIMEOUT_US);
        let n = samples_read(read, &mut self.overflows, &self.settings.args)?;
        self.output.produce(n);
        self.emitted += n as u64;
        io.finished = Some(self.emitted) == self.settings.samples;
        io.call_again = !io.finished;
        Ok(())
    }
}

/// The samples one read of the radio gave: an overflow (samples the radio
/// dropped) counts in `overflows` and gives none; any other error fails,
/// naming the device arguments `args`.
fn samples_read(read: Result<usize, futuresdr::seify::Error>, overflows: &mut u64, args: &str) -> anyhow::Result<usize> {
    match read {
        Ok(n) => Ok(n),
        Err(futuresdr::seify::Error::Overflow) => {
            *overflows += 1;
            Ok(0)
        }
        Err(e) => anyhow::bail!("radio '{args}': reading samples failed: {e}"),
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

    async fn deinit(&mut self, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        if let Some(streamer) = self.streamer.as_mut() {
            // The samples are all out; a radio that will not stop cleanly changes none of them.
            let _ = streamer.deactivate();
        }
        if self.overflows > 0 {
            let name = meta.instance_name().unwrap_or("unnamed");
            eprintln!(
                "block '{name}': the radio overflowed {} (it dropped samples while the host fell behind; the stream went on)",
                count_of(self.overflows, "time")
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futuresdr::seify::Error;

    #[test]
    fn overflows_are_counted_and_passed_over_other_errors_fail() {
        let mut overflows = 0;
        assert_eq!(samples_read(Ok(512), &mut overflows, "driver=dummy").unwrap(), 512);
        assert_eq!(samples_read(Err(Error::Overflow), &mut overflows, "driver=dummy").unwrap(), 0);
        assert_eq!(samples_read(Ok(3), &mut overflows, "driver=dummy").unwrap(), 3);
        assert_eq!(samples_read(Err(Error::Overflow), &mut overflows, "driver=dummy").unwrap(), 0);
        assert_eq!(overflows, 2);
        let e = samples_read(Err(Error::DeviceError), &mut overflows, "driver=rtlsdr").unwrap_err().to_string();
        assert_eq!(e, "radio 'driver=rtlsdr': reading samples failed: DeviceError");
        assert_eq!(overflows, 2);
    }
}
