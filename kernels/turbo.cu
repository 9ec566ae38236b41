// Turbo decoder: the half-iterations of the sub-block model (P sub-blocks per
// code block, guards none / PIVI / DSTW / PIVIDSTW), the exchange of scaled
// extrinsics through the interleaver, hard decisions and the early stop, for
// many code blocks per launch: one kernel per step (here), or the whole
// decoding of a code block in one CTA (the fused kernel, at the end).
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
//                      with TSOFT followed by soft[b][K], f32 a-posteriori LLRs;
//   status[b]          iterations | 1 << 16 (a CRC was checked) | ok << 17.
//
// Parameters (-D): TK (K), TM (memory m), TP (sub-blocks), TG (training window),
// GUARD (0 none, 1 PIVI, 2 DSTW, 3 PIVIDSTW), MAXSTAR (0 max, 1 exact, 2 linear),
// STOP (0 never, 1 stable, 2 CRC24A, 3 CRC24B), ITERS, LMAX (longest sub-block,
// tail included), NT (threads per CTA), ALPHA_SHARED, TD1 / TD2 (start of the
// streams d1, d2 in a unit), TTAIL (the 4m positions of the tail bits in a
// unit), TINTO (per state: predecessor 0, its branch, predecessor 1, its
// branch), TOUT (per state: next state on input 0, its branch, on input 1, its
// branch). A branch index is (u << 1) | parity. The fused kernel (below):
// TFNT (threads of its CTA), TSEG (stages between α checkpoints),
// FROWS_GLOBAL (stage rows in global rather than shared memory), FCK_GLOBAL
// (α checkpoints likewise), FCVT_MAGIC (i8 to float by integer arithmetic).
// TSOFT (0 or 1): also write each bit's a-posteriori LLR of the last
// iteration, (sys + la) + le of decoder 1 (group.rs `app`), as f32 in
// natural order after the packed bits: soft[b][K] at out + B·W. A switch at
// compile time, so that the kernels without it are unchanged.
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
constexpr unsigned FULL = FULL_MASK;
// A state that cannot be: finite, so that sums stay ordered (siso.rs).
constexpr float IMPOSSIBLE = -1e30f;
constexpr float LN2 = 0.693147180559945309417232121458176568f;

static_assert(NT % 32 == 0 && S <= 32 && NT % S == 0, "tasks must tile whole warps");

__constant__ int INTO[4 * S] = TINTO;
__constant__ int OUT[4 * S] = TOUT;
__constant__ int TAIL[4 * M] = TTAIL;

// max as the model writes it, a > b ? a : b, computed by fmaxf (one
// instruction instead of a compare and a select). The two differ only for
// NaN (never: inputs are finite, metrics normalised, IMPOSSIBLE finite) and
// for a +0/−0 tie, and no metric or sum here is ever −0: α and β start at +0
// or IMPOSSIBLE and a sum is −0 only when both terms are, a normalised metric
// x − x is +0, and a branch metric that is −0 (−A − B with A = B = +0) is
// only ever added to a metric.
__device__ __forceinline__ float max2(float a, float b) { return fmaxf(a, b); }

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
                                     float* __restrict__ edges, u8* __restrict__ hard, u32* __restrict__ flags, float scale, u32* __restrict__ out) {
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
                    const float app = __fadd_rn(__fadd_rn(v.x, lak), le);
#if TSOFT
                    // Every iteration's, until the block stops: the last stays.
                    ((float*)(out + (size_t)blocks * W))[(size_t)blk * K + to] = app;
#endif
                    const u8 bit = app < 0.0f;
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

#if STOP == 2
typedef Crc24A StopCrc;
#elif STOP == 3
typedef Crc24B StopCrc;
#endif

}  // namespace turbo

using namespace turbo;

extern "C" __global__ void __launch_bounds__(NT) turbo_siso0(u32 blocks, int it, const float2* sp, float* la, const u32* perm, const u32* inv,
                                                            float* alpha, float* edges, u8* hard, u32* flags, float scale, u32* out) {
    siso<0>(blocks, it, sp, la, perm, inv, alpha, edges, hard, flags, scale, out);
}

extern "C" __global__ void __launch_bounds__(NT) turbo_siso1(u32 blocks, int it, const float2* sp, float* la, const u32* perm, const u32* inv,
                                                            float* alpha, float* edges, u8* hard, u32* flags, float scale, u32* out) {
    siso<1>(blocks, it, sp, la, perm, inv, alpha, edges, hard, flags, scale, out);
}

extern "C" __global__ void turbo_load_i8(const i8* in, u64 pitch, u32 blocks, float inv_scale, const u32* perm, float2* sp, float* la, u32* flags) {
    load(in, pitch, blocks, inv_scale, perm, sp, la, flags);
}

