// The sync family's encoder, BSID channel and error count on the device, for
// the device link simulator (src/gpu/sync/link.rs), each the exact port of its
// host model so that the device link counts what the host link of whole
// frames (`SyncLink` with counter bits, `framing = "frames"`) counts:
// - frame f holds information bits f·K .. (f+1)·K (link.cuh's counter bits),
//   symbol i of it their bits i·KB .. (i+1)·KB, the first the most
//   significant (`codes/sync/encoder.rs`), sent as codeword d of codebook
//   i mod BOOKS, its most significant of n bits first (`Codebook::push_bits`);
// - coded bit j of frame f is channel input t = f·TAU + j, and its events come
//   from Philox block t under the channel's key (`codes/sync/channel.rs`):
//   word 0 against the insertion thresholds (at least k insertions while
//   below the k-th), word 1 deletion unless at least its threshold, word 2
//   substitution when below its threshold, word 3's bit e the e-th inserted
//   bit; the inserted bits first, then the bit unless deleted;
// - a frame's received bits go to its unit of the decoder's staged input as
//   the receiver metric's weights (`receiver_weights`: of a hard bit they are
//   one of two pairs, made on the host) after its length, zeros after them,
//   as `gpu/sync/mod.rs`'s `stage` writes them;
// - with LLRs (`BsidAwgn`: soft modes 1, i8, and 2, f32), received bit p of
//   a frame is noise sample g = (bits the channel output before the frame) + p
//   of the AWGN's own key (link.cuh's `normal_of`): its LLR is link.cuh's
//   `channel_llr`, for i8 quantized (`quantize`) and its weights looked up in
//   the table of the 255 values (made on the host by `receiver_weights`), for
//   f32 its weights computed here as `receiver_weights` computes them. The
//   bits output before each frame come from `sync_link_lens` (each frame's
//   length) and `sync_link_starts` (their running sum over the point, one
//   word on the device carried from batch to batch).
#include "link.cuh"

using namespace link;

constexpr int SL_NT = 256;
// Words before a unit's weights in the staged input (gpu/sync/mod.rs's HEAD).
constexpr int SL_HEAD = 2;
// The decoder's mark in the top byte of a unit's flags word (sync.cu's DONE).
constexpr u32 SL_DONE = 0x5Au << 24;

// The code's shape: codeword bits, bits per symbol, symbols per frame N,
// q, distinct codebooks.
struct SyncShape {
    u32 n, kb, symbols, q, books;
};

// The channel's event thresholds (`event_thresholds`).
struct BsidEvents {
    unsigned long long insert[32];
    unsigned long long del;
    unsigned long long flip;
};

// The receiver metric's weights (Q(y|0), Q(y|1) − Q(y|0)) of a received 0 and 1.
struct HardWeights {
    float w0_zero, dw_zero, w0_one, dw_one;
};

// The AWGN after the BSID events: mode 0 none (hard bits), 1 i8 LLRs, 2 f32
// LLRs; the noise's key, σ, the LLR gain and the quantizer's scale (for f32
// LLRs 1: the decoder divides by it); Pt and Ps of the receiver metric (f32
// LLRs); the weights (Q(y|0), Q(y|1) − Q(y|0)) of i8 LLR v at v + 127.
struct SoftChannel {
    u32 mode, nk0, nk1;
    float sigma, gain, scale;
    double pt, ps;
    float w0[255], dw[255];
};
static_assert(sizeof(SoftChannel) == 2080, "SoftChannel as link.rs lays it out: pt at byte 24, w0 at 40");

// The receiver metric's weights of an f32 LLR, as `receiver_weights` makes
// them (`llr_p_zero`: clamped to ±30 (LLR_CLAMP), 1 / (1 + e^−l) in f64;
// every operation rounded on its own).
__device__ __forceinline__ void soft_weights(float llr, const SoftChannel& sc, float* w0, float* dw) {
    const float l = fminf(fmaxf(__fdiv_rn(llr, sc.scale), -30.0f), 30.0f);
    const double p0 = __ddiv_rn(1.0, __dadd_rn(1.0, exp(-(double)l)));
    const double p1 = __dsub_rn(1.0, p0);
    const double keep = __dsub_rn(1.0, sc.ps);
    const double sent0 = __dmul_rn(sc.pt, __dadd_rn(__dmul_rn(keep, p0), __dmul_rn(sc.ps, p1)));
    const double sent1 = __dmul_rn(sc.pt, __dadd_rn(__dmul_rn(keep, p1), __dmul_rn(sc.ps, p0)));
    *w0 = __double2float_rn(sent0);
    *dw = __fsub_rn(__double2float_rn(sent1), __double2float_rn(sent0));
}

