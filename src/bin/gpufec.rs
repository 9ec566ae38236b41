//! `gpufec`: run flowgraph files, measure error-rate curves and decoder
//! throughput, and list the GPUs. The work is in the library
//! ([`gpufec::cli`]); this only starts it.

fn main() -> std::process::ExitCode {
    gpufec::cli::main()
}
