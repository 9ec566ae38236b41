//! `gpufec ber <family>`: an error-rate curve through a family's link
//! simulator, the same for every family: its settings' options, then what
//! every curve takes (the Eb/N0 grid, the LLR type, the backend, the stop
//! rules and the JSON file).

use super::count::count_usize;
use super::curve::{CurveArgs, EBN0, run_curve};
use super::grid::Grid;
use super::settings::{flag, given, resolve};
use crate::codes::settings::FieldType;
use crate::files::{Use, refuse_overwriting};
use crate::codes::llr::LlrType;
use crate::codes::threads::MAX_THREADS;
use crate::flowgraph::family::Family;
use crate::gpu::{Backend, BackendOptions};
use anyhow::Context;
use clap::{ArgMatches, Args, FromArgMatches};
use serde_json::Map;

/// What every family's `ber` takes besides its settings.
#[derive(Args, Debug)]
pub struct BerArgs {
    /// Eb/N0 per information bit, dB: a list 1,2,3 or a range START:STEP:STOP (negative values as written).
    #[arg(long, allow_hyphen_values = true, value_parser = |s: &str| Grid::parse(s, "Eb/N0"))]
    ebn0: Grid,
    /// LLR type at the decoder: i8 (quantized with the matched 16·σ²) or f32 (default: the family's, i8 for conv, f32 for turbo).
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
    let options = BackendOptions { backend: a.backend, cpu_threads: a.threads, ..Default::default() };
    let (mut link, choice) = code.link(llr, &options).with_context(|| format!("--backend {}", a.backend))?;
    let about = match &choice.why_not_gpu {
        Some(why) => format!("{} (no GPU: {why})", link.describe()),
        None => link.describe(),
    };
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
    run_curve(link.as_mut(), EBN0, &a.ebn0, &a.curve, p)
}
