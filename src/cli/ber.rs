//! `gpufec ber <family>`: an error-rate curve through a family's link
//! simulator, the same for every family: its settings' options, then what
//! every curve takes (the grid of the family's x axis, the LLR type, the
//! backend, the stop rules and the JSON file).

use super::count::count_usize;
use super::curve::{CurveArgs, run_curve};
use super::grid::Grid;
use super::settings::{flag, given, resolve};
use crate::codes::settings::FieldType;
use crate::files::{Use, refuse_overwriting};
use crate::codes::llr::LlrType;
use crate::codes::sim::Axis;
use crate::codes::threads::MAX_THREADS;
use crate::codes::sim::Link;
use crate::flowgraph::family::{Code, Family};
use crate::gpu::{Backend, BackendOptions, DeviceList, PipelineOptions};
use anyhow::Context;
use clap::{Arg, ArgMatches, Args, FromArgMatches};
use serde_json::Map;

/// The id of the x axis' option among a `ber` command's arguments.
const X: &str = "x";

/// The option of a family's x axis (`--ebn0` for Eb/N0): a grid, required
/// unless the family's settings give a point of their own.
pub(super) fn axis_arg(axis: Axis) -> Arg {
    let label = axis.label;
    let unit = if axis.unit.is_empty() { String::new() } else { format!(", {}", axis.unit) };
    Arg::new(X)
        .long(axis.flag.trim_start_matches('-'))
        .help(format!("{label}{unit}: a list 1,2,3 or a range START:STEP:STOP (negative values as written); without it, the point the settings give, where they give one"))
        .allow_hyphen_values(true)
        .value_parser(move |s: &str| Grid::parse(s, label))
}

/// What every family's `ber` takes besides its settings and its x axis.
#[derive(Args, Debug)]
pub struct BerArgs {
    /// LLR type at the decoder: i8 (quantized with the matched scale: 16·σ² up to σ = 3/4, then less, ±127 at 1 + 4σ) or f32 (default: the family's, i8 for conv, f32 for turbo).
    #[arg(long, value_parser = llr_type)]
    llr: Option<LlrType>,
    #[command(flatten)]
    curve: CurveArgs,
    /// Where the decoder runs: auto (the GPU when one is usable), cpu or gpu.
    #[arg(long, default_value = "auto")]
    backend: Backend,
    /// CPU decoder threads (0: every core; at most 1024).
    #[arg(long, default_value = "0", value_parser = count_usize)]
    threads: usize,
    /// GPUs to spread the decoder over: indices (0,1) or all (a decoder per device, batches to the least busy; the channel then runs on the host).
    #[arg(long, value_parser = DeviceList::parse)]
    gpu_devices: Option<DeviceList>,
    /// Where the bits, encoder and channel run: device (the whole link on the GPU, only counts come back), host (the host sends LLRs to the decoder), or auto (device where the family has a device link and a GPU decodes, else host).
    #[arg(long, value_enum, default_value = "auto")]
    channel: ChannelPlace,
}

/// Where a curve's bits, encoder and channel run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ChannelPlace {
    Auto,
    Host,
    Device,
}

/// The link of `code` with its channel where `place` says, the line that
/// names where everything runs, and whether the channel is on the device.
fn link_for(code: &dyn Code, llr: LlrType, options: &BackendOptions, place: ChannelPlace) -> anyhow::Result<(Box<dyn Link>, String, bool)> {
    let host = |note: Option<String>| -> anyhow::Result<(Box<dyn Link>, String, bool)> {
        let (link, choice) = code.link(llr, options).with_context(|| format!("--backend {}", options.backend))?;
        let mut about = link.describe();
        // Where the GPU is unusable, its reason covers the device link's too.
        match (&choice.why_not_gpu, note) {
            (Some(why), _) => about += &format!(" (no GPU: {why})"),
            (None, Some(n)) => about += &format!(" (channel on the host: {n})"),
            (None, None) => {}
        }
        Ok((link, about, false))
    };
    let device = || code.device_link(llr, options);
    match (place, options.backend) {
        (ChannelPlace::Host, _) | (ChannelPlace::Auto, Backend::Cpu) => host(None),
        (ChannelPlace::Device, Backend::Cpu) => anyhow::bail!("--channel device runs the link on the GPU; it does not go with --backend cpu"),
        (ChannelPlace::Device, _) => match device() {
            None => anyhow::bail!("--channel device: the {} family has no device link yet; use --channel host", code.family()),
            Some(link) => {
                let link = link.context("--channel device")?;
                let about = link.describe();
                Ok((link, about, true))
            }
        },
        (ChannelPlace::Auto, _) => match device() {
            None => host(None),
            Some(Ok(link)) => {
                let about = link.describe();
                Ok((link, about, true))
            }
            Some(Err(e)) => host(Some(format!("{e:#}"))),
        },
    }
}

pub(super) fn llr_type(s: &str) -> anyhow::Result<LlrType> {
    Ok(s.parse()?)
}

/// Run `gpufec ber <family>` from its matches; whether Ctrl-C ended it.
pub fn ber(family: &Family, m: &ArgMatches) -> anyhow::Result<bool> {
    let a = BerArgs::from_arg_matches(m)?;
    anyhow::ensure!(a.threads <= MAX_THREADS, "--threads {}: at most {MAX_THREADS}", a.threads);
    let given = given(m, family.fields);
    if let Some(json) = &a.curve.json {
        // Before the settings read their files: none of them may be the curve's.
        let inputs: Vec<Use> = family
            .fields
            .iter()
            .filter(|f| f.ty == FieldType::InputFile)
            .filter_map(|f| Some(Use::new(flag(f.name), given.get(f.name)?.as_str()?)))
            .collect();
        refuse_overwriting(&inputs, &[Use::new("--json", json)])?;
    }
    let code = resolve(family, given)?;
    let llr = a.llr.unwrap_or(family.default_llr);
    let pipeline = PipelineOptions { devices: a.gpu_devices.clone(), ..Default::default() };
    let options = BackendOptions { backend: a.backend, cpu_threads: a.threads, pipeline };
    let grid = match m.get_one::<Grid>(X) {
        Some(g) => g.clone(),
        None => Grid(vec![code.default_x().map_err(|e| anyhow::anyhow!("{}: give the points of the curve ({e:#})", family.axis.flag))?]),
    };
    let (mut link, about, on_device) = link_for(code.as_ref(), llr, &options, a.channel)?;
    println!("code: {}", code.describe());
    println!("backend: {about}");
    let mut p = Map::new();
    p.insert("code".into(), family.name.into());
    p.insert("settings".into(), code.settings_json());
    p.insert("describe".into(), code.describe().into());
    p.insert("rate".into(), code.rate().into());
    p.insert("frame_bits".into(), code.frame_bits().into());
    p.insert("llr".into(), llr.name().into());
    p.insert("backend".into(), about.into());
    p.insert("channel".into(), if on_device { "device" } else { "host" }.into());
    run_curve(link.as_mut(), family.axis, &grid, &a.curve, p)
}
