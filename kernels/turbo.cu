// Turbo decoder: the half-iterations of the sub-block model (P sub-blocks per
// code block, guards none / PIVI / DSTW / PIVIDSTW), the exchange of scaled
// extrinsics through the interleaver, hard decisions and the early stop, for
// many code blocks per launch.
//
// The model it reproduces is `src/codes/turbo/decoder/{siso,group}.rs`, bit
// for bit for max-log-MAP and the linear log-MAP: every floating-point
// operation is the model's, in its order, through __fadd_rn / __fsub_rn /
// __fmul_rn so that NVRTC never contracts a product and a sum into an FMA
// (the model's Rust never does). Exact log-MAP calls expf / log1pf, whose
// last bits differ from Rust's libm: there the results may differ slightly.
//
// Thread mapping. One task is one sub-block of one code block; S threads (one
// per trellis state) run it, S consecutive lanes of a warp, and a CTA of NT
// threads runs NT/S tasks (of possibly different code blocks). The state
// metrics of a stage live one per lane; a recursion step reads the metrics of
// its two predecessors (successors) by warp shuffles within the S lanes, and
// the normalisation reads state 0's the same way. α of every stage of the
// sub-block is kept per thread (each thread reads back only its own state's α
// in the backward pass, so no synchronisation is needed): in shared memory
// when LMAX is small, else in a global buffer, laid out stage-major with the
// CTA's threads innermost (conflict-free, coalesced). Every task of a warp runs
// LMAX stages (the longest sub-block) so that all 32 lanes take part in every
// shuffle; a task shorter than that idles through the extra stages without
// changing or storing anything.
//
// Memory of a batch of B blocks (c = constituent decoder, 0 natural order,
// 1 interleaved order):
//   sp[c][b][STAGES]   float2 (systematic, parity), channel LLRs times 1/scale;
//   la[c][b][K]        a-priori LLRs of decoder c (scaled extrinsics of the other);
//   edges[c][q][ab][b][P][S]   PIVI edge metrics, double buffered by q (read
//                      the previous iteration's, write this one's), ab = α, β;
//   hard[b][K]         u8 decisions in natural order, the last iteration's;
//   flags[2][b]        done (stopped; later launches skip the block), changed
//                      (a decision differs from the previous iteration's);
//   out[b][W]          decisions packed 32 per word, least significant bit first;
//   status[b]          iterations | 1 << 16 (a CRC was checked) | ok << 17.
//
// Parameters (-D): TK (K), TM (memory m), TP (sub-blocks), TG (training window),
// GUARD (0 none, 1 PIVI, 2 DSTW, 3 PIVIDSTW), MAXSTAR (0 max, 1 exact, 2 linear),
// STOP (0 never, 1 stable, 2 CRC24A, 3 CRC24B), ITERS, LMAX (longest sub-block,
// tail included), NT (threads per CTA), ALPHA_SHARED, TD1 / TD2 (start of the
// streams d1, d2 in a unit), TTAIL (the 4m positions of the tail bits in a
// unit), TINTO (per state: predecessor 0, its branch, predecessor 1, its
// branch), TOUT (per state: next state on input 0, its branch, on input 1, its
// branch). A branch index is (u << 1) | parity.
#include "common.cuh"

