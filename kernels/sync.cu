// MAP decoder of time-varying block codes over the BSID channel (Briffa,
// "GPU implementation and optimization of a flexible MAP decoder for
// synchronization correction", Sections II–V), many frames per launch: one
// CTA per received frame (or window of a stream), the whole forward–backward
// pass of the frame inside it.
//
// The model it follows is `src/codes/sync/decoder/{lattice,frame}.rs`: γ by
// the corridor-constrained lattice in f32 (three fused multiply-adds and a
// product per cell, flushed below FLUSH after each row) through the _rn
// intrinsics, so that NVRTC never contracts or reorders them: γ is the
// model's bit for bit. α, β and the APPs are f64 as the model's, but their
// sums run as trees across a warp's lanes instead of one thread's chain (the
// model's order would leave all but one warp idle at every index): they
// differ from the model's in the last bits, and so may a decision between
// two symbol values equal to within that.
//
// Thread mapping (the seed's Section V, generalised): the CTA's threads take
// the M_τ·q lattices (k, D) of one index, D fastest, so a warp of q = 32
// lanes is one start state (its received samples one broadcast load) and a
// small q puts several start states in one warp; each lattice is unrolled
// over its n rows and M_n columns with its received samples in registers.
// Σ_D γ: a thread per row of q values.
// α of the next index: warp 0 alone, while the others go on to the next
// index's lattices. Backward: the weights α·β of each lattice cell, then the
// APPs as a product of those weights and γ split over groups of threads
// (one partial per group and symbol value, summed after), β's normalisation
// and the edge test by one warp beside the APPs' by another.
//
// Storage (Section IV): with SGLOBAL, γ of every index of the frame stays in
// global memory for the backward pass; otherwise only one index's, computed
// again in the backward pass (twice the lattice work, a frame's γ never
// held). With SGSMEM (when the device gives a CTA that much) the index's γ
// is made in shared memory, where Σ_D reads it (and copied to global memory
// with SGLOBAL); else it is made in global memory.
//
// Memory of a batch of B units (every array per unit, unit-major):
//   in[b][SPITCH]        f32: avail (u32 bits), 0, then Q(y|0) of each of the
//                        SWIN received samples, then Q(y|1) − Q(y|0) (zeros
//                        past avail): the receiver metric's weights, made on
//                        the host exactly as the model makes them;
//   gamma[b][SNS or 1][SM][SW][SQ]   f32 γ_i(k, e, D) (nothing when local
//                        with SGSMEM);
//   sums[b][SNS][SM][SW] f64 Σ_D γ;
//   alpha[b][SNS+1][SM]  f64 α, normalised per index;
//   out[b][SOUT]         u32: consumed, flags (bit 0 beyond the limits, bit 1
//                        lost, top byte 0x5A written), SNS·SK decisions (0/1), then
//                        with SSOFT SNS·SK f32 bit LLRs, then with SAPP the
//                        SNS·SQ f64 symbol APPs (two words each, low first).
// Shared memory (dynamic, `smem_bytes` on the host): β of the index and of
// the one after, the weights α·β, the APPs' partials and the APPs (f64),
// the staged samples of two indices (f32 pairs), then γ of the index with
// SGSMEM (f32).
//
// Parameters (-D): SN (n), SQ (q), SK (log2 q), SNS (N), SM (states M_τ),
// SLO (m_τ⁻), SW (corridor M_n), SCLO (m_n⁻), SBOOKS (codebooks), SWIN
// (received items a unit holds at most), SGLOBAL, SGSMEM, SSOFT, SAPP (the
// APPs out too, for tests), SSTREAM (windows of a stream: the end drift is
// found; else whole frames).
#include "common.cuh"

constexpr int TAU = SN * SNS;
constexpr int G = SM * SW * SQ;
constexpr int SUMS = SM * SW;
constexpr int SPITCH = 2 + 2 * SWIN;
constexpr int KB = SNS * SK;
constexpr int APP_AT = 2 + KB * (1 + SSOFT);
constexpr int SOUT = APP_AT + 2 * SNS * SQ * SAPP;
// Received samples one lattice reads: rows 1..n, columns 0..M_n−1; and the
// lattices of one index together, from start state 0 to M_τ − 1.
constexpr int SPAN = SN + SW - 1;
constexpr int STAGE = SM + SPAN - 1;
// A lattice is unrolled whole (its samples and cells in registers) unless
// it is too large for that (a wide corridor of a long codeword): then row
// by row, its arrays in local memory.
constexpr int ROWS_UNROLLED = SN * SW <= 2048 ? SN : 1;
// A written unit's mark in the top byte of its flags: neither zeros nor a
// poisoned buffer's repeated byte read as it.
constexpr u32 DONE = 0x5Au << 24;
constexpr u32 BEYOND = 1u;
constexpr u32 LOST = 2u;

