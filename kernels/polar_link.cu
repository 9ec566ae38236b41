// The polar family's encoder and channel on the device, for the device link
// simulator (src/gpu/polar/link.rs): codeword f of the stream carries
// information bits f·PK .. (f+1)·PK (link.cuh's counter bits), placed at the
// information positions of u (ascending, the decoder's tables) with the frozen
// bits 0; x = u·G by the m butterfly stages, as `codes/polar/transform.rs`
// does them (spans below 32 inside each word, longer ones XOR words), and for
// a systematic code x = ((u·G) with the frozen positions cleared)·G, as
// `PolarSpec::encode_info`. Sent LLR i of the codeword is coded bit x_i with
// noise sample f·PN + i, as the host sends the coded stream.
//
// Parameters (-D): PN (N), PK (K), PUW (⌈N/32⌉), PSYS (systematic), PLT
// (threads of a CTA, one CTA a codeword), LLR_F32.
#include "link.cuh"
#include "polar.cuh"

using namespace link;

constexpr int KW = (PK + 31) / 32;

// x ← x·G on the PN bits packed in x[0 .. PUW). All threads call it.
__device__ void transform(u32* x) {
    for (int w = threadIdx.x; w < PUW; w += PLT) x[w] = polar_in_word(x[w], PN);
    __syncthreads();
    for (int h = 1; h < PUW; h *= 2) {
        polar_across_words(x, PUW, h, threadIdx.x, PLT);
        __syncthreads();
    }
}

// out + c·pitch: the PN LLRs of codeword first + c, for c < count. tables:
// the decoder's (u's frozen bits in PUW words, then the PK information
// positions, ascending).
extern "C" __global__ void __launch_bounds__(PLT) polar_link_llrs(llr_t* __restrict__ out, unsigned long long pitch, u32 count, long long first,
                                                                const u32* __restrict__ info, long long info_first, const u32* __restrict__ tables,
                                                                u32 k0, u32 k1, float sigma, float gain, float scale) {
    __shared__ u32 ub[KW + 1];
    __shared__ u32 x[PUW];
    const u32 c = blockIdx.x;
    if (c >= count) return;
    const long long f = first + c;
    const long long pos = f * PK - info_first;
    for (int w = threadIdx.x; w <= KW; w += PLT) {
        const long long at = (pos >> 5) + w;
        ub[w] = __funnelshift_r(info[at], info[at + 1], (u32)(pos & 31));
    }
    for (int w = threadIdx.x; w < PUW; w += PLT) x[w] = 0;
    __syncthreads();
    const u32* __restrict__ where = tables + PUW;
    for (int j = threadIdx.x; j < PK; j += PLT) {
        if ((ub[j >> 5] >> (j & 31)) & 1u) {
            const u32 p = __ldg(&where[j]);
            atomicOr(&x[p >> 5], 1u << (p & 31));
        }
    }
    __syncthreads();
    transform(x);
#if PSYS
    for (int w = threadIdx.x; w < PUW; w += PLT) x[w] &= ~__ldg(&tables[w]);
    __syncthreads();
    transform(x);
#endif
    send_llrs(out + (unsigned long long)c * pitch, f * PN, PN, PLT, Key{k0, k1}, sigma, gain, scale, [&](int i) { return (x[i >> 5] >> (i & 31)) & 1u; });
}

// What the host link's reports add up to, over the first `count` codewords
// of a batch: out[0] += their iterations (status bits 0..15), out[1] += the
// codewords with errors (counts) that did not converge (status bit 16 clear)
// when `g_stop` (the G-matrix stop's check: detected errors). out must be
// zero before.
extern "C" __global__ void polar_link_reports(const u32* __restrict__ counts, const u32* __restrict__ status, u32 count, u32 g_stop,
                                              u64* __restrict__ out) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 st = i < count ? status[i] : 0u;
    u64 iterations = st & 0xffffu;
    u64 detected = (i < count && g_stop && counts[i] > 0 && ((st >> 16) & 1u) == 0) ? 1 : 0;
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        iterations += __shfl_down_sync(FULL_MASK, iterations, d);
        detected += __shfl_down_sync(FULL_MASK, detected, d);
    }
    if ((threadIdx.x & 31) == 0 && (iterations | detected)) {
        atomicAdd(&out[0], iterations);
        atomicAdd(&out[1], detected);
    }
}