namespace turbo {

constexpr int K = TK;
constexpr int M = TM;
constexpr int S = 1 << M;
constexpr int STAGES = K + M;
constexpr int P = TP;
constexpr int G = TG;
constexpr bool TRAINS = GUARD == 2 || GUARD == 3;
constexpr bool CARRIES = GUARD == 1 || GUARD == 3;
constexpr int TPC = NT / S;           // tasks per CTA
constexpr int W = (K + 31) / 32;      // output words per block
constexpr unsigned FULL = 0xffffffffu;
// A state that cannot be: finite, so that sums stay ordered (siso.rs).
constexpr float IMPOSSIBLE = -1e30f;
constexpr float LN2 = 0.693147180559945309417232121458176568f;

static_assert(NT % 32 == 0 && S <= 32 && NT % S == 0, "tasks must tile whole warps");

__constant__ int INTO[4 * S] = TINTO;
__constant__ int OUT[4 * S] = TOUT;
__constant__ int TAIL[4 * M] = TTAIL;

// max as the model writes it (a comparison, not fmaxf).
__device__ __forceinline__ float max2(float a, float b) { return a > b ? a : b; }

// max*(a, b), MaxStar::apply.
__device__ __forceinline__ float op(float a, float b) {
    float m = max2(a, b);
#if MAXSTAR == 0
    return m;
#elif MAXSTAR == 1
    return __fadd_rn(m, log1pf(expf(-fabsf(__fsub_rn(a, b)))));
#else
    return __fadd_rn(m, fmaxf(__fsub_rn(LN2, __fmul_rn(0.25f, fabsf(__fsub_rn(a, b)))), 0.0f));
#endif
}

// The four branch metrics of a stage: A ± B with A = (sys + la)/2, B = par/2.
struct Branches {
    float g0, g1, g2, g3, half;
    __device__ __forceinline__ float operator[](int b) const {
        return (b & 2) ? ((b & 1) ? g3 : g2) : ((b & 1) ? g1 : g0);
    }
};

__device__ __forceinline__ Branches branches(float sys, float par, float la) {
    float a = __fmul_rn(0.5f, __fadd_rn(sys, la));
    float b = __fmul_rn(0.5f, par);
    return Branches{__fadd_rn(a, b), __fsub_rn(a, b), __fadd_rn(-a, b), __fsub_rn(-a, b), b};
}

// Metrics of a terminated edge: state 0 only.
__device__ __forceinline__ float terminated(int s) { return s == 0 ? 0.0f : IMPOSSIBLE; }

// One stage of either recursion for the lane of state s, whose two neighbours
// (predecessors forward, successors backward) are lanes n0 and n1 through
// branches b0 and b1; x0 and x1 receive the neighbours' metrics. Normalised
// by state 0's new metric.
__device__ __forceinline__ float step(float cur, const Branches& g, int n0, int b0, int n1, int b1, float& x0, float& x1) {
    x0 = __shfl_sync(FULL, cur, n0, S);
    x1 = __shfl_sync(FULL, cur, n1, S);
    float n = op(__fadd_rn(x0, g[b0]), __fadd_rn(x1, g[b1]));
    return __fsub_rn(n, __shfl_sync(FULL, n, 0, S));
}

// max* of t over the S lanes of a task, started from IMPOSSIBLE. The model
// folds states 0..S−1 in order; max is exact in any order, so a butterfly
// gives its result, while the log-MAP corrections are folded in order.
__device__ __forceinline__ float fold(float t) {
#if MAXSTAR == 0
#pragma unroll
    for (int o = S / 2; o > 0; o >>= 1) t = max2(t, __shfl_xor_sync(FULL, t, o, S));
    return max2(IMPOSSIBLE, t);
#else
    float m = IMPOSSIBLE;
#pragma unroll
    for (int j = 0; j < S; j++) m = op(m, __shfl_sync(FULL, t, j, S));
    return m;
#endif
}

__device__ __forceinline__ int clamp_stage(int kk) { return kk < 0 ? 0 : (kk >= STAGES ? STAGES - 1 : kk); }

// One half-iteration of constituent decoder C over every sub-block of
// `blocks` blocks (siso.rs `run`), with the exchange that follows it
// (group.rs): decoder 0 writes la[1][i] = scale·le[Π(i)]; decoder 1 writes
// la[0][Π(i)] = scale·le[i] and the decision of bit Π(i), (sys + la) + le < 0,
// flagging the block when a decision changed. `it` counts from 1.
template <int C>
__device__ __forceinline__ void siso(u32 blocks, int it, const float2* __restrict__ sp, float* __restrict__ la,
                                     const u32* __restrict__ perm, const u32* __restrict__ inv, float* __restrict__ alpha_g,
                                     float* __restrict__ edges, u8* __restrict__ hard, u32* __restrict__ flags, float scale) {
    const int s = threadIdx.x % S;
    const u32 task = blockIdx.x * TPC + threadIdx.x / S;
    const bool exists = task < blocks * P;
    const u32 blk = exists ? task / P : 0;
    const int p = exists ? (int)(task % P) : 0;
    const bool active = exists && flags[blk] == 0;
    // A warp with nothing to do leaves whole; otherwise every lane stays for the shuffles.
    if (__ballot_sync(FULL, active) == 0) return;

    const int start = p * K / P;
    const int end = p + 1 == P ? STAGES : (p + 1) * K / P;
    const int len = end - start;
    const float2* spb = sp + ((size_t)C * blocks + blk) * STAGES;
    const float* lab = la + ((size_t)C * blocks + blk) * K;
    auto stage = [&](int kk) {
        kk = clamp_stage(kk);
        float2 v = spb[kk];
        return branches(v.x, v.y, kk < K ? lab[kk] : 0.0f);
    };

#if ALPHA_SHARED
    extern __shared__ float alpha_s[];
    float* alpha = alpha_s + threadIdx.x;
#else
    float* alpha = alpha_g + (size_t)blockIdx.x * (LMAX + 1) * NT + threadIdx.x;
#endif

    // Edge metrics of this iteration's predecessor (read) and for the next (write).
    const size_t per = (size_t)blocks * P * S;
    const bool carried = CARRIES && it > 1;
    const float* read_a = edges + (size_t)((C * 2 + (it + 1) % 2) * 2) * per;
    const float* read_b = read_a + per;
    float* write_a = edges + (size_t)((C * 2 + it % 2) * 2) * per;
    float* write_b = write_a + per;
    const size_t here = ((size_t)blk * P + p) * S + s;

    const int fp0 = INTO[4 * s], fb0 = INTO[4 * s + 1], fp1 = INTO[4 * s + 2], fb1 = INTO[4 * s + 3];
    const int bn0 = OUT[4 * s], bb0 = OUT[4 * s + 1], bn1 = OUT[4 * s + 2], bb1 = OUT[4 * s + 3];
    float x0, x1;

    // α at the start: the true start, or an estimate (carried, trained).
    float cur = (carried && p > 0 && active) ? read_a[here] : 0.0f;
    if (TRAINS) {
        for (int j = 0; j < G; j++) cur = step(cur, stage(start - G + j), fp0, fb0, fp1, fb1, x0, x1);
    }
    if (p == 0) cur = terminated(s);
    alpha[0] = cur;
    for (int i = 0; i < LMAX; i++) {
        float n = step(cur, stage(start + i), fp0, fb0, fp1, fb1, x0, x1);
        if (i < len) {
            cur = n;
            alpha[(size_t)(i + 1) * NT] = n;
        }
    }
    if (CARRIES && active && p + 1 < P) {
        write_a[here + S] = alpha[(size_t)(TRAINS ? len - G : len) * NT];
    }

    // β at the end: the terminated end, or an estimate.
    cur = (carried && p + 1 < P && active) ? read_b[here] : 0.0f;
    if (TRAINS) {
        for (int j = G - 1; j >= 0; j--) cur = step(cur, stage(end + j), bn0, bb0, bn1, bb1, x0, x1);
    }
    if (p + 1 == P) cur = terminated(s);
    for (int i = LMAX - 1; i >= 0; i--) {
        const int kk = start + i;
        const int at = clamp_stage(kk);
        const float2 v = spb[at];
        const float lak = at < K ? lab[at] : 0.0f;
        const Branches g = branches(v.x, v.y, lak);
        float n = step(cur, g, bn0, bb0, bn1, bb1, x0, x1);
        // Extrinsic LLR of the stage from α here and β at the next stage (x0, x1).
        const float a = alpha[(size_t)i * NT];
        const float minus = -g.half;
        const float m0 = fold(__fadd_rn(__fadd_rn(a, (bb0 & 1) ? minus : g.half), x0));
        const float m1 = fold(__fadd_rn(__fadd_rn(a, (bb1 & 1) ? minus : g.half), x1));
        if (i < len) {
            if (active && kk < K && s == 0) {
                const float le = __fsub_rn(m0, m1);
                if (C == 0) {
                    la[((size_t)blocks + blk) * K + inv[kk]] = __fmul_rn(scale, le);
                } else {
                    const u32 to = perm[kk];
                    la[(size_t)blk * K + to] = __fmul_rn(scale, le);
                    const u8 bit = __fadd_rn(__fadd_rn(v.x, lak), le) < 0.0f;
                    u8* h = hard + (size_t)blk * K + to;
                    if (*h != bit) flags[blocks + blk] = 1;
                    *h = bit;
                }
            }
            cur = n;
            if (CARRIES && active && p > 0 && i == (TRAINS ? G : 0)) write_b[here - S] = cur;
        }
    }
}

// Every unit's LLRs times 1/scale into sp in both decoders' orders, the first
// decoder's a-priori LLRs zeroed, the block's flags cleared. One CTA per block.
template <typename L>
__device__ __forceinline__ void load(const L* __restrict__ in, u64 pitch, u32 blocks, float inv_scale, const u32* __restrict__ perm,
                                     float2* __restrict__ sp, float* __restrict__ la, u32* __restrict__ flags) {
    const u32 blk = blockIdx.x;
    if (blk >= blocks) return;
    const L* u = in + blk * pitch;
    auto f = [&](int i) { return __fmul_rn((float)u[i], inv_scale); };
    float2* sp0 = sp + (size_t)blk * STAGES;
    float2* sp1 = sp + ((size_t)blocks + blk) * STAGES;
    for (int kk = threadIdx.x; kk < STAGES; kk += blockDim.x) {
        if (kk < K) {
            sp0[kk] = make_float2(f(kk), f(TD1 + kk));
            sp1[kk] = make_float2(f(perm[kk]), f(TD2 + kk));
            la[(size_t)blk * K + kk] = 0.0f;
        } else {
            const int i = kk - K;
            sp0[kk] = make_float2(f(TAIL[2 * i]), f(TAIL[2 * i + 1]));
            sp1[kk] = make_float2(f(TAIL[2 * M + 2 * i]), f(TAIL[2 * M + 2 * i + 1]));
        }
    }
    if (threadIdx.x == 0) {
        flags[blk] = 0;
        flags[blocks + blk] = 0;
    }
}

#if STOP >= 2
#if STOP == 2
constexpr u32 POLY = 0x864CFBu;  // CRC24A
#else
constexpr u32 POLY = 0x800063u;  // CRC24B
#endif
constexpr u32 MASK24 = 0xFFFFFFu;

// r·D mod g.
__device__ __forceinline__ u32 xtime(u32 r) {
    u32 top = (r >> 23) & 1;
    r = (r << 1) & MASK24;
    return top ? r ^ POLY : r;
}

// a·b mod g.
__device__ u32 mulmod(u32 a, u32 b) {
    u32 r = 0;
    for (int i = 23; i >= 0; i--) {
        r = xtime(r);
        if ((b >> i) & 1) r ^= a;
    }
    return r;
}

// D^n mod g.
__device__ u32 xpow(u32 n) {
    u32 r = 1, base = 2;
    while (n) {
        if (n & 1) r = mulmod(r, base);
        base = mulmod(base, base);
        n >>= 1;
    }
    return r;
}
#endif

}  // namespace turbo