// The receiver metric's weights (Q(y|0), Q(y|1) − Q(y|0)) of the samples
// the lattices of index i read, into st (zeros outside 0..avail), by the
// CTA's threads.
__device__ __forceinline__ void stage(int i, int avail, const float* __restrict__ w0, const float* __restrict__ dw, float2* st) {
    for (int j = threadIdx.x; j < STAGE; j += blockDim.x) {
        const int s = SN * i + SLO + SCLO + j;
        const bool in = s >= 0 && s < avail;
        st[j] = in ? make_float2(w0[s], dw[s]) : make_float2(0.f, 0.f);
    }
}

// γ_i(k, ·, D) = R(y | C_i(D)) for every drift change, into g[k][e][D]
// (and the same into copy[k][e][D] unless it is null), from the index's
// staged samples st; zero where the start or the end lies outside the
// limits or the samples.
__device__ __forceinline__ void lattice(int i, int k, int d, int avail, const float2* st, u32 word, float ins, float del, float flush, float* g, float* copy) {
    const int a = SN * i + k + SLO;
    const int at = k * SW * SQ + d;
    if (a < 0 || a > avail) {
#pragma unroll
        for (int e = 0; e < SW; e++) {
            g[at + e * SQ] = 0.f;
            if (copy) copy[at + e * SQ] = 0.f;
        }
        return;
    }
    // Sample a + SCLO + t (staged at k + t) is read by row r, column e with t = r − 1 + e.
    float x0[SPAN], xd[SPAN];
#pragma unroll
    for (int t = 0; t < SPAN; t++) {
        const float2 v = st[k + t];
        x0[t] = v.x;
        xd[t] = v.y;
    }
    float prev[SW + 1], cur[SW];
    float power = 1.f;
#pragma unroll
    for (int e = 0; e < SW; e++) {
        const int delta = e + SCLO;
        prev[e] = delta < 0 ? 0.f : power;
        if (delta >= 0) power = __fmul_rn(power, ins);
    }
    prev[SW] = 0.f;
#pragma unroll ROWS_UNROLLED
    for (int r = 1; r <= SN; r++) {
        const float b = (float)((word >> (SN - r)) & 1u);
        // The channel's last event is not an insertion.
        const float h = r < SN ? ins : 0.f;
        float left = 0.f;
#pragma unroll
        for (int e = 0; e < SW; e++) {
            const float diag = __fmaf_rn(b, xd[r - 1 + e], x0[r - 1 + e]);
            const float t = __fmaf_rn(del, prev[e + 1], __fmul_rn(diag, prev[e]));
            const float v = __fmaf_rn(h, left, t);
            cur[e] = v;
            left = v;
        }
#pragma unroll
        for (int e = 0; e < SW; e++) prev[e] = cur[e] < flush ? 0.f : cur[e];
    }
#pragma unroll
    for (int e = 0; e < SW; e++) {
        const int end_state = k + e + SCLO;
        const int end = a + SN + e + SCLO;
        const float v = (end_state >= 0 && end_state < SM && end <= avail) ? prev[e] : 0.f;
        g[at + e * SQ] = v;
        if (copy) copy[at + e * SQ] = v;
    }
}

// γ of index i into g (and copy) by the CTA's threads, from its staged samples st.
__device__ __forceinline__ void gamma_of(int i, int avail, const float2* st, const u32* books, float ins, float del, float flush, float* g, float* copy) {
    const u32* book = books + (i % SBOOKS) * SQ;
    for (int j = threadIdx.x; j < SM * SQ; j += blockDim.x) lattice(i, j / SQ, j % SQ, avail, st, __ldg(book + j % SQ), ins, del, flush, g, copy);
}

__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = __dadd_rn(v, __shfl_xor_sync(FULL_MASK, v, o));
    return v;
}