// How many bits the channel outputs for input t (`Thresholds::outputs`).
__device__ __forceinline__ u32 outputs_of(u64 t, Key key, const BsidEvents& ev) {
    const uint4 w = philox(t, key);
    u32 inserted = 0;
#pragma unroll
    for (int e = 0; e < 32; e++) inserted += (unsigned long long)w.x < ev.insert[e] ? 1u : 0u;
    return inserted + ((unsigned long long)w.y >= ev.del ? 1u : 0u);
}

// Information bit at stream position p of the words whose bit 0 is position info_first.
__device__ __forceinline__ u32 info_bit(const u32* __restrict__ info, long long p) { return (info[p >> 5] >> (p & 31)) & 1u; }

// Exclusive prefix sum of v over the CTA's SL_NT threads; *total gets the sum.
// All threads call it.
__device__ u32 cta_exclusive_sum(u32 v, u32* total) {
    __shared__ u32 warp_sums[SL_NT / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    u32 x = v;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const u32 y = __shfl_up_sync(FULL_MASK, x, d);
        if (lane >= d) x += y;
    }
    if (lane == 31) warp_sums[warp] = x;
    __syncthreads();
    u32 before = 0, all = 0;
    for (int w = 0; w < SL_NT / 32; w++) {
        before += w < warp ? warp_sums[w] : 0u;
        all += warp_sums[w];
    }
    __syncthreads();
    *total = all;
    return before + x - v;
}

// lens[f]: how many bits the channel outputs for frame first_frame + f, for
// f < frames (soft modes, before `sync_link_starts`).
extern "C" __global__ void __launch_bounds__(SL_NT) sync_link_lens(u32 frames, long long first_frame, u32 tau, u32 k0, u32 k1, BsidEvents ev,
                                                                 u32* __restrict__ lens) {
    const u32 f = blockIdx.x;
    if (f >= frames) return;
    const long long frame = first_frame + f;
    u32 out = 0;
    for (u32 j = threadIdx.x; j < tau; j += SL_NT) out += outputs_of((u64)(frame * tau + j), Key{k0, k1}, ev);
    u32 total;
    cta_exclusive_sum(out, &total);
    if (threadIdx.x == 0) lens[f] = total;
}

// starts[f] = *base + lens[0] + … + lens[f − 1] (base taken as 0 when
// `reset`: a point's first batch), then *base += every len: the noise sample
// of each frame's first received bit. One CTA.
extern "C" __global__ void __launch_bounds__(SL_NT) sync_link_starts(const u32* __restrict__ lens, u32 frames, unsigned long long* __restrict__ base,
                                                                   u32 reset, unsigned long long* __restrict__ starts) {
    __shared__ unsigned long long run;
    if (threadIdx.x == 0) run = reset ? 0ull : *base;
    __syncthreads();
    for (u32 f0 = 0; f0 < frames; f0 += SL_NT) {
        const u32 f = f0 + threadIdx.x;
        u32 total;
        const u32 before = cta_exclusive_sum(f < frames ? lens[f] : 0u, &total);
        if (f < frames) starts[f] = run + before;
        __syncthreads();
        if (threadIdx.x == 0) run += total;
        __syncthreads();
    }
    if (threadIdx.x == 0) *base = run;
}