extern "C" __global__ void turbo_load_f32(const float* in, u64 pitch, u32 blocks, float inv_scale, const u32* perm, float2* sp, float* la, u32* flags) {
    load(in, pitch, blocks, inv_scale, perm, sp, la, flags);
}

// De-rate-matching on load (rate_match.rs `combine`, transport.rs
// `dematch_block`): unit b of the staged input (`pitch` bytes each, a
// multiple of 4, so that the format word is aligned) holds its format f (a
// u32) and then its E_f rate-matched LLRs of type L; each position j of its
// 3K + 4M layout (of O, `out`, one unit per block) gets the sum, in the order
// they were sent, of the LLRs sent from it: those at first = first[f][j],
// first + period_f, ... below E_f (none for RM_NONE), from 0 with rounded
// f32 additions, or i8 additions saturated to ±127 at every step
// (llr.rs `plus`), as the host adds them; `known` for the known zeros
// (RM_KNOWN). table: (E_f, period_f) for every format, then each format's
// first[3K + 4M]. One CTA per block.
constexpr u32 RM_NONE = 0xffffffffu, RM_KNOWN = 0xfffffffeu;
constexpr int LAYOUT = 3 * K + 4 * M;
__device__ __forceinline__ float plus(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ i8 plus(i8 a, i8 b) { return (i8)max(-127, min(127, (int)a + (int)b)); }
template <typename L, typename O>
__device__ __forceinline__ void dematch(const unsigned char* __restrict__ in, u64 pitch, u32 blocks, const u32* __restrict__ table, u32 formats, O known,
                                        O* __restrict__ out) {
    const u32 blk = blockIdx.x;
    if (blk >= blocks) return;
    const unsigned char* unit = in + blk * pitch;
    const u32 f = *(const u32*)unit;
    const L* llr = (const L*)(unit + 4);
    const u32 e_end = table[2 * f], period = table[2 * f + 1];
    const u32* first = table + 2 * formats + (size_t)f * LAYOUT;
    O* o = out + (size_t)blk * LAYOUT;
    for (int j = threadIdx.x; j < LAYOUT; j += blockDim.x) {
        const u32 t = first[j];
        O v = 0;
        if (t == RM_KNOWN) {
            v = known;
        } else {
            for (u32 e = t; e < e_end; e += period) v = plus(v, (O)llr[e]);
        }
        o[j] = v;
    }
}

extern "C" __global__ void turbo_dematch_i8(const unsigned char* in, u64 pitch, u32 blocks, const u32* table, u32 formats, float known, float* out) {
    dematch<i8, float>(in, pitch, blocks, table, formats, known, out);
}

extern "C" __global__ void turbo_dematch_f32(const unsigned char* in, u64 pitch, u32 blocks, const u32* table, u32 formats, float known, float* out) {
    dematch<float, float>(in, pitch, blocks, table, formats, known, out);
}

// i8 layouts of i8 LLRs, for rate matchings that send no bit twice (the
// host's rule, transport.rs `wide_layouts`). `known` is the known zero's
// LLR as a float: the i8 one's (127) converts exactly.
extern "C" __global__ void turbo_dematch_i8_i8(const unsigned char* in, u64 pitch, u32 blocks, const u32* table, u32 formats, float known, i8* out) {
    dematch<i8, i8>(in, pitch, blocks, table, formats, (i8)known, out);
}

// After iteration `it` (group.rs): stop a block when its criterion holds or
// at the last iteration, with its packed decisions and its status; the CRC
// of the K decided bits is checked by the CTA's threads together
// (common.cuh). One CTA (STOP_NT threads) per block.
constexpr int STOP_NT = 256;
extern "C" __global__ void __launch_bounds__(STOP_NT) turbo_stop(u32 blocks, int it, const u8* hard, u32* flags, u32* out, u32* status) {
    const u32 blk = blockIdx.x;
    if (blk >= blocks || flags[blk] != 0) return;
    const u8* h = hard + (size_t)blk * K;
    const bool changed = flags[blocks + blk] != 0;
    bool ok = false;
#if STOP >= 2
    __shared__ u32 part[STOP_NT / 32];
    ok = StopCrc::block_checks<K, STOP_NT>([&](int i) { return (u32)h[i]; }, part);
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

// ---------------------------------------------------------------------------
// The fused decoder: one CTA decodes one code block from its LLRs to its
// packed bits (load, every iteration, the stop), one thread per sub-block
// with the S state metrics in registers. Why: the kernels above spend a warp
// shuffle per state and stage, reload every stage's inputs from global memory
// in each half-iteration and launch 2·ITERS + 1 + ITERS kernels per batch;
// here a step is S independent add-add-max chains in one thread, the block's
// inputs and a-priori LLRs sit in shared memory for all iterations, and the
// half-iterations are separated by __syncthreads alone.
//
// α of a whole sub-block does not fit (LMAX·S floats per thread), so the
// forward pass keeps α only every SEG stages (checkpoints, state 0 left out:
// after normalisation by state 0 it is always +0), and the backward pass
// recomputes each segment's α into registers from its checkpoint, with the
// very operations of the forward pass, so the same bits.
//
// Shared memory, per CTA (FNT = P rounded up to whole warps):
//   X[XLEN]              a-priori LLRs in natural order, read and rewritten in
//                        place by both decoders (decoder 0 at stage k reads
//                        and writes X[k]; decoder 1 at stage i, X[Π(i)]; no
//                        index is touched by two threads in a half-iteration).
//                        Padded by one word every 64 so that sub-blocks 64
//                        stages apart fall into different banks; the tail's
//                        indices (K .. K + 2M) hold 0;
//   ck[NSEG][S−1][FNT]   α checkpoints (with FCK_GLOBAL in a global scratch buffer);
//   hb[W + 1]            hard decisions, 32 per word (atomics: decoder 1
//                        writes them in interleaved order), and a spare word
//                        that the tail's indices (K + M + j) may read;
//   misc                 changed flag, CRC partials, the stop decision;
//   sys[K + 2M]          the raw systematic LLRs in natural order, then the
//                        tail's of decoder 0, then decoder 1's: decoder 1
//                        reads stage i's at Π(i), the index of its a-priori
//                        LLR, so the interleaved copy is not stored;
//   in[2][LMAX][FNT]     the raw parity LLRs of each decoder's stages, row i
//                        holding every sub-block's i-th stage, so a warp
//                        reads one row (conflict-free, one wavefront); with
//                        FROWS_GLOBAL in a global scratch buffer instead (one
//                        more CTA per SM for less shared memory, coalesced
//                        loads through L1/L2 in place of shared ones).
// Global: edges (PIVI) as above; prow[2][PROWS][FNT]: each decoder's index
// of the systematic and a-priori LLRs of each sub-block's stages in the same
// row layout (coalesced): decoder 0 the stage, decoder 1 Π (the tail's:
// past decoder 0's), 0 past the sub-block. A table lookup for both decoders
// costs fewer instructions than the branches that chose between them.
namespace turbo {

constexpr int FNT = TFNT;               // threads of a fused CTA
constexpr int SEG = TSEG;               // stages per α checkpoint
constexpr int NSEG = (LMAX + SEG - 1) / SEG;
constexpr int GW = G > 0 ? G : 1;       // training stages (an array of G > 0)
// X covers the tail's indices too (decoder 0's K.., decoder 1's K + M..),
// zeroed by the load phase and never written: their a-priori LLR is 0.
constexpr int XLEN = (K + 2 * M - 1) + ((K + 2 * M - 1) >> 6) + 1;
// Rows of each decoder's stage-index table: a sub-block's stages and one
// segment more (the indices are loaded a segment ahead).
constexpr int PROWS = LMAX + SEG;
constexpr int MISC = 4 + FNT / 32;
// Words before `sys`; `fused_smem` in src/gpu/turbo/kernel.rs computes the same.
constexpr int CKW = NSEG * (S - 1) * FNT;  // checkpoint words
constexpr int HEAD = XLEN + (FCK_GLOBAL ? 0 : CKW) + W + 1 + MISC;
constexpr int SYSLEN = K + 2 * M;
static_assert(FNT % 32 == 0 && FNT >= P, "one thread per sub-block, whole warps");

__device__ __forceinline__ int px(int k) { return k + (k >> 6); }

// Trellis tables as compile-time constants, so that register arrays are
// indexed statically once the state loops are unrolled.
__device__ __forceinline__ int into_t(int i) {
    constexpr int t[4 * S] = TINTO;
    return t[i];
}
__device__ __forceinline__ int out_t(int i) {
    constexpr int t[4 * S] = TOUT;
    return t[i];
}

// m + g[b] with b static: branches 2 and 3 (−A + B, −A − B) as m − g1 and
// m − g0, so that a step computes two branch metrics instead of four.
// Exact: −A + B and −(A − B) round to the same value (round to nearest is
// symmetric) except that for A = B the first is +0 and the second −0, and
// m ± 0 is m for every metric (none is ever −0).
__device__ __forceinline__ float add_branch(float m, const Branches& g, int b) {
    return b == 0 ? __fadd_rn(m, g.g0) : b == 1 ? __fadd_rn(m, g.g1) : b == 2 ? __fsub_rn(m, g.g1) : __fsub_rn(m, g.g0);
}

// One step of the forward (FWD) or backward recursion over all S states of
// one thread: what `step` above computes across S lanes.
template <bool FWD>
__device__ __forceinline__ void step_all(float (&m)[S], const Branches& g) {
    float n[S];
#pragma unroll
    for (int s = 0; s < S; s++) {
        const int n0 = FWD ? into_t(4 * s) : out_t(4 * s), b0 = FWD ? into_t(4 * s + 1) : out_t(4 * s + 1);
        const int n1 = FWD ? into_t(4 * s + 2) : out_t(4 * s + 2), b1 = FWD ? into_t(4 * s + 3) : out_t(4 * s + 3);
        n[s] = op(add_branch(m[n0], g, b0), add_branch(m[n1], g, b1));
    }
    // n[0] − n[0] is +0 for every finite n[0] (all metrics are finite), so
    // state 0 is set rather than computed: one subtraction fewer per step.
    const float z = n[0];
    m[0] = 0.0f;
#pragma unroll
    for (int s = 1; s < S; s++) m[s] = __fsub_rn(n[s], z);
}

// max* over the S terms of one thread, as `fold`: the model's order for the
// log-MAP corrections; for max a tree (max is exact in any order, and no term
// is ever −0, so the order cannot pick a different zero).
__device__ __forceinline__ float fold_states(const float (&t)[S]) {
#if MAXSTAR == 0
    float v[S];
#pragma unroll
    for (int s = 0; s < S; s++) v[s] = t[s];
#pragma unroll
    for (int w = S / 2; w > 0; w >>= 1) {
#pragma unroll
        for (int s = 0; s < w; s++) v[s] = max2(v[s], v[s + w]);
    }
    // The model folds from IMPOSSIBLE: max(IMPOSSIBLE, v[0]) is v[0] whenever
    // some term exceeds IMPOSSIBLE, which holds for every stage whose fold is
    // used (kk < K): α of state 0 is +0 at every stage (terminated start,
    // or normalised), and β at every stage ≤ K is real in every state (the
    // terminated end reaches every state in the M tail steps; carried and
    // trained estimates are normalised metrics or 0), so state 0's term
    // α(0) ± B + β(next) is a real metric, far above −1e30. Both folds of
    // the tail's stages may be IMPOSSIBLE, but their results are unused.
    return v[0];
#else
    float m = IMPOSSIBLE;
#pragma unroll
    for (int s = 0; s < S; s++) m = op(m, t[s]);
    return m;
#endif
}

// The shared memory of a fused CTA.
template <typename L>
struct Fused {
    float* x;
    L* sys;
    L* in;
    float* ck;
    u32* hb;
    int* misc;  // [0] changed, [2..] CRC partials
#if TSOFT
    float* soft;  // this block's a-posteriori LLRs in global memory, natural order
#endif
    __device__ Fused(unsigned char* base, void* rows, float* ckg, u32 blk, float* soft_out) {
#if TSOFT
        soft = soft_out + (size_t)blk * K;
#endif
        x = (float*)base;
#if FCK_GLOBAL
        // This block's checkpoints in global memory, written and read back
        // by the same thread (plain loads, as for the rows).
        ck = ckg + (size_t)blk * CKW;
        hb = (u32*)(x + XLEN);
#else
        ck = x + XLEN;
        hb = (u32*)(ck + CKW);
#endif
        misc = (int*)(hb + W + 1);
        sys = (L*)((u32*)base + HEAD);
#if FROWS_GLOBAL
        // This block's rows in global memory (written by its own load phase,
        // so read with plain loads, not through the read-only cache).
        in = (L*)rows + (size_t)blk * 2 * LMAX * FNT;
#else
        in = sys + SYSLEN;
#endif
    }
};

__device__ __forceinline__ int fstart(int q) { return q * K / P; }
__device__ __forceinline__ int fend(int q) { return q + 1 == P ? STAGES : (q + 1) * K / P; }

// The inputs of one stage that both passes need: sl = sys + la (the
// decision's first sum, and 2A of the branch metrics), b = par/2, and the
// natural index of the stage's a-priori LLR.
struct StageIn {
    float sl, b;
    int xi;
};

// (float)v for an i8 LLR. With FCVT_MAGIC, without the conversion unit (16
// conversions per clock per SM on sm_90, against 128 additions): the float 1.5·2^23 + v has v in its low
// mantissa bits, exactly, and subtracting 1.5·2^23 leaves exactly v (+0 for
// 0); three full-rate instructions instead of one slow one.
#if FCVT_MAGIC
__device__ __forceinline__ float to_float(signed char v) { return __fsub_rn(__int_as_float(0x4B400000 + (int)v), 12582912.0f); }
#else
__device__ __forceinline__ float to_float(signed char v) { return (float)v; }
#endif
__device__ __forceinline__ float to_float(float v) { return v; }

// B = par/2 of a stage from its raw parity LLR v: the model's
// 0.5 · (v · inv_scale). For i8 LLRs v · (inv_scale / 2) (hs, one
// multiplication fewer), exactly the same: v is an integer of magnitude ≤ 128,
// and the host runs the fused kernel only for 2^−118 ≤ inv_scale ≤ 2^120, so
// v · inv_scale, its half and v · hs are all normal (or ±0 for v = 0, with the
// same sign), and rounding commutes with a power-of-two scaling there:
// RN(v·s)·0.5 = RN(v·s·0.5) = RN(v·hs).
__device__ __forceinline__ float half_par(signed char v, float inv_scale, float hs) { return __fmul_rn(to_float(v), hs); }
__device__ __forceinline__ float half_par(float v, float inv_scale, float hs) { return __fmul_rn(0.5f, __fmul_rn(v, inv_scale)); }

// Stage data of decoder c at row r of sub-block q, whose systematic LLR is
// sys[xi] and a-priori LLR X[xi] (0 for the tail's).
template <typename L>
__device__ __forceinline__ StageIn stage_in(const Fused<L>& f, int c, int r, int q, int xi, float inv_scale) {
    const float sys = __fmul_rn(to_float(f.sys[xi]), inv_scale);
    const float lak = f.x[px(xi)];
    return StageIn{__fadd_rn(sys, lak), half_par(f.in[(c * LMAX + r) * FNT + q], inv_scale, __fmul_rn(0.5f, inv_scale)), xi};
}

// `branches` from a StageIn: the same operations on the same values.
__device__ __forceinline__ Branches branches_of(const StageIn& in) {
    const float a = __fmul_rn(0.5f, in.sl), b = in.b;
    return Branches{__fadd_rn(a, b), __fsub_rn(a, b), __fadd_rn(-a, b), __fsub_rn(-a, b), b};
}

// One half-iteration of decoder c for thread p, phase A: the α at the start
// and the β at the end of the sub-block (carried, trained, terminated). A
// training window's a-priori indices (decoder 1: Π from the row table in
// global memory) are all loaded before its recursion, so that their latencies
// overlap.
template <typename L>
__device__ __forceinline__ void fused_edges(const Fused<L>& f, int c, int p, int it, u32 blocks, u32 blk, const u32* __restrict__ prow, const float* __restrict__ edges,
                                            float inv_scale, float (&a)[S], float (&b)[S]) {
    const int start = fstart(p), end = fend(p);
    const size_t per = (size_t)blocks * P * S;
    const bool carried = CARRIES && it > 1;
    const float* read_a = edges + (size_t)((c * 2 + (it + 1) % 2) * 2) * per;
    const float* read_b = read_a + per;
    const size_t here = ((size_t)blk * P + p) * S;
#pragma unroll
    for (int s = 0; s < S; s++) a[s] = (carried && p > 0) ? read_a[here + s] : 0.0f;
    if (TRAINS && p > 0) {
        // Stages start−G .. start−1 are the last G of sub-block p − 1.
        const int ps = fstart(p - 1);
        int xi[GW];
#pragma unroll
        for (int j = 0; j < GW; j++) xi[j] = (int)prow[(c * PROWS + start - G + j - ps) * FNT + p - 1];
#pragma unroll
        for (int j = 0; j < GW; j++) step_all<true>(a, branches_of(stage_in(f, c, start - G + j - ps, p - 1, xi[j], inv_scale)));
    }
    if (p == 0) {
#pragma unroll
        for (int s = 0; s < S; s++) a[s] = terminated(s);
    }
#pragma unroll
    for (int s = 0; s < S; s++) b[s] = (carried && p + 1 < P) ? read_b[here + s] : 0.0f;
    if (TRAINS && p + 1 < P) {
        // Stages end .. end+G−1 are the first G of sub-block p + 1.
        int xi[GW];
#pragma unroll
        for (int j = 0; j < GW; j++) xi[j] = (int)prow[(c * PROWS + j) * FNT + p + 1];
#pragma unroll
        for (int j = GW - 1; j >= 0; j--) step_all<false>(b, branches_of(stage_in(f, c, j, p + 1, xi[j], inv_scale)));
    }
    if (p + 1 == P) {
#pragma unroll
        for (int s = 0; s < S; s++) b[s] = terminated(s);
    }
}

// Phase B: the forward pass (checkpoints, the carried α of the next
// sub-block), then the backward pass with the extrinsic LLRs written back
// into X (and, for decoder 1, the decisions).
//
// The sub-block's stages are cut into len / SEG whole segments and a
// remainder of len % SEG stages (only sub-blocks whose length SEG does not
// divide: at K = 6144, P = 96, SEG = 8 the last one, whose tail adds M). A
// whole segment runs unrolled and unguarded, so that the compiler can overlap
// one stage's extrinsic with the next stage's recursion; the remainder runs
// stage by stage in a loop. Each segment's stage inputs are loaded together
// before its recursion, and decoder 1's a-priori indices (Π from the row
// table in global memory) one segment ahead, so that their latencies overlap
// the work instead of adding up stage after stage.
template <typename L>
__device__ __forceinline__ void fused_run(const Fused<L>& f, int c, int p, int it, u32 blocks, u32 blk, const u32* __restrict__ prow, float* __restrict__ edges,
                                          float inv_scale, float scale, float (&a)[S], float (&b)[S]) {
    const int start = fstart(p), len = fend(p) - start;
    const int nf = len / SEG, tail = nf * SEG;  // whole segments; first stage of the remainder
    const size_t per = (size_t)blocks * P * S;
    float* write_a = edges + (size_t)((c * 2 + it % 2) * 2) * per;
    float* write_b = write_a + per;
    const size_t here = ((size_t)blk * P + p) * S;
    // The index of stage `start + r`'s systematic and a-priori LLRs (the
    // table's; past the sub-block unused, 0).
    const u32* rows = prow + (size_t)c * PROWS * FNT + p;
    auto index_of = [&](int r) { return (int)rows[r * FNT]; };
    auto load_indices = [&](int base, int (&xi)[SEG]) {
#pragma unroll
        for (int t = 0; t < SEG; t++) xi[t] = index_of(base + t);
    };
    auto checkpoint = [&](int j) {
#pragma unroll
        for (int s = 1; s < S; s++) f.ck[(j * (S - 1) + s - 1) * FNT + p] = a[s];
    };
    auto restore = [&](int j, float (&m)[S]) {
        m[0] = 0.0f;
#pragma unroll
        for (int s = 1; s < S; s++) m[s] = f.ck[(j * (S - 1) + s - 1) * FNT + p];
    };
    auto in_at = [&](int r, int xi) { return stage_in(f, c, r, p, xi, inv_scale); };

    int next[SEG];
    load_indices(0, next);
#pragma unroll 1
    for (int j = 0; j < nf; j++) {
        const int base = j * SEG;
        checkpoint(j);
        int xi[SEG];
#pragma unroll
        for (int t = 0; t < SEG; t++) xi[t] = next[t];
        load_indices(base + SEG, next);
        StageIn in[SEG];
#pragma unroll
        for (int t = 0; t < SEG; t++) in[t] = in_at(base + t, xi[t]);
#pragma unroll
        for (int t = 0; t < SEG; t++) step_all<true>(a, branches_of(in[t]));
    }
    float rck[S];  // the remainder's checkpoint, kept for the backward pass
    if (tail < len) {
        checkpoint(nf);
#pragma unroll
        for (int s = 0; s < S; s++) rck[s] = a[s];
#pragma unroll 1
        for (int i = tail; i < len; i++) step_all<true>(a, branches_of(in_at(i, index_of(i))));
    }
    if (CARRIES && p + 1 < P) {
        // α at stage `len − G` (training) or `len`: recomputed from its checkpoint.
        const int e = TRAINS ? len - G : len;
        if (e < len) {
            restore(e / SEG, a);
#pragma unroll 1
            for (int i = e - e % SEG; i < e; i++) step_all<true>(a, branches_of(in_at(i, index_of(i))));
        }
#pragma unroll
        for (int s = 0; s < S; s++) write_a[here + S + s] = a[s];
    }

    // The β carried to the previous sub-block is β at stage BIDX.
    constexpr int BIDX = TRAINS ? G : 0;
    bool changed = false;
    // One backward stage i from α (A) and β at stage i + 1 (b): the extrinsic
    // LLR into X, decoder 1's decision (old: the bit's previous value), β at i.
    auto backward = [&](int i, const StageIn& in, const float (&A)[S], u32 old) {
        const int kk = start + i;
        const Branches g = branches_of(in);
        float nb[S];
#pragma unroll
        for (int s = 0; s < S; s++) nb[s] = b[s];
        step_all<false>(nb, g);
        const float minus = -g.half;
        float t0[S], t1[S];
#pragma unroll
        for (int s = 0; s < S; s++) {
            const int n0 = out_t(4 * s), b0 = out_t(4 * s + 1), n1 = out_t(4 * s + 2), b1 = out_t(4 * s + 3);
            t0[s] = __fadd_rn(__fadd_rn(A[s], (b0 & 1) ? minus : g.half), b[n0]);
            t1[s] = __fadd_rn(__fadd_rn(A[s], (b1 & 1) ? minus : g.half), b[n1]);
        }
        const float m0 = fold_states(t0), m1 = fold_states(t1);
        if (kk < K) {
            const float le = __fsub_rn(m0, m1);
            const int xi = in.xi;
            f.x[px(xi)] = __fmul_rn(scale, le);
            if (c == 1) {
                // A changed decision flips its bit: one XOR, whichever way.
                const float app = __fadd_rn(in.sl, le);
#if TSOFT
                // Every iteration's, until the block stops: the last stays.
                f.soft[xi] = app;
#endif
                const u32 flip = (app < 0.0f) ^ old;
                changed |= flip != 0;
                if (flip) atomicXor(&f.hb[xi >> 5], 1u << (xi & 31));
            }
        }
#pragma unroll
        for (int s = 0; s < S; s++) b[s] = nb[s];
    };
    // Only this thread changes this bit in this half-iteration, so a plain
    // read of its word sees its last value.
    auto old_bit = [&](int xi) { return c == 1 ? (f.hb[xi >> 5] >> (xi & 31)) & 1 : 0u; };
    auto carry_b = [&]() {
#pragma unroll
        for (int s = 0; s < S; s++) write_b[here - S + s] = b[s];
    };

    // The remainder, last stage first, each stage's α recomputed from the
    // remainder's checkpoint.
#pragma unroll 1
    for (int i = len - 1; i >= tail; i--) {
        float A[S];
#pragma unroll
        for (int s = 0; s < S; s++) A[s] = rck[s];
#pragma unroll 1
        for (int r = tail; r < i; r++) step_all<true>(A, branches_of(in_at(r, index_of(r))));
        const int xi = index_of(i);
        backward(i, in_at(i, xi), A, old_bit(xi));
        if (CARRIES && p > 0 && i == BIDX) carry_b();
    }
    // The indices and the checkpoint of each segment are loaded a segment ahead.
    float nck[S];
    if (nf > 0) {
        load_indices((nf - 1) * SEG, next);
        restore(nf - 1, nck);
    }
#pragma unroll 1
    for (int j = nf - 1; j >= 0; j--) {
        const int base = j * SEG;
        int xi[SEG];
        float A[SEG][S];
#pragma unroll
        for (int t = 0; t < SEG; t++) xi[t] = next[t];
#pragma unroll
        for (int s = 0; s < S; s++) A[0][s] = nck[s];
        if (j > 0) {
            load_indices(base - SEG, next);
            restore(j - 1, nck);
        }
        StageIn in[SEG];
        u32 old[SEG];
#pragma unroll
        for (int t = 0; t < SEG; t++) {
            in[t] = in_at(base + t, xi[t]);
            old[t] = old_bit(xi[t]);
        }
#pragma unroll
        for (int t = 0; t + 1 < SEG; t++) {
#pragma unroll
            for (int s = 0; s < S; s++) A[t + 1][s] = A[t][s];
            step_all<true>(A[t + 1], branches_of(in[t]));
        }
#pragma unroll
        for (int t = SEG - 1; t >= 0; t--) {
            backward(base + t, in[t], A[t], old[t]);
            if (CARRIES && t == BIDX % SEG && p > 0 && base == BIDX - BIDX % SEG) carry_b();
        }
    }
    if (c == 1 && changed) f.misc[0] = 1;
}

// Thread p's half-iteration (p: its sub-block, `fused` below).
template <typename L>
__device__ __forceinline__ void fused_half(const Fused<L>& f, int c, int p, int it, u32 blocks, u32 blk, const u32* __restrict__ prow, float* __restrict__ edges,
                                           float inv_scale, float scale) {
    float a[S], b[S];
    if (p < P) fused_edges(f, c, p, it, blocks, blk, prow, edges, inv_scale, a, b);
    // DSTW trains on the neighbours' stages, whose X the neighbours rewrite.
    if (TRAINS) __syncthreads();
    if (p < P) fused_run(f, c, p, it, blocks, blk, prow, edges, inv_scale, scale, a, b);
}

template <typename L>
__device__ __forceinline__ void fused(const L* __restrict__ in, u64 pitch, u32 blocks, float inv_scale, const u32* __restrict__ prow, void* rows, float* ckg,
                                      float* __restrict__ edges, u32* __restrict__ out, u32* __restrict__ status, float scale) {
    extern __shared__ __align__(16) unsigned char fsm[];
    const u32 blk = blockIdx.x;
    const Fused<L> f(fsm, rows, ckg, blk, (float*)(out + (size_t)blocks * W));
    if (blk >= blocks) return;
    const L* u = in + blk * pitch;
    // Load: the systematic LLRs and every stage's parity LLR of both
    // decoders into its row, X = 0, no decisions; LU stages per thread at a
    // time, their global loads issued together.
    constexpr int LU = 8;
    for (int k0 = threadIdx.x; k0 < K; k0 += LU * FNT) {
        L v[LU][3];
#pragma unroll
        for (int j = 0; j < LU; j++) {
            const int kk = k0 + j * FNT;
            if (kk < K) {
                v[j][0] = u[kk];
                v[j][1] = u[TD1 + kk];
                v[j][2] = u[TD2 + kk];
            }
        }
#pragma unroll
        for (int j = 0; j < LU; j++) {
            const int kk = k0 + j * FNT;
            if (kk < K) {
                const int q = (int)(((u64)(kk + 1) * P - 1) / K);
                const int r = kk - fstart(q);
                f.sys[kk] = v[j][0];
                f.in[r * FNT + q] = v[j][1];
                f.in[(LMAX + r) * FNT + q] = v[j][2];
            }
        }
    }
    // The tail: decoder 0's systematic LLRs at K.., decoder 1's at K + M..
    if (threadIdx.x < M) {
        const int i = threadIdx.x, r = K + i - fstart(P - 1);
        f.sys[K + i] = u[TAIL[2 * i]];
        f.in[r * FNT + P - 1] = u[TAIL[2 * i + 1]];
        f.sys[K + M + i] = u[TAIL[2 * M + 2 * i]];
        f.in[(LMAX + r) * FNT + P - 1] = u[TAIL[2 * M + 2 * i + 1]];
    }
    for (int k = threadIdx.x; k < XLEN; k += FNT) f.x[k] = 0.0f;
    for (int w = threadIdx.x; w <= W; w += FNT) f.hb[w] = 0;
    __syncthreads();
    // The sub-block of this thread, computed once per decode and passed
    // down. Written `threadIdx.x % FNT` so that the compiler knows p < FNT
    // (= P at K = 6144, P = 128, where the `p < P` guards then fold away):
    // with plain `threadIdx.x` NVRTC 13.0 allocated 125 registers (4 CTAs
    // per SM) instead of 95 (5 CTAs).
    const int p = (int)(threadIdx.x % FNT);

    for (int it = 1; it <= ITERS; it++) {
        // One copy of the half-iteration's code for both decoders (c is a
        // run-time value): half the instructions to cache.
#pragma unroll 1
        for (int c = 0; c < 2; c++) {
            fused_half(f, c, p, it, blocks, blk, prow, edges, inv_scale, scale);
            if (c == 0 && threadIdx.x == 0) f.misc[0] = 0;
            __syncthreads();
        }
        bool ok = false;
#if STOP >= 2
        // The CRC of the K decisions, as turbo_stop computes it.
        ok = StopCrc::block_checks<K, FNT>([&](int i) { return f.hb[i >> 5] >> (i & 31); }, (u32*)(f.misc + 2));
#endif
        const bool stop = (STOP == 1 && it > 1 && f.misc[0] == 0) || (STOP >= 2 && ok) || it == ITERS;
        if (stop) {
            for (int w = threadIdx.x; w < W; w += FNT) out[(size_t)blk * W + w] = f.hb[w];
            if (threadIdx.x == 0) status[blk] = (u32)it | (STOP >= 2 ? (1u << 16) | ((u32)ok << 17) : 0u);
            return;
        }
        // Every thread has read the flag and the partials before they change.
        __syncthreads();
    }
}

}  // namespace turbo

#define FUSED_BOUNDS __launch_bounds__(TFNT)

extern "C" __global__ void FUSED_BOUNDS turbo_fused_i8(const i8* in, u64 pitch, u32 blocks, float inv_scale, const u32* prow,
                                                                 void* rows, float* ckg, float* edges, u32* out, u32* status, float scale) {
    fused(in, pitch, blocks, inv_scale, prow, rows, ckg, edges, out, status, scale);
}

extern "C" __global__ void FUSED_BOUNDS turbo_fused_f32(const float* in, u64 pitch, u32 blocks, float inv_scale, const u32* prow,
                                                                  void* rows, float* ckg, float* edges, u32* out, u32* status, float scale) {
    fused(in, pitch, blocks, inv_scale, prow, rows, ckg, edges, out, status, scale);
}
