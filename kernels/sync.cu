// MAP decoder of time-varying block codes over the BSID channel (Briffa,
// "GPU implementation and optimization of a flexible MAP decoder for
// synchronization correction", Sections II–V), many frames per launch: one
// CTA per received frame (or window of a stream), the whole forward–backward
// pass of the frame inside it.
//
// The model it reproduces is `src/codes/sync/decoder/{lattice,frame}.rs`:
// γ by the corridor-constrained lattice in f32 (three fused multiply-adds
// and a product per cell, flushed below FLUSH after each row), α, β and the
// APPs in f64, every operation the model's in its order through the _rn
// intrinsics, so that NVRTC never contracts or reorders them: γ and α are
// the model's bit for bit, and so are the decisions; only the logarithms of
// the bit LLRs may differ in their last bit.
//
// Thread mapping (the seed's Section V, generalised): the CTA's threads take
// the M_τ·q lattices (m', D) of one index, D fastest, so a CTA of q threads
// is one start state and a small q puts several start states in one CTA;
// Σ_D γ one thread per (m', δ); α one thread per end state; β one per start
// state; the APPs one per symbol value. Every sum is one thread's, in the
// model's order (β's and the APPs' in two warps side by side); the scalings
// are everyone's; the edge test and the decision one thread's each; a
// symbol's bits one thread each. The CTA's size is chosen on the host from
// the device's limits for the kernel.
//
// Storage (Section IV): with SGLOBAL, γ of every index of the frame stays in
// global memory for the backward pass; otherwise only one index's, computed
// again in the backward pass (twice the lattice work, a frame's γ never held).
//
// Memory of a batch of B units (every array per unit, unit-major):
//   in[b][SPITCH]        f32: avail (u32 bits), 0, then Q(y|0) of each of the
//                        SWIN received samples, then Q(y|1) − Q(y|0) (zeros
//                        past avail): the receiver metric's weights, made on
//                        the host exactly as the model makes them;
//   gamma[b][SNS or 1][SM][SW][SQ]   f32 γ_i(m', δ, D);
//   sums[b][SNS][SM][SW] f64 Σ_D γ;
//   alpha[b][SNS+1][SM]  f64 α, normalised per index;
//   beta[b][2][SM]       f64 β of the index and of the one after;
//   app[b][SQ]           f64 the APPs of the index;
//   out[b][SOUT]         u32: consumed, flags (bit 0 beyond the limits, bit 1
//                        lost, top byte 0x5A written), SNS·SK decisions (0/1), then
//                        with SSOFT SNS·SK f32 bit LLRs, then with SAPP the
//                        SNS·SQ f64 symbol APPs (two words each, low first).
//
// Parameters (-D): SN (n), SQ (q), SK (log2 q), SNS (N), SM (states M_τ),
// SLO (m_τ⁻), SW (corridor M_n), SCLO (m_n⁻), SBOOKS (codebooks), SWIN
// (received items a unit holds at most), SGLOBAL, SSOFT, SAPP (the APPs
// out too, for tests), SSTREAM (windows of a stream: the end drift is
// found; else whole frames).
#include "common.cuh"

constexpr int TAU = SN * SNS;
constexpr int G = SM * SW * SQ;
constexpr int SUMS = SM * SW;
constexpr int SPITCH = 2 + 2 * SWIN;
constexpr int KB = SNS * SK;
constexpr int APP_AT = 2 + KB * (1 + SSOFT);
constexpr int SOUT = APP_AT + 2 * SNS * SQ * SAPP;
// A written unit's mark in the top byte of its flags: neither zeros nor a
// poisoned buffer's repeated byte read as it.
constexpr u32 DONE = 0x5Au << 24;
constexpr u32 BEYOND = 1u;
constexpr u32 LOST = 2u;

// The receiver metric's weights of received sample s: zero outside 0..avail.
__device__ __forceinline__ void sample(const float* w0, const float* dw, int avail, long long s, float& x0, float& xd) {
    const bool in = s >= 0 && s < avail;
    x0 = in ? w0[s] : 0.f;
    xd = in ? dw[s] : 0.f;
}

