// Kernels that fail on purpose, queued by the pipeline before a batch's own
// kernel when a test asks for a fault (PipelineOptions::fault,
// GPUFEC_TEST_FAULT): one traps, which loses the context as an illegal
// address would; one never ends, which only a watchdog ends.

extern "C" __global__ void fault_trap()
{
    __trap();
}

// Spins on a word the pipeline zeroed and nobody sets; sleeping between
// reads leaves the SM to the other kernels of the process.
extern "C" __global__ void fault_spin(const volatile unsigned* never)
{
    while (*never == 0u) {
        __nanosleep(100000);
    }
}
