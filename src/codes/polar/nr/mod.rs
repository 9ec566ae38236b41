//! The 5G NR polar chain of TS 38.212: the mother code length (§5.3.1), the
//! input bit interleaver (§5.3.1.1), the frozen set with parity-check bits
//! (§5.3.1.2), rate matching and recovery (§5.4.1), UCI segmentation
//! (§6.3.1.2.1), the UCI and DCI chains (§6.3, §7.3), and a decoder of whole
//! messages around any polar code block decoder.

mod chain;
mod decoder;
mod frozen;
mod interleave;
mod rate_match;
mod segment;
mod size;

pub use chain::{MAX_DCI_A, MIN_DCI_PAYLOAD, NrEncoder, NrMessage, NrPolar};
pub use decoder::NrDecoder;
pub use frozen::{ParityChecks, nr_code};
pub use interleave::{K_MAX_IL, input_interleaver};
pub use rate_match::{MAX_E, RateMatch, Selection, subblock_index};
pub use segment::{MAX_UCI_A, MIN_UCI_A, UciSegmentation};
pub use size::{N_MIN_LOG, mother_length};