// Σ_D γ of every (k, e) of g into sums: a thread per row of q values, each
// lane starting at another column, so that a warp's reads of shared memory
// fall in different banks.
__device__ __forceinline__ void sum_rows(const float* g, double* sums) {
    const int rot = threadIdx.x & 31;
    for (int row = threadIdx.x; row < SUMS; row += blockDim.x) {
        const float* v = g + row * SQ;
        double s = 0.0;
#pragma unroll 8
        for (int j = 0; j < SQ; j++) s = __dadd_rn(s, (double)v[(j + rot) & (SQ - 1)]);
        sums[row] = s;
    }
}

// 1 / total, or 0 when the total is zero or not finite (the model's failed
// normalisation).
__device__ __forceinline__ double inverse_of(double total) {
    return (total > 0.0 && isfinite(total)) ? __ddiv_rn(1.0, total) : 0.0;
}

// 1 / Σ v by one warp (every lane gets it), as inverse_of.
__device__ __forceinline__ double warp_inverse_total(const double* v, int len) {
    double s = 0.0;
    for (int j = threadIdx.x & 31; j < len; j += 32) s = __dadd_rn(s, v[j]);
    return inverse_of(warp_sum(s));
}

// The (value, index) of the larger, the first of equals.
__device__ __forceinline__ void warp_argmax(double& best_p, int& best) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const double p = __shfl_xor_sync(FULL_MASK, best_p, o);
        const int k = __shfl_xor_sync(FULL_MASK, best, o);
        if (p > best_p || (p == best_p && k < best)) best_p = p, best = k;
    }
}

// By one warp: the state of the largest α·β (the first of equals) and that product.
__device__ __forceinline__ int likeliest(const double* a, const double* b, double& best_p) {
    const int lane = threadIdx.x & 31;
    int best = lane;
    best_p = 0.0;
    for (int k = lane; k < SM; k += 32) {
        const double p = __dmul_rn(a[k], b[k]);
        if (p > best_p) best = k, best_p = p;
    }
    warp_argmax(best_p, best);
    return best;
}

// Whether state k is a limit the drift may cross.
__device__ __forceinline__ bool on_edge(int k) {
    return (k == 0 && SLO < 0) || (k + 1 == SM && SLO + SM - 1 > 0);
}

// 2^x for x ≤ 0 as the model's powi computes it (1 / 2^−x: zero once 2^−x overflows).
__device__ __forceinline__ double pow2_neg(long long x) {
    return x >= -1023 ? ldexp(1.0, (int)x) : 0.0;
}

// APP number j of a unit's output, as two words.
__device__ __forceinline__ void put_app(u32* out, int j, double p) {
    const u64 bits = (u64)__double_as_longlong(p);
    out[APP_AT + 2 * j] = (u32)bits;
    out[APP_AT + 2 * j + 1] = (u32)(bits >> 32);
}

