//! BER points of a convolutional code with a Viterbi decoder, through
//! [`ConvLink`].

use super::PointSimulator;
use crate::codes::conv::{ConvCode, FrameConfig, PuncturePattern, TileConfig, Traceback, Trellis, ViterbiMode};
use crate::codes::sim::{BerPoint, ConvLink, LinkDecoder, LlrKind, StopRule};
use crate::gpu::{Backend, GpuOptions, viterbi_decoder};
use anyhow::Context;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// LLR type at the decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlrChoice {
    /// `i8`, quantized with 16·σ² per point (the GPU's default).
    I8,
    /// `f32`.
    F32,
}

/// A convolutional-code BER setup, as the command line gives it.
#[derive(Debug, Clone)]
pub struct ConvOptions {
    /// Constraint length K.
    pub k: u32,
    /// Generators in octal, comma-separated.
    pub polys: String,
    /// Standard rate name: 1/2, 2/3, 3/4, 5/6, 7/8.
    pub rate: String,
    /// Terminated frames (full-frame decoding) instead of a tiled stream.
    pub terminated: bool,
    /// Information bits per frame: the code frame when terminated, the counted
    /// frame (FER) when streaming (tile f when absent).
    pub frame: Option<usize>,
    /// Tile `f,v1,v2`.
    pub tile: String,
    /// Tiles per work unit.
    pub group: usize,
    /// `serial` or `parallel:F0`.
    pub traceback: String,
    /// LLR type at the decoder.
    pub llr: LlrChoice,
    /// Where the decoder runs.
    pub backend: Backend,
}

/// Frame used in terminated mode when `--frame` is not given.
const DEFAULT_FRAME: usize = 1024;

/// [`PointSimulator`] of a convolutional code.
pub struct ConvSimulator {
    link: ConvLink,
    decoder: LinkDecoder,
    parameters: Map<String, Value>,
    backend: String,
}

impl ConvSimulator {
    /// Check `o` and build the link and its decoder; errors name the option at fault.
    pub fn new(o: &ConvOptions) -> anyhow::Result<Self> {
        let polys: Vec<&str> = o.polys.split(',').collect();
        let code = ConvCode::from_octal(o.k, &polys).context("--k/--polys")?;
        let trellis = Arc::new(Trellis::new(&code));
        let puncture = PuncturePattern::standard(&o.rate).context("--rate")?;
        puncture.check_fits(trellis.n()).context("--rate")?;
        let traceback = Traceback::parse(&o.traceback).context("--traceback")?;
        let tile = TileConfig::parse(&o.tile, Traceback::Serial).context("--tile")?;
        let tile = TileConfig::new(tile.f, tile.v1, tile.v2, traceback).context("--traceback")?;
        let tile = tile.with_group(o.group).context("--group")?;
        let (mode, frame_bits) = if o.terminated {
            let f = FrameConfig::new(o.frame.unwrap_or(DEFAULT_FRAME), true).context("--frame")?;
            (ViterbiMode::Frame(f), f.frame)
        } else {
            anyhow::ensure!(o.frame != Some(0), "--frame: a frame of 0 bits; it must be at least 1");
            (ViterbiMode::Tiled(tile), o.frame.unwrap_or(tile.f))
        };
        let gpu = GpuOptions::default();
        let on_backend = || format!("--backend {}", o.backend);
        let ((decoder, not_gpu), llr) = match o.llr {
            LlrChoice::I8 => {
                let (d, why) =
                    viterbi_decoder::<i8>(trellis.clone(), mode, None, o.backend, 0, &gpu).with_context(on_backend)?;
                ((LinkDecoder::I8(d), why), LlrKind::I8 { scale: None })
            }
            LlrChoice::F32 => {
                let (d, why) =
                    viterbi_decoder::<f32>(trellis.clone(), mode, None, o.backend, 0, &gpu).with_context(on_backend)?;
                ((LinkDecoder::F32(d), why), LlrKind::F32)
            }
        };
        let backend = match not_gpu {
            Some(why) => format!("{} (no GPU: {why})", decoder.describe()),
            None => decoder.describe(),
        };
        let mut parameters = Map::new();
        parameters.insert("code".into(), "conv".into());
        parameters.insert("k".into(), code.k().into());
        parameters.insert("polys".into(), code.polys_octal().into());
        parameters.insert("rate".into(), o.rate.trim().into());
        parameters.insert("mode".into(), if o.terminated { "terminated" } else { "streaming" }.into());
        parameters.insert("frame_bits".into(), frame_bits.into());
        if !o.terminated {
            parameters.insert("tile".into(), json!({ "f": tile.f, "v1": tile.v1, "v2": tile.v2 }));
            parameters.insert("group".into(), tile.group.into());
            parameters.insert("traceback".into(), traceback.to_string().into());
        }
        parameters.insert("llr".into(), if o.llr == LlrChoice::I8 { "i8" } else { "f32" }.into());
        let link = ConvLink { trellis, puncture, mode, frame_bits, llr };
        link.validate()?;
        Ok(Self { link, decoder, parameters, backend })
    }
}

impl PointSimulator for ConvSimulator {
    fn parameters(&self) -> Map<String, Value> {
        self.parameters.clone()
    }

    fn backend(&self) -> String {
        self.backend.clone()
    }

    fn point(&mut self, ebn0_db: f64, stop: StopRule, seed: u64) -> anyhow::Result<BerPoint> {
        self.link.run_point(&mut self.decoder, ebn0_db, stop, seed)
    }
}
