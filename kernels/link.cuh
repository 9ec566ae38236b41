// The device link simulator's shared pieces: counter-based information bits,
// counter-based Gaussian noise, BPSK over AWGN to LLRs and the quantizer, each
// the exact port of its host model so that a device link and its host model
// (a link drawing `BitSource::counter` bits) send the same LLRs:
// - Philox4x32-10 as `codes/channel/noise.rs` (Random123's rounds and key
//   schedule), block b = counter (b mod 2^32, b >> 32, 0, 0) under key
//   (seed mod 2^32, seed >> 32);
// - the normals of noise.rs's recipe: sample i in group i / 64, row
//   (i mod 64) / 16 and lane i mod 16, from block 16·(i / 64) + lane;
//   Box–Muller with noise.rs's own ln and sin/cos, every operation rounded
//   on its own (the _rn intrinsics are never fused into FMAs);
// - LLR = (bpsk + σ·z)·gain, then for i8 round(LLR·scale) halves away from
//   zero, saturated to ±127, as `Quantizer::one`;
// - information bit c = bit c mod 32 of word (c / 32) mod 4 of block c / 128
//   under the bits' key (`BitSource::counter`).
#include "common.cuh"

namespace link {

struct Key { u32 k0, k1; };

__device__ __forceinline__ uint4 philox(u64 block, Key key) {
    u32 x0 = (u32)block, x1 = (u32)(block >> 32), x2 = 0, x3 = 0;
    u32 k0 = key.k0, k1 = key.k1;
#pragma unroll
    for (int r = 0; r < 10; r++) {
        const u32 hi0 = __umulhi(0xD2511F53u, x0), lo0 = 0xD2511F53u * x0;
        const u32 hi1 = __umulhi(0xCD9E8D57u, x2), lo1 = 0xCD9E8D57u * x2;
        x0 = hi1 ^ x1 ^ k0;
        x1 = lo1;
        x2 = hi0 ^ x3 ^ k1;
        x3 = lo0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return make_uint4(x0, x1, x2, x3);
}

// ln u of u = (w + 0.5)·2^-32, as noise.rs's `ln_unit`.
__device__ __forceinline__ float ln_unit(u32 w) {
    const float x = __fadd_rn(__uint2float_rn(w), 0.5f);
    const u32 bits = __float_as_uint(x);
    const u32 tmp = bits - 0x3F3504F3u;
    const int k = (int)tmp >> 23;
    const float m = __uint_as_float(bits - (tmp & 0xFF800000u));
    const float f = __fsub_rn(m, 1.0f);
    const float s = __fdiv_rn(f, __fadd_rn(2.0f, f));
    const float z = __fmul_rn(s, s);
    const float p = __fadd_rn(1.0f / 3.0f, __fmul_rn(z, __fadd_rn(1.0f / 5.0f, __fmul_rn(z, __fadd_rn(1.0f / 7.0f, __fmul_rn(z, 1.0f / 9.0f))))));
    const float two_s = __fadd_rn(s, s);
    const float ln_m = __fadd_rn(two_s, __fmul_rn(two_s, __fmul_rn(z, p)));
    return __fadd_rn(__fmul_rn(__int2float_rn(k - 32), 0.693147180559945309f), ln_m);
}

// (sin θ, cos θ) of θ = 2π(w + 0.5)·2^-32, as noise.rs's `sin_cos_turns`.
__device__ __forceinline__ float2 sin_cos_turns(u32 w) {
    const u32 q = (w + (1u << 29)) >> 30;
    const int d = (int)(w - (q << 30));
    const float a = __fmul_rn(__fadd_rn(__int2float_rn(d), 0.5f), (float)(6.283185307179586476925 / 4294967296.0));
    const float a2 = __fmul_rn(a, a);
    const float ps = __fadd_rn(-1.0f / 6.0f, __fmul_rn(a2, __fadd_rn(1.0f / 120.0f, __fmul_rn(a2, __fadd_rn(-1.0f / 5040.0f, __fmul_rn(a2, 1.0f / 362880.0f))))));
    const float sin_a = __fadd_rn(a, __fmul_rn(__fmul_rn(a, a2), ps));
    const float pc = __fadd_rn(-1.0f / 2.0f, __fmul_rn(a2, __fadd_rn(1.0f / 24.0f, __fmul_rn(a2, __fadd_rn(-1.0f / 720.0f, __fmul_rn(a2, 1.0f / 40320.0f))))));
    const float cos_a = __fadd_rn(1.0f, __fmul_rn(a2, pc));
    float sn = (q & 1u) == 0 ? sin_a : cos_a;
    float cs = (q & 1u) == 0 ? cos_a : sin_a;
    sn = __uint_as_float(__float_as_uint(sn) ^ ((q & 2u) << 30));
    cs = __uint_as_float(__float_as_uint(cs) ^ (((q + 1u) & 2u) << 30));
    return make_float2(sn, cs);
}

// The four normals of block b: rows 0..3 of its lane (r cos θ, r sin θ of
// words (0, 1), then of words (2, 3)).
__device__ __forceinline__ float4 normals(u64 block, Key key) {
    const uint4 w = philox(block, key);
    const float r0 = __fsqrt_rn(__fmul_rn(-2.0f, ln_unit(w.x)));
    const float2 sc0 = sin_cos_turns(w.y);
    const float r1 = __fsqrt_rn(__fmul_rn(-2.0f, ln_unit(w.z)));
    const float2 sc1 = sin_cos_turns(w.w);
    return make_float4(__fmul_rn(r0, sc0.y), __fmul_rn(r0, sc0.x), __fmul_rn(r1, sc1.y), __fmul_rn(r1, sc1.x));
}

__device__ __forceinline__ float row(float4 z, int k) { return k == 0 ? z.x : k == 1 ? z.y : k == 2 ? z.z : z.w; }

// The channel LLR of a coded bit with noise z.
__device__ __forceinline__ float channel_llr(u32 bit, float z, float sigma, float gain) {
    return __fmul_rn(__fadd_rn(bit ? -1.0f : 1.0f, __fmul_rn(sigma, z)), gain);
}

// `Quantizer::one` for a finite LLR.
__device__ __forceinline__ i8 quantize(float llr, float scale) {
    const float y = __fmul_rn(llr, scale);
    const float c = fminf(fmaxf(y, -128.0f), 128.0f);
    const int t = __float2int_rz(c);
    const float frac = __fsub_rn(c, __int2float_rn(t));
    int r = t + (frac >= 0.5f ? 1 : 0) - (frac <= -0.5f ? 1 : 0);
    r = r < -127 ? -127 : r > 127 ? 127 : r;
    return (i8)r;
}

// Floor division for signed stream positions.
__device__ __forceinline__ long long floor_div(long long a, long long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The standard normal of noise sample g ≥ 0 alone (row (g mod 64) / 16 of
// lane g mod 16 of its group): for a sample read out of order (a rate
// matched code's recovery); `send_llrs` gives whole blocks' four at once.
__device__ __forceinline__ float normal_of(long long g, Key key) {
    return row(normals(16 * (u64)(g >> 6) + (u64)(g & 15), key), (int)((g >> 4) & 3));
}

// A channel LLR as the decoder takes it: f32 as it is, i8 quantized.
__device__ __forceinline__ void store_llr(float* d, float llr, float) { *d = llr; }
__device__ __forceinline__ void store_llr(i8* d, float llr, float scale) { *d = quantize(llr, scale); }

// dst[i] for i < n: coded bit bit(i) sent as noise sample g0 + i, by the
// `threads` threads of the CTA, each taking the four normals of one Philox
// block (a lane of a group of 64 samples) at a time.
template <class Out, class Bit>
__device__ __forceinline__ void send_llrs(Out* dst, long long g0, int n, int threads, Key key, float sigma, float gain, float scale, Bit bit) {
    const long long g1 = g0 + n;
    const long long group0 = floor_div(g0, 64), groups = floor_div(g1 - 1, 64) - group0 + 1;
    for (long long t = threadIdx.x; t < groups * 16; t += threads) {
        const long long group = group0 + (t >> 4);
        const int lane = (int)(t & 15);
        const float4 z = normals(16 * (u64)group + lane, key);
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const long long g = group * 64 + 16 * k + lane;
            if (g < g0 || g >= g1) continue;
            const int i = (int)(g - g0);
            store_llr(&dst[i], channel_llr(bit(i), row(z, k), sigma, gain), scale);
        }
    }
}

}  // namespace link
