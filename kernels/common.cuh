// Shared device-side definitions for every gpufec kernel. Names here avoid
// the single-letter -D constants the kernels are compiled with (K, S, NT, ...).
//
// Conventions (DESIGN.md): LLR = ln P(b=0)/P(b=1), positive means bit 0. Bits
// leave the device packed 32 per word, least significant bit first (the host
// unpacks them to one byte per bit at the block boundary). Kernels are compiled by NVRTC at
// run time with the code parameters as -D constants, so every loop over states
// or stages below is unrolled with compile-time bounds.
#pragma once

typedef signed char i8;
typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;

// The LLR type of a kernel built with -D LLR_F32=1 (f32), else i8, and its
// certain zero (`Llr::CERTAIN_ZERO` in codes/llr.rs).
#if LLR_F32
typedef float llr_t;
constexpr float LLR_CERTAIN_ZERO = 1000.0f;
#else
typedef i8 llr_t;
constexpr i8 LLR_CERTAIN_ZERO = 127;
#endif


// Every lane of a warp, for the *_sync intrinsics.
constexpr unsigned FULL_MASK = 0xffffffffu;

// A CRC of CRC_BITS parity bits (at most 31) with generator
// g(D) = D^CRC_BITS + CRC_POLY(D), as
// codes/crc.rs defines it (no initial value, no reflection, no final XOR):
// the remainder of a(D)·D^CRC_BITS mod g(D), zero when a block carries its CRC.
template <u32 CRC_POLY, int CRC_BITS>
struct Crc {
    static constexpr u32 MASK = (1u << CRC_BITS) - 1u;

    // r·D mod g.
    static __device__ __forceinline__ u32 xtime(u32 r) {
        const u32 top = (r >> (CRC_BITS - 1)) & 1u;
        r = (r << 1) & MASK;
        return top ? r ^ CRC_POLY : r;
    }

    // a·b mod g.
    static __device__ u32 mulmod(u32 a, u32 b) {
        u32 r = 0;
        for (int i = CRC_BITS - 1; i >= 0; i--) {
            r = xtime(r);
            if ((b >> i) & 1u) r ^= a;
        }
        return r;
    }

    // D^n mod g.
    static __device__ u32 xpow(u32 n) {
        u32 r = 1, base = 2;
        while (n) {
            if (n & 1u) r = mulmod(r, base);
            base = mulmod(base, base);
            n >>= 1;
        }
        return r;
    }

    // Whether the NBITS bits bit(0), ..., bit(NBITS − 1) carry their CRC,
    // computed by the THREADS threads of a CTA (every one calls it; every one gets the
    // answer). The remainder is linear in the bits: each thread takes a
    // chunk, computes its remainder from zero and moves it to its place by
    // D^(bits after the chunk); the warps' XORs meet in `partials` (THREADS / 32
    // words of shared memory), which the caller must not reuse before a
    // later __syncthreads.
    template <int NBITS, int THREADS, typename Bit>
    static __device__ bool block_checks(Bit bit, u32* partials) {
        static_assert(THREADS % 32 == 0, "whole warps");
        constexpr int CHUNK = (NBITS + THREADS - 1) / THREADS;
        const int lo = threadIdx.x * CHUNK;
        const int hi = lo + CHUNK < NBITS ? lo + CHUNK : NBITS;
        u32 r = 0;
        for (int i = lo; i < hi; i++) {
            const u32 top = ((r >> (CRC_BITS - 1)) ^ bit(i)) & 1u;
            r = (r << 1) & MASK;
            if (top) r ^= CRC_POLY;
        }
        if (lo < hi) r = mulmod(r, xpow(NBITS - hi));
        for (int o = 16; o > 0; o >>= 1) r ^= __shfl_xor_sync(FULL_MASK, r, o);
        if (threadIdx.x % 32 == 0) partials[threadIdx.x / 32] = r;
        __syncthreads();
        u32 all = 0;
        for (int j = 0; j < THREADS / 32; j++) all ^= partials[j];
        return all == 0;
    }
};

// The CRCs of 3GPP TS 36.212 §5.1.1 that kernels check.
typedef Crc<0x864CFBu, 24> Crc24A;
typedef Crc<0x800063u, 24> Crc24B;