// γ_i(k, ·, D) = R(y | C_i(D)) for every drift change, into g[k][e][D];
// zero where the start or the end lies outside the limits or the samples.
__device__ void lattice(int i, int k, int d, int avail, const float* w0, const float* dw, u32 word, float ins, float del, float flush, float* g) {
    const long long a = (long long)SN * i + k + SLO;
    float* o = g + k * SW * SQ + d;
    if (a < 0 || a > avail) {
        for (int e = 0; e < SW; e++) o[e * SQ] = 0.f;
        return;
    }
    float prev[SW + 1], cur[SW];
    float power = 1.f;
    for (int e = 0; e < SW; e++) {
        const int delta = e + SCLO;
        prev[e] = delta < 0 ? 0.f : power;
        if (delta >= 0) power = __fmul_rn(power, ins);
    }
    prev[SW] = 0.f;
    for (int r = 1; r <= SN; r++) {
        const float b = (float)((word >> (SN - r)) & 1u);
        // The channel's last event is not an insertion.
        const float h = r < SN ? ins : 0.f;
        float left = 0.f;
        for (int e = 0; e < SW; e++) {
            float x0, xd;
            sample(w0, dw, avail, a + r + e + SCLO - 1, x0, xd);
            const float diag = __fmaf_rn(b, xd, x0);
            const float t = __fmaf_rn(del, prev[e + 1], __fmul_rn(diag, prev[e]));
            const float v = __fmaf_rn(h, left, t);
            cur[e] = v;
            left = v;
        }
        for (int e = 0; e < SW; e++) prev[e] = cur[e] < flush ? 0.f : cur[e];
        prev[SW] = 0.f;
    }
    for (int e = 0; e < SW; e++) {
        const int end_state = k + e + SCLO;
        const long long end = a + SN + e + SCLO;
        o[e * SQ] = (end_state >= 0 && end_state < SM && end <= avail) ? prev[e] : 0.f;
    }
}

// γ of index i by the CTA's threads, then (with `sums`) Σ_D γ.
__device__ void gamma_of(int i, int avail, const float* w0, const float* dw, const u32* books, float ins, float del, float flush, float* g, double* sums) {
    const u32* book = books + (i % SBOOKS) * SQ;
    for (int j = threadIdx.x; j < SM * SQ; j += blockDim.x) lattice(i, j / SQ, j % SQ, avail, w0, dw, book[j % SQ], ins, del, flush, g);
    __syncthreads();
    if (sums == nullptr) return;
    for (int j = threadIdx.x; j < SUMS; j += blockDim.x) {
        double s = 0.0;
        for (int d = 0; d < SQ; d++) s = __dadd_rn(s, (double)g[j * SQ + d]);
        sums[j] = s;
    }
}

// 1 / Σ v (one thread, in the model's order), or 0 when the sum is zero or
// not finite (the model's failed normalisation).
__device__ double inverse_total(const double* v, int len) {
    double total = 0.0;
    for (int j = 0; j < len; j++) total = __dadd_rn(total, v[j]);
    return (total > 0.0 && isfinite(total)) ? __ddiv_rn(1.0, total) : 0.0;
}

// v /= Σ v (one thread); false when the sum is zero or not finite.
__device__ bool normalise(double* v, int len) {
    const double inv = inverse_total(v, len);
    for (int j = 0; j < len; j++) v[j] = __dmul_rn(v[j], inv);
    return inv > 0.0;
}

