// The convolutional family's encoder and channel on the device: the sent
// (punctured) LLRs of a stretch of the stream, each a function of its
// position alone, for the device link simulator (src/gpu/conv/link.rs).
//
// Sent LLR g (counted from the stream's first stage, the puncturer's order:
// stage by stage, outputs in order, the pattern applied from stage 0) is
// output CPAT_OUT[g mod CKPP] of stage CP·⌊g / CKPP⌋ + CPAT_STAGE[g mod CKPP].
// Its coded bit is the parity of the last CK information bits under that
// output's taps (CT0..CT3: bit CK−1−d set when the output taps the input d
// stages back, the reversed `ConvEncoder::taps`), flipped where CINV (bit j:
// output j sent inverted) says; its noise is sample g.
// Stages before the stream carry LLR_CERTAIN_ZERO (the register is clear
// there; its negation on an inverted output), stages from end_stage on are erasures, as the host tiler pads.
//
// Parameters (-D): CK, CN, CP, CKPP, CPAT_STAGE, CPAT_OUT (CKPP entries
// each), CT0..CT3, CINV, LLR_F32 (0: i8 LLRs quantized by `scale`; 1: f32).
#include "link.cuh"

using namespace link;

__constant__ u8 pat_stage[CKPP] = {CPAT_STAGE};
__constant__ u8 pat_out[CKPP] = {CPAT_OUT};

__device__ __forceinline__ u32 taps_of(u32 j) { return j == 0 ? CT0 : j == 1 ? CT1 : j == 2 ? CT2 : CT3; }

// out[i] = sent LLR g0 + i for i < len. One thread per noise block: the four
// samples of block 16·G + l are g = 64·G + 16·k + l, so that the 16 lanes of
// a half-warp write 16 consecutive LLRs per row. `info` holds the
// information bits from stream position info_first (a multiple of 32, at
// least 64 before the first stage needed).
extern "C" __global__ void conv_link_llrs(llr_t* __restrict__ out, long long g0, u32 len, const u32* __restrict__ info,
                                          long long info_first, long long end_stage, u32 k0, u32 k1, float sigma, float gain,
                                          float scale) {
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const long long group = floor_div(g0, 64) + (long long)(t >> 4);
    const int lane = (int)(t & 15);
    if (group * 64 >= g0 + len) return;
    bool drawn = false;
    float4 z = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const long long g = group * 64 + 16 * k + lane;
        if (g < g0 || g >= g0 + len) continue;
        const long long q = floor_div(g, CKPP);
        const int r = (int)(g - q * CKPP);
        const long long stage = q * CP + pat_stage[r];
        llr_t v;
        if (stage < 0) {
            v = (CINV >> pat_out[r]) & 1u ? -LLR_CERTAIN_ZERO : LLR_CERTAIN_ZERO;
        } else if (stage >= end_stage) {
            v = 0;
        } else {
            if (!drawn) {
                z = normals(16 * (u64)group + lane, Key{k0, k1});
                drawn = true;
            }
            const long long pos = stage - info_first;
            const u64 both = ((u64)info[pos >> 5] << 32) | info[(pos >> 5) - 1];
            const u32 window = (u32)(both >> (32 + (pos & 31) - (CK - 1))) & ((1u << CK) - 1u);
            const u32 bit = (__popc(window & taps_of(pat_out[r])) ^ (CINV >> pat_out[r])) & 1u;
            const float llr = channel_llr(bit, row(z, k), sigma, gain);
#if LLR_F32
            v = llr;
#else
            v = quantize(llr, scale);
#endif
        }
        out[g - g0] = v;
    }
}