using namespace turbo;

extern "C" __global__ void __launch_bounds__(NT) turbo_siso0(u32 blocks, int it, const float2* sp, float* la, const u32* perm, const u32* inv,
                                                            float* alpha, float* edges, u8* hard, u32* flags, float scale) {
    siso<0>(blocks, it, sp, la, perm, inv, alpha, edges, hard, flags, scale);
}

extern "C" __global__ void __launch_bounds__(NT) turbo_siso1(u32 blocks, int it, const float2* sp, float* la, const u32* perm, const u32* inv,
                                                            float* alpha, float* edges, u8* hard, u32* flags, float scale) {
    siso<1>(blocks, it, sp, la, perm, inv, alpha, edges, hard, flags, scale);
}

extern "C" __global__ void turbo_load_i8(const i8* in, u64 pitch, u32 blocks, float inv_scale, const u32* perm, float2* sp, float* la, u32* flags) {
    load(in, pitch, blocks, inv_scale, perm, sp, la, flags);
}

extern "C" __global__ void turbo_load_f32(const float* in, u64 pitch, u32 blocks, float inv_scale, const u32* perm, float2* sp, float* la, u32* flags) {
    load(in, pitch, blocks, inv_scale, perm, sp, la, flags);
}

// After iteration `it` (group.rs): stop a block when its criterion holds or
// at the last iteration, with its packed decisions and its status. The CRC of
// the K decided bits (remainder of a(D)·D^24 mod g, zero when the block
// carries its CRC) is linear in the bits: each thread takes a chunk, computes
// its remainder from zero and moves it to its place by D^(bits after the
// chunk), and the chunks' remainders are XORed. One CTA (STOP_NT threads) per block.
constexpr int STOP_NT = 256;
extern "C" __global__ void __launch_bounds__(STOP_NT) turbo_stop(u32 blocks, int it, const u8* hard, u32* flags, u32* out, u32* status) {
    const u32 blk = blockIdx.x;
    if (blk >= blocks || flags[blk] != 0) return;
    const u8* h = hard + (size_t)blk * K;
    const bool changed = flags[blocks + blk] != 0;
    bool ok = false;
#if STOP >= 2
    __shared__ u32 part[STOP_NT / 32];
    constexpr int CHUNK = (K + STOP_NT - 1) / STOP_NT;
    const int lo = threadIdx.x * CHUNK;
    const int hi = lo + CHUNK < K ? lo + CHUNK : K;
    u32 r = 0;
    for (int i = lo; i < hi; i++) {
        u32 top = ((r >> 23) ^ h[i]) & 1;
        r = (r << 1) & MASK24;
        if (top) r ^= POLY;
    }
    if (lo < hi) r = mulmod(r, xpow(K - hi));
    for (int o = 16; o > 0; o >>= 1) r ^= __shfl_xor_sync(FULL, r, o);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = r;
    __syncthreads();
    u32 all = 0;
    for (int j = 0; j < STOP_NT / 32; j++) all ^= part[j];
    ok = all == 0;
#endif
    const bool stop = (STOP == 1 && it > 1 && !changed) || (STOP >= 2 && ok) || it == ITERS;
    // Every thread has read `changed` before thread 0 clears it.
    __syncthreads();
    if (stop) {
        for (int w = threadIdx.x; w < W; w += STOP_NT) {
            u32 word = 0;
            for (int j = 0; j < 32 && 32 * w + j < K; j++) word |= (u32)h[32 * w + j] << j;
            out[(size_t)blk * W + w] = word;
        }
    }
    if (threadIdx.x == 0) {
        flags[blocks + blk] = 0;
        if (stop) {
            flags[blk] = 1;
            status[blk] = (u32)it | (STOP >= 2 ? (1u << 16) | ((u32)ok << 17) : 0u);
        }
    }
}