// The state of the largest α·β (the first of equals) and that product.
__device__ int likeliest(const double* a, const double* b, double& best_p) {
    int best = 0;
    best_p = 0.0;
    for (int k = 0; k < SM; k++) {
        const double p = __dmul_rn(a[k], b[k]);
        if (p > best_p) {
            best = k;
            best_p = p;
        }
    }
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
                                    double* sums_all, double* alpha_all, double* beta_all, double* app_all, u32* out_all, u32 units) {
    const u32 f = blockIdx.x;
    if (f >= units) return;
    const float* unit = in + (size_t)f * SPITCH;
    const int avail = (int)__float_as_uint(unit[0]);
    const float* w0 = unit + 2;
    const float* dw = unit + 2 + SWIN;
    float* gamma = gamma_all + (size_t)f * (SGLOBAL ? (size_t)SNS * G : (size_t)G);
    double* sums = sums_all + (size_t)f * SNS * SUMS;
    double* alpha = alpha_all + (size_t)f * (SNS + 1) * SM;
    double* beta = beta_all + (size_t)f * 2 * SM;
    double* bnext = beta + SM;
    double* app = app_all + (size_t)f * SQ;
    u32* out = out_all + (size_t)f * SOUT;
    __shared__ int lost, edge, best_end, best_symbol;
    __shared__ double inv_beta, inv_app;
    // The thread of the APPs' serial steps: another warp's than thread 0's
    // (those of β), so that the two run side by side.
    const unsigned ta = blockDim.x >= 64 ? 32 : 0;

    if (threadIdx.x == 0) lost = 0, edge = 0;
    for (int k = threadIdx.x; k < SM; k += blockDim.x) alpha[k] = k == -SLO ? 1.0 : 0.0;
    __syncthreads();

    // Forward: γ and Σ_D γ of each index, then α of the next.
    for (int i = 0; i < SNS && !lost; i++) {
        gamma_of(i, avail, w0, dw, books, ins, del, flush, SGLOBAL ? gamma + (size_t)i * G : gamma, sums + (size_t)i * SUMS);
        __syncthreads();
        const double* now = alpha + (size_t)i * SM;
        double* next = alpha + (size_t)(i + 1) * SM;
        const double* si = sums + (size_t)i * SUMS;
        for (int to = threadIdx.x; to < SM; to += blockDim.x) {
            double acc = 0.0;
            for (int k = 0; k < SM; k++) {
                const int e = to - k - SCLO;
                if (e >= 0 && e < SW && now[k] != 0.0) acc = __dadd_rn(acc, __dmul_rn(now[k], si[k * SW + e]));
            }
            next[to] = acc;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            inv_beta = inverse_total(next, SM);
            if (!(inv_beta > 0.0)) lost = 1;
        }
        __syncthreads();
        for (int k = threadIdx.x; k < SM; k += blockDim.x) next[k] = __dmul_rn(next[k], inv_beta);
        __syncthreads();
    }

    // The end: known for a whole frame within the limits; else each further
    // received bit the frame does not take counted as a random one.
    const long long rho = avail;
    const bool end_known = !SSTREAM && rho >= TAU + SLO && rho <= TAU + SLO + SM - 1;
    if (!lost) {
        for (int k = threadIdx.x; k < SM; k += blockDim.x) {
            const long long m = k + SLO;
            double v;
            if (end_known) v = m == rho - TAU ? 1.0 : 0.0;
            else v = TAU + m <= rho ? pow2_neg(m - (rho - TAU)) : 0.0;
            bnext[k] = v;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            double w;
            best_end = likeliest(alpha + (size_t)SNS * SM, bnext, w);
            if (!(w > 0.0) || !normalise(bnext, SM)) lost = 1;
        }
        __syncthreads();
    }

    // Backward: β, the APPs, decisions and bit LLRs of each index.
    for (int i = SNS - 1; i >= 0 && !lost; i--) {
        const float* g = SGLOBAL ? gamma + (size_t)i * G : gamma;
        if (!SGLOBAL) {
            gamma_of(i, avail, w0, dw, books, ins, del, flush, gamma, nullptr);
        }
        const double* ai = alpha + (size_t)i * SM;
        const double* si = sums + (size_t)i * SUMS;
        for (int k = threadIdx.x; k < SM; k += blockDim.x) {
            double acc = 0.0;
            for (int e = 0; e < SW; e++) {
                const int to = k + e + SCLO;
                if (to >= 0 && to < SM) acc = __dadd_rn(acc, __dmul_rn(si[k * SW + e], bnext[to]));
            }
            beta[k] = acc;
        }
        for (int d = threadIdx.x; d < SQ; d += blockDim.x) {
            double acc = 0.0;
            for (int k = 0; k < SM; k++) {
                for (int e = 0; e < SW; e++) {
                    const int to = k + e + SCLO;
                    if (to < 0 || to >= SM) continue;
                    const double w = __dmul_rn(ai[k], bnext[to]);
                    if (w != 0.0) acc = __dadd_rn(acc, __dmul_rn(w, (double)g[(k * SW + e) * SQ + d]));
                }
            }
            app[d] = acc;
        }
        __syncthreads();
        // Normalise β and the APPs: the sums one thread's each, the scaling everyone's.
        if (threadIdx.x == 0) {
            inv_beta = inverse_total(beta, SM);
            if (!(inv_beta > 0.0)) lost = 1;
        }
        if (threadIdx.x == ta) {
            inv_app = inverse_total(app, SQ);
            if (!(inv_app > 0.0)) lost = 1;
        }
        __syncthreads();
        if (lost) break;
        for (int k = threadIdx.x; k < SM; k += blockDim.x) beta[k] = __dmul_rn(beta[k], inv_beta);
        for (int d = threadIdx.x; d < SQ; d += blockDim.x) app[d] = __dmul_rn(app[d], inv_app);
        __syncthreads();
        if (threadIdx.x == 0 && i > 0) {
            double p;
            if (on_edge(likeliest(ai, beta, p))) edge = 1;
        }
        if (threadIdx.x == ta) {
            int best = 0;
            double bp = -1.0;
            for (int d = 0; d < SQ; d++) {
                if (app[d] > bp) {
                    best = d;
                    bp = app[d];
                }
            }
            best_symbol = best;
        }
        __syncthreads();
        if (SAPP) {
            for (int d = threadIdx.x; d < SQ; d += blockDim.x) put_app(out, i * SQ + d, app[d]);
        }
        // One thread per bit of the symbol: its decision and its LLR.
        for (int j = threadIdx.x; j < SK; j += blockDim.x) {
            const int bit = SK - 1 - j;
            out[2 + i * SK + j] = (best_symbol >> bit) & 1;
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
