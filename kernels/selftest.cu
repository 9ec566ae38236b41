// The pipeline's self-test: what a family's kernel does with the buffers the
// pipeline gives it, in miniature. Each item of the staged input goes through
// the slot's auxiliary buffer to the output, and the kernel counts the items
// it saw in the status words the pipeline zeroes before every launch and
// reads back with the output.
#include "common.cuh"

extern "C" __global__ void selftest(const u32* in, u32* out, u32* aux, u32* status, u32 n, u32 salt)
{
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    aux[i] = in[i] ^ salt;
    out[i] = aux[i] + 1u;
    atomicAdd(&status[i % 4u], 1u);
}