// units + f·pitch: frame first_frame + f's received length (as float bits,
// at most `window`) and its weights, for f < frames; lens[f] its true length.
// With soft input (sc.mode ≠ 0) its received bit p is noise sample
// starts[f] + p.
extern "C" __global__ void __launch_bounds__(SL_NT) sync_link_frames(float* __restrict__ units, unsigned long long pitch, u32 window, u32 frames,
                                                                   long long first_frame, const u32* __restrict__ info, long long info_first,
                                                                   const u32* __restrict__ books, SyncShape c, u32 k0, u32 k1, BsidEvents ev,
                                                                   HardWeights hw, u32* __restrict__ lens, const unsigned long long* __restrict__ starts,
                                                                   SoftChannel sc) {
    __shared__ u32 written;
    __shared__ float table[2][255];
    const u32 f = blockIdx.x;
    if (f >= frames) return;
    const long long frame = first_frame + f;
    const u32 tau = c.n * c.symbols, k = c.kb * c.symbols;
    float* dst = units + (unsigned long long)f * pitch;
    float* w0 = dst + SL_HEAD;
    float* dw = w0 + window;
    if (threadIdx.x == 0) written = 0;
    if (sc.mode == 1) {
        for (int v = threadIdx.x; v < 255; v += SL_NT) {
            table[0][v] = sc.w0[v];
            table[1][v] = sc.dw[v];
        }
    }
    const unsigned long long g0 = sc.mode != 0 ? starts[f] : 0ull;
    __syncthreads();
    for (u32 j0 = 0; j0 < tau; j0 += SL_NT) {
        const u32 j = j0 + threadIdx.x;
        u32 out = 0, inserted = 0, bit = 0;
        uint4 w = make_uint4(0, 0, 0, 0);
        if (j < tau) {
            const u32 i = j / c.n, b = j % c.n;
            const long long at = frame * k + (long long)i * c.kb - info_first;
            u32 d = 0;
            for (u32 t = 0; t < c.kb; t++) d = d << 1 | info_bit(info, at + t);
            const u32 word = books[(i % c.books) * c.q + d];
            w = philox((u64)(frame * tau + j), Key{k0, k1});
#pragma unroll
            for (int e = 0; e < 32; e++) inserted += (unsigned long long)w.x < ev.insert[e] ? 1u : 0u;
            const bool kept = (unsigned long long)w.y >= ev.del;
            bit = ((word >> (c.n - 1 - b)) & 1u) ^ ((unsigned long long)w.z < ev.flip ? 1u : 0u);
            out = inserted + (kept ? 1u : 0u);
        }
        u32 total;
        const u32 at = written + cta_exclusive_sum(out, &total);
        for (u32 e = 0; e < out; e++) {
            const u32 p = at + e;
            if (p >= window) break;
            const u32 y = e < inserted ? (w.w >> e) & 1u : bit;
            if (sc.mode == 0) {
                w0[p] = y ? hw.w0_one : hw.w0_zero;
                dw[p] = y ? hw.dw_one : hw.dw_zero;
                continue;
            }
            const float llr = channel_llr(y, normal_of((long long)(g0 + p), Key{sc.nk0, sc.nk1}), sc.sigma, sc.gain);
            if (sc.mode == 1) {
                const int v = (int)quantize(llr, sc.scale) + 127;
                w0[p] = table[0][v];
                dw[p] = table[1][v];
            } else {
                soft_weights(llr, sc, &w0[p], &dw[p]);
            }
        }
        __syncthreads();
        if (threadIdx.x == 0) written += total;
        __syncthreads();
    }
    const u32 len = written;
    for (u32 p = min(len, window) + threadIdx.x; p < window; p += SL_NT) {
        w0[p] = 0.0f;
        dw[p] = 0.0f;
    }
    if (threadIdx.x == 0) {
        dst[0] = __uint_as_float(min(len, window));
        dst[1] = 0.0f;
        lens[f] = len;
    }
}

// counts[4f ..] of frame first_frame + f: the bits compared (its first bits
// before stream position `end`), the bit errors and the symbols with an error
// among them, and flags: 1 the decoder's check failed, 2 nothing was received
// (the decoded bits are zeros, as the host counts a frame the channel deleted
// whole), 4 more was received than the unit holds, 8 the decoder did not mark
// the unit done. The decoder's unit u holds `out_words` words: consumed,
// flags, then K decisions.
extern "C" __global__ void __launch_bounds__(SL_NT) sync_link_count(const u32* __restrict__ decoded, u32 out_words, const u32* __restrict__ lens,
                                                                  u32 window, u32 frames, long long first_frame, const u32* __restrict__ info,
                                                                  long long info_first, u32 kb, u32 k, long long end, u32* __restrict__ counts) {
    __shared__ u32 partial[2][SL_NT / 32];
    const u32 f = blockIdx.x;
    if (f >= frames) return;
    const long long start = (first_frame + f) * k;
    const u32 compared = (u32)max(0ll, min((long long)k, end - start));
    const u32* unit = decoded + (unsigned long long)f * out_words;
    const bool empty = lens[f] == 0;
    u32 errors = 0, symbol_errors = 0;
    for (u32 s = threadIdx.x; s * kb < compared; s += SL_NT) {
        u32 e = 0;
        for (u32 t = s * kb; t < min(compared, (s + 1) * kb); t++) {
            const u32 got = empty ? 0u : (unit[2 + t] & 0xffu);
            e += got != info_bit(info, start + t - info_first) ? 1u : 0u;
        }
        errors += e;
        symbol_errors += e > 0 ? 1u : 0u;
    }
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        errors += __shfl_down_sync(FULL_MASK, errors, d);
        symbol_errors += __shfl_down_sync(FULL_MASK, symbol_errors, d);
    }
    if ((threadIdx.x & 31) == 0) {
        partial[0][threadIdx.x >> 5] = errors;
        partial[1][threadIdx.x >> 5] = symbol_errors;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        u32 e = 0, se = 0;
        for (int w = 0; w < SL_NT / 32; w++) {
            e += partial[0][w];
            se += partial[1][w];
        }
        const u32 flags = unit[1];
        counts[4 * f] = compared;
        counts[4 * f + 1] = e;
        counts[4 * f + 2] = se;
        counts[4 * f + 3] = ((flags & 1u) && !empty ? 1u : 0u) | (empty ? 2u : 0u) | (lens[f] > window ? 4u : 0u) |
                            ((flags & 0xff000000u) != SL_DONE ? 8u : 0u);
    }
}
