//! Turbo decoders on the CPU: the serial reference (P = 1) and the
//! sub-block model with its guards, which computes what the GPU computes.

mod config;
mod cpu;
mod group;
mod siso;

pub use config::{DecoderConfig, EarlyStop, Guard, MAX_ITERATIONS, MaxStar};
pub use cpu::{CpuTurbo, DEFAULT_BATCH_BLOCKS, I16_GAIN, LANES, LANES_I16, Precision};

#[cfg(test)]
mod tests;