extern "C" __global__ void sync_map(const float* __restrict__ in, const u32* __restrict__ books, float ins, float del, float flush, float* gamma_all,
                                    double* sums_all, double* alpha_all, u32* out_all, u32 units) {
    const u32 f = blockIdx.x;
    if (f >= units) return;
    const float* unit = in + (size_t)f * SPITCH;
    const int avail = (int)__float_as_uint(unit[0]);
    const float* w0 = unit + 2;
    const float* dw = unit + 2 + SWIN;
    double* sums = sums_all + (size_t)f * SNS * SUMS;
    double* alpha = alpha_all + (size_t)f * (SNS + 1) * SM;
    u32* out = out_all + (size_t)f * SOUT;

    // Thread groups of the APPs' product: q threads each, as many as the CTA
    // holds (one, its threads taking several symbol values, when q is larger).
    const int groups = max(1, (int)blockDim.x / SQ);
    extern __shared__ double shared[];
    double* beta = shared;
    double* bnext = beta + SM;
    double* weight = bnext + SM;
    double* part = weight + SUMS;
    double* app = part + groups * SQ;
    // The samples of an index, for two indices (one staged while the other is read).
    float2* staged = (float2*)(app + SQ);
    // γ of the index in shared memory (SGSMEM) or global; the frame's in global (SGLOBAL).
    float* gglobal = gamma_all + (size_t)f * (SGLOBAL ? (size_t)SNS * G : (size_t)G);
    float* gindex = SGSMEM ? (float*)(staged + 2 * STAGE) : gglobal;
    __shared__ int lost, edge, best_end;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    // The warp of β's normalisation and the edge test: another than warp 0
    // (the APPs'), so that the two run side by side.
    const int wb = blockDim.x >= 64 ? 1 : 0;

    if (threadIdx.x == 0) lost = 0, edge = 0;
    for (int k = threadIdx.x; k < SM; k += blockDim.x) alpha[k] = k == -SLO ? 1.0 : 0.0;
    stage(0, avail, w0, dw, staged);
    __syncthreads();

    // Forward: γ and Σ_D γ of each index; warp 0 then makes α of the next
    // while the others start on the next index's γ.
    for (int i = 0; i < SNS; i++) {
        float* g = SGSMEM ? gindex : SGLOBAL ? gglobal + (size_t)i * G : gindex;
        gamma_of(i, avail, staged + (i & 1) * STAGE, books, ins, del, flush, g, SGSMEM && SGLOBAL ? gglobal + (size_t)i * G : nullptr);
        __syncthreads();
        if (lost) break;
        double* si = sums + (size_t)i * SUMS;
        sum_rows(g, si);
        if (i + 1 < SNS) stage(i + 1, avail, w0, dw, staged + ((i + 1) & 1) * STAGE);
        __syncthreads();
        if (warp == 0) {
            const double* now = alpha + (size_t)i * SM;
            double* next = alpha + (size_t)(i + 1) * SM;
            double acc[(SM + 31) / 32];
#pragma unroll
            for (int j = 0; j < (SM + 31) / 32; j++) {
                const int to = lane + 32 * j;
                double a = 0.0;
                if (to < SM) {
#pragma unroll
                    for (int e = 0; e < SW; e++) {
                        const int k = to - e - SCLO;
                        if (k >= 0 && k < SM && now[k] != 0.0) a = __dadd_rn(a, __dmul_rn(now[k], si[k * SW + e]));
                    }
                }
                acc[j] = a;
            }
            double s = 0.0;
#pragma unroll
            for (int j = 0; j < (SM + 31) / 32; j++) s = __dadd_rn(s, acc[j]);
            const double inv = inverse_of(warp_sum(s));
            if (lane == 0 && !(inv > 0.0)) lost = 1;
#pragma unroll
            for (int j = 0; j < (SM + 31) / 32; j++) {
                if (lane + 32 * j < SM) next[lane + 32 * j] = __dmul_rn(acc[j], inv);
            }
        }
    }
    __syncthreads();

    // The end: known for a whole frame within the limits; else each further
    // received bit the frame does not take counted as a random one.
    const long long rho = avail;
    const bool end_known = !SSTREAM && rho >= TAU + SLO && rho <= TAU + SLO + SM - 1;
    if (!SGLOBAL) stage(SNS - 1, avail, w0, dw, staged + ((SNS - 1) & 1) * STAGE);
    if (!lost) {
        for (int k = threadIdx.x; k < SM; k += blockDim.x) {
            const long long m = k + SLO;
            double v;
            if (end_known) v = m == rho - TAU ? 1.0 : 0.0;
            else v = TAU + m <= rho ? pow2_neg(m - (rho - TAU)) : 0.0;
            bnext[k] = v;
        }
        __syncthreads();
        if (warp == 0) {
            double w;
            const int best = likeliest(alpha + (size_t)SNS * SM, bnext, w);
            const double inv = warp_inverse_total(bnext, SM);
            if (lane == 0) {
                best_end = best;
                if (!(w > 0.0) || !(inv > 0.0)) lost = 1;
            }
            for (int k = lane; k < SM; k += 32) bnext[k] = __dmul_rn(bnext[k], inv);
        }
        __syncthreads();
    }

    // Backward: β, the APPs, decisions and bit LLRs of each index.
    for (int i = SNS - 1; i >= 0 && !lost; i--) {
        const float* g = SGLOBAL ? gglobal + (size_t)i * G : gindex;
        const double* ai = alpha + (size_t)i * SM;
        const double* si = sums + (size_t)i * SUMS;
        for (int r = threadIdx.x; r < SUMS; r += blockDim.x) {
            const int to = r / SW + r % SW + SCLO;
            weight[r] = (to >= 0 && to < SM) ? __dmul_rn(ai[r / SW], bnext[to]) : 0.0;
        }
        for (int k = threadIdx.x; k < SM; k += blockDim.x) {
            double acc = 0.0;
#pragma unroll
            for (int e = 0; e < SW; e++) {
                const int to = k + e + SCLO;
                if (to >= 0 && to < SM) acc = __dadd_rn(acc, __dmul_rn(si[k * SW + e], bnext[to]));
            }
            beta[k] = acc;
        }
        if (!SGLOBAL) gamma_of(i, avail, staged + (i & 1) * STAGE, books, ins, del, flush, gindex, nullptr);
        __syncthreads();
        // The APPs' partials: group c takes rows c, c + groups, ..., four
        // at a time (their loads together).
        for (int j = threadIdx.x; j < groups * SQ; j += blockDim.x) {
            const int c = j / SQ, d = j % SQ;
            double acc = 0.0;
            int r = c;
            for (; r + 3 * groups < SUMS; r += 4 * groups) {
                float v[4];
#pragma unroll
                for (int u = 0; u < 4; u++) v[u] = g[(r + u * groups) * SQ + d];
#pragma unroll
                for (int u = 0; u < 4; u++) acc = __fma_rn(weight[r + u * groups], (double)v[u], acc);
            }
            for (; r < SUMS; r += groups) acc = __fma_rn(weight[r], (double)g[r * SQ + d], acc);
            part[c * SQ + d] = acc;
        }
        if (!SGLOBAL && i > 0) stage(i - 1, avail, w0, dw, staged + ((i - 1) & 1) * STAGE);
        // β normalised, and the edge test, by warp wb.
        if (warp == wb) {
            const double inv = warp_inverse_total(beta, SM);
            if (!(inv > 0.0)) {
                if (lane == 0) lost = 1;
            } else {
                for (int k = lane; k < SM; k += 32) beta[k] = __dmul_rn(beta[k], inv);
                __syncwarp();
                if (i > 0) {
                    double p;
                    const int best = likeliest(ai, beta, p);
                    if (lane == 0 && on_edge(best)) edge = 1;
                }
            }
        }
        __syncthreads();
        // The APPs, normalised, and the decision, by warp 0.
        if (warp == 0) {
            double s = 0.0;
            for (int d = lane; d < SQ; d += 32) {
                double a = 0.0;
                for (int c = 0; c < groups; c++) a = __dadd_rn(a, part[c * SQ + d]);
                app[d] = a;
                s = __dadd_rn(s, a);
            }
            const double inv = inverse_of(warp_sum(s));
            if (!(inv > 0.0)) {
                if (lane == 0) lost = 1;
            } else {
                int best = lane;
                double bp = -1.0;
                for (int d = lane; d < SQ; d += 32) {
                    const double p = __dmul_rn(app[d], inv);
                    app[d] = p;
                    if (p > bp) best = d, bp = p;
                }
                warp_argmax(bp, best);
                __syncwarp();
                if (SAPP) {
                    for (int d = lane; d < SQ; d += 32) put_app(out, i * SQ + d, app[d]);
                }
                // One lane per bit of the symbol: its decision and its LLR.
                for (int j = lane; j < SK; j += 32) {
                    const int bit = SK - 1 - j;
                    out[2 + i * SK + j] = (best >> bit) & 1;
                    if (SSOFT) {
                        double p0 = 0.0, p1 = 0.0;
                        for (int d = 0; d < SQ; d++) {
                            if ((d >> bit) & 1) p1 = __dadd_rn(p1, app[d]);
                            else p0 = __dadd_rn(p0, app[d]);
                        }
                        const float llr = (float)__dsub_rn(log(fmax(p0, 2.2250738585072014e-308)), log(fmax(p1, 2.2250738585072014e-308)));
                        out[2 + KB + i * SK + j] = __float_as_uint(llr);
                    }
                }
            }
        }
        __syncthreads();
        // β of this index is the next one's for the index before.
        double* t = beta;
        beta = bnext;
        bnext = t;
    }

    if (threadIdx.x == 0) {
        u32 consumed, flags = DONE;
        if (lost) {
            for (int j = 0; j < KB * (1 + SSOFT); j++) out[2 + j] = 0u;
            // The model's APPs of a lost frame: every symbol value alike.
            if (SAPP) {
                for (int j = 0; j < SNS * SQ; j++) put_app(out, j, __ddiv_rn(1.0, (double)SQ));
            }
            consumed = SSTREAM ? min(avail, TAU) : avail;
            flags |= BEYOND | LOST;
        } else {
            consumed = SSTREAM ? (u32)(TAU + best_end + SLO) : (u32)avail;
            const bool beyond = SSTREAM ? (edge || on_edge(best_end)) : (!end_known || edge);
            if (beyond) flags |= BEYOND;
        }
        out[0] = consumed;
        out[1] = flags;
    }
}
