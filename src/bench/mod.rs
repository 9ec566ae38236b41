//! Decoder throughput benchmarks: information bits per second of a
//! [`BatchDecoder`](crate::codes::BatchDecoder) on pre-generated LLRs, host
//! memory in and host memory out, so that the same code times the CPU
//! reference and the GPU pipeline end to end.

pub mod viterbi;
