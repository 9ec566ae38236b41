//! The sync family on the GPU side: its decoder builder, choosing between
//! the GPU MAP decoder and the CPU reference through [`select`].

use super::backend::{BackendOptions, Choice, select};
use crate::codes::decode::BatchDecoder;
use crate::codes::sync::decoder::Received;
use crate::codes::sync::{BsidParams, DecoderConfig, SyncCode, SyncMapDecoder};

/// The MAP decoder of `code` for a channel of `params` with `cfg`, taking
/// items of `T` (hard bits, or LLRs divided by `input_scale`), with bit
/// LLRs from the symbol APPs when `soft`, on the backend `options` asks
/// for: the CPU reference [`SyncMapDecoder`] on `options.cpu_threads`
/// threads (the family has no GPU decoder yet: `gpu` fails, `auto` says so).
pub fn sync_decoder<T: Received>(
    code: &SyncCode,
    params: BsidParams,
    cfg: DecoderConfig,
    input_scale: f32,
    soft: bool,
    options: &BackendOptions,
) -> anyhow::Result<(Box<dyn BatchDecoder<T>>, Choice)> {
    let gpu = || -> anyhow::Result<Box<dyn BatchDecoder<T>>> { anyhow::bail!("the sync family has no GPU decoder yet") };
    let cpu = || -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
        let dec = SyncMapDecoder::<T>::new(code.clone(), params, cfg, options.cpu_threads)?.with_input_scale(input_scale)?;
        Ok(Box::new(if soft { dec.with_soft_output() } else { dec }))
    };
    select(options.backend, gpu, cpu)
}
