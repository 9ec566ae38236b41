//! Channel models shared by every code family: BPSK, AWGN with its LLR
//! demapper, and the `i8` quantizer.

mod awgn;
mod bpsk;
mod quantize;

pub use awgn::{Awgn, noise_variance};
pub use bpsk::{bpsk_map, hard_bit};
pub use quantize::{I8_LLR_MAX, Quantizer};
