// Belief propagation decoding of polar codes: scaled min-sum (α = 15/16) on
// the m-stage factor graph with the round-trip schedule and the G-matrix
// early stop per codeword, computing exactly what the CPU's i8 model
// computes (codes/polar/decoder/bp.rs: its graph, schedule and arithmetic
// are written down there; this file follows them step for step).
//
// One group of PTPC threads decodes one codeword; a CTA holds PCW groups,
// which never wait for each other: a group synchronises its own threads
// only (a named barrier of its own, or the group's lanes of a warp), so a
// codeword that stops early lets its threads leave while the CTA's other
// codewords go on.
// A codeword's messages are N·(m + 1) bytes of L and as many of R, in
// shared memory (PGLOBAL 0: the full-parallel decoder, sized by the host
// from the device's opt-in shared memory per block) or in a global scratch
// buffer (PGLOBAL 1: the partial-parallel decoder of longer codes, one
// codeword per CTA, each thread several quads per stage).
//
// The unit of work is a quad: four processing elements of one stage whose
// messages sit in whole 32-bit words, updated together by the byte-SIMD
// intrinsics (four i8 messages per register). Where the span h is 4 or more
// a quad's four tops are one word and their bottoms the word h bytes on;
// for h = 1 and 2 a quad is 8 consecutive bytes whose tops and bottoms are
// gathered with byte permutes and scattered back the same way.
//
// Compile-time constants (gpu/polar/kernel.rs, `defines`):
//   PM, PN        m and N = 2^m (N >= 8)
//   PK, PKW, POW  information bits K, ceil(K/32) words of them, output words
//                 per codeword (PKW, then ceil(K/2) soft words with PSOFT)
//   PUW           ceil(N/32) words of N bits
//   PTPC, PCW     threads per codeword, codewords per CTA
//   PGLOBAL       messages in global memory
//   PIMAX         iterations at most
//   PSTOP         1: stop a codeword when û·G = x̂; 0: run PIMAX iterations
//   PSYS          information bits are read from x = û·G
//   PSOFT         also write each information bit's L + R
//   PF32, PQSCALE f32 LLRs, quantized on load at this scale (as the host's
//                 shared quantizer does); else i8 LLRs
#include "common.cuh"

constexpr int QUADS = PN / 8;
// Bytes of a codeword's messages: L[0..m], then R[0..m].
constexpr unsigned long long MSG_BYTES = 2ull * (PM + 1) * PN;
// Words a codeword keeps beside its messages: û, x̂, and four control words.
constexpr int TAIL_WORDS = 2 * PUW + 4;
// The control words: a mismatch seen by the G-matrix check, still active,
// the iterations run, whether the check held last.
constexpr int CTL_DIFF = 0, CTL_ACTIVE = 1, CTL_ITERS = 2, CTL_HOLDS = 3;

static_assert(PTPC < 32 || PCW <= 15, "a group of whole warps needs a named barrier of its own (1..15)");

// The barrier of one codeword's threads (with the memory ordering of
// __syncthreads among them).
struct Group {
    u32 id;    // the named barrier: 1 + the codeword's place in the CTA
    u32 mask;  // the group's lanes, when it is part of a warp
    __device__ __forceinline__ void sync() const {
#if PTPC >= 32
        asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(PTPC) : "memory");
#else
        __syncwarp(mask);
#endif
    }
};

static __device__ __forceinline__ u32 ld(const u8* p) { return *reinterpret_cast<const u32*>(p); }
static __device__ __forceinline__ void st(u8* p, u32 v) { *reinterpret_cast<u32*>(p) = v; }

// F(p, q) = α·f(p, q) on four messages: m = min(|p|⁺, |q|⁺) (saturating
// absolute values: −128 counts as 127), α·m = m − ((m + 8) >> 4) (no byte
// carries: m + 8 <= 135, and (m + 8) >> 4 <= m), negated where the signs
// differ. Never −128.
static __device__ __forceinline__ u32 scaled(u32 p, u32 q) {
    const u32 m = __vminu4(__vabsss4(p), __vabsss4(q));
    const u32 am = __vsub4(m, ((m + 0x08080808u) >> 4) & 0x0f0f0f0fu);
    const u32 neg = __vcmplts4(p ^ q, 0u);
    return __vsub4(am ^ neg, neg);
}

// One processing element's two outputs, four at a time: with (p, q) the
// inputs from the side written towards and (r, t) the other side's,
// top = F(p, q + t) and bottom = F(p, r) + q (bp.rs, `stage`).
static __device__ __forceinline__ void element(u32 p, u32 q, u32 r, u32 t, u32& top, u32& bottom) {
    top = scaled(p, __vaddss4(q, t));
    bottom = __vaddss4(scaled(p, r), q);
}

// One stage of span 2^s by one codeword's threads: the left pass writes
// L[s] from L[s+1] and R[s]; the right pass R[s+1] from R[s] and L[s+1].
template <bool LEFT>
static __device__ __forceinline__ void stage(u8* L, u8* R, int s, int lane) {
    const int h = 1 << s;
    u8* dst = LEFT ? L + s * PN : R + (s + 1) * PN;
    const u8* src = LEFT ? L + (s + 1) * PN : R + s * PN;
    const u8* oth = LEFT ? R + s * PN : L + (s + 1) * PN;
    for (int q = lane; q < QUADS; q += PTPC) {
        u32 top, bottom;
        if (h >= 4) {
            const int e = 4 * q;
            const int i = ((e >> s) << (s + 1)) | (e & (h - 1));
            element(ld(src + i), ld(src + i + h), ld(oth + i), ld(oth + i + h), top, bottom);
            st(dst + i, top);
            st(dst + i + h, bottom);
        } else {
            const int b = 8 * q;
            // h = 1: bytes t b t b; h = 2: t t b b (t: tops, b: bottoms).
            const u32 gather_top = h == 1 ? 0x6420u : 0x5410u, gather_bottom = h == 1 ? 0x7531u : 0x7632u;
            const u32 scatter_lo = h == 1 ? 0x5140u : 0x5410u, scatter_hi = h == 1 ? 0x7362u : 0x7632u;
            const u32 s0 = ld(src + b), s1 = ld(src + b + 4), o0 = ld(oth + b), o1 = ld(oth + b + 4);
            element(__byte_perm(s0, s1, gather_top), __byte_perm(s0, s1, gather_bottom), __byte_perm(o0, o1, gather_top),
                    __byte_perm(o0, o1, gather_bottom), top, bottom);
            st(dst + b, __byte_perm(top, bottom, scatter_lo));
            st(dst + b + 4, __byte_perm(top, bottom, scatter_hi));
        }
    }
}

// Bits 0..3: whether each byte of the saturating sum s is negative (the
// sign of the exact sum of two i8: a saturating sum never crosses 0).
static __device__ __forceinline__ u32 negatives(u32 s) {
    return ((__vcmplts4(s, 0u) & 0x08040201u) * 0x01010101u) >> 24;
}

// The hard decisions of column j's L + R, packed 32 to a word, into `bits`.
static __device__ void decide(const u8* L, const u8* R, int j, u32* bits, int lane) {
    constexpr int BYTES = PN < 32 ? PN : 32;
    for (int w = lane; w < PUW; w += PTPC) {
        u32 v = 0;
#pragma unroll
        for (int k = 0; k < BYTES / 4; k++) {
            const int i = j * PN + w * 32 + 4 * k;
            v |= negatives(__vaddss4(ld(L + i), ld(R + i))) << (4 * k);
        }
        bits[w] = v;
    }
}

// v ← v·G for N bits packed in PUW words, by one codeword's threads, every
// one of which must call it (it synchronises them between stages that cross
// words, and at the end).
static __device__ void transform(u32* v, int lane, const Group& g) {
    constexpr int INWORD = PM < 5 ? PM : 5;
    for (int w = lane; w < PUW; w += PTPC) {
        u32 x = v[w];
        if (INWORD > 0) x ^= (x >> 1) & 0x55555555u;
        if (INWORD > 1) x ^= (x >> 2) & 0x33333333u;
        if (INWORD > 2) x ^= (x >> 4) & 0x0f0f0f0fu;
        if (INWORD > 3) x ^= (x >> 8) & 0x00ff00ffu;
        if (INWORD > 4) x ^= (x >> 16) & 0x0000ffffu;
        v[w] = x;
    }
    for (int hw = 1; hw < PUW; hw *= 2) {
        g.sync();
        for (int p = lane; p < PUW / 2; p += PTPC) {
            const int j = (p / hw) * 2 * hw + p % hw;
            v[j] ^= v[j + hw];
        }
    }
    g.sync();
}

// Four channel LLRs of a codeword as messages.
static __device__ __forceinline__ u32 channel(const void* llrs, unsigned long long unit, int w) {
#if PF32
    const float4 f = reinterpret_cast<const float4*>(static_cast<const float*>(llrs) + unit * PN)[w];
    const float in[4] = {f.x, f.y, f.z, f.w};
    u32 v = 0;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        // Quantizer::one: round(llr·scale), halves away from 0, saturated
        // to ±127, with the host's exact steps (no fused multiply-add).
        const float c = fminf(fmaxf(__fmul_rn(in[k], PQSCALE), -128.0f), 128.0f);
        const int t = __float2int_rz(c);
        const float frac = __fsub_rn(c, (float)t);
        int r = t + (frac >= 0.5f ? 1 : 0) - (frac <= -0.5f ? 1 : 0);
        r = r > 127 ? 127 : (r < -127 ? -127 : r);
        v |= (u32)(r & 0xff) << (8 * k);
    }
    return v;
#else
    return reinterpret_cast<const u32*>(static_cast<const i8*>(llrs) + unit * PN)[w];
#endif
}

// Decode `count` codewords of N LLRs each, back to back in `llrs`: per
// codeword, the information bits packed (bit b of word o is information
// bit 32·o + b, in u's order; of x = û·G with PSYS), then with PSOFT the
// sums L + R of the information bits as i16 pairs; and a status word:
// iterations | G-matrix check held << 16. `tables`: the frozen bits of u
// (PUW words), then the K information positions, ascending. `scratch`:
// MSG_BYTES per codeword with PGLOBAL, else unused.
extern "C" __global__ void __launch_bounds__(PTPC * PCW) polar_bp(const void* __restrict__ llrs, u32 count, u32* __restrict__ out,
                                                                  u32* __restrict__ status, const u32* __restrict__ tables, u8* __restrict__ scratch) {
    extern __shared__ __align__(16) u8 smem[];
    const int c = threadIdx.x / PTPC, lane = threadIdx.x % PTPC;
    const unsigned long long unit = (unsigned long long)blockIdx.x * PCW + c;
    // A group of a partial last CTA with no codeword waits for no one.
    if (unit >= count) return;
    const Group g = {(u32)c + 1u, PTPC >= 32 ? FULL_MASK : ((1u << (PTPC & 31)) - 1u) << ((threadIdx.x & 31) / PTPC * PTPC)};
#if PGLOBAL
    u8* msg = scratch + unit * MSG_BYTES;
    u32* tail = reinterpret_cast<u32*>(smem) + c * TAIL_WORDS;
#else
    u8* msg = smem + c * MSG_BYTES;
    u32* tail = reinterpret_cast<u32*>(smem + PCW * MSG_BYTES) + c * TAIL_WORDS;
#endif
    u8* L = msg;
    u8* R = msg + (PM + 1) * PN;
    u32* ubits = tail;
    u32* xbits = tail + PUW;
    u32* ctl = tail + 2 * PUW;
    const u32* frozen = tables;
    const u32* info = tables + PUW;

    // L[m] = the channel, R[0] = 127 for a frozen bit, every other message 0.
    constexpr int COL_WORDS = PN / 4;
    for (int w = lane; w < (PM + 1) * COL_WORDS; w += PTPC) {
        const int col = w / COL_WORDS, at = w % COL_WORDS;
        reinterpret_cast<u32*>(L)[w] = col == PM ? channel(llrs, unit, at) : 0u;
        u32 prior = 0;
        if (col == 0) {
            const u32 f = (frozen[at >> 3] >> ((at & 7) * 4)) & 0xfu;
#pragma unroll
            for (int k = 0; k < 4; k++) prior |= ((f >> k) & 1u) * (0x7fu << (8 * k));
        }
        reinterpret_cast<u32*>(R)[w] = prior;
    }
    if (lane == 0) {
        ctl[CTL_DIFF] = 0;
        ctl[CTL_ACTIVE] = 1;
        ctl[CTL_ITERS] = PIMAX;
        ctl[CTL_HOLDS] = 0;
    }
    g.sync();

    for (int t = 1; t <= PIMAX; t++) {
        for (int s = PM - 1; s >= 0; s--) {
            stage<true>(L, R, s, lane);
            g.sync();
        }
        for (int s = 0; s < PM; s++) {
            stage<false>(L, R, s, lane);
            g.sync();
        }
        if (PSTOP || t == PIMAX) {
            decide(L, R, 0, ubits, lane);
            decide(L, R, PM, xbits, lane);
            for (int w = lane; w < PUW; w += PTPC) ubits[w] &= ~frozen[w];
            if (lane == 0) ctl[CTL_DIFF] = 0;
            g.sync();
            // û·G = x̂ exactly when û = x̂·G (G·G = I), so x̂ is transformed
            // in place and û kept for the output.
            transform(xbits, lane, g);
            for (int w = lane; w < PUW; w += PTPC)
                if (xbits[w] != ubits[w]) ctl[CTL_DIFF] = 1;
            g.sync();
            if (lane == 0) {
                const bool holds = ctl[CTL_DIFF] == 0;
                ctl[CTL_HOLDS] = holds;
                if ((PSTOP && holds) || t == PIMAX) {
                    ctl[CTL_ITERS] = t;
                    ctl[CTL_ACTIVE] = 0;
                }
            }
            g.sync();
            if (ctl[CTL_ACTIVE] == 0) break;
        }
    }

    if (PSYS) transform(ubits, lane, g);
    u32* o = out + unit * POW;
    for (int w = lane; w < PKW; w += PTPC) {
        u32 v = 0;
        const int bits = PK - 32 * w < 32 ? PK - 32 * w : 32;
        for (int b = 0; b < bits; b++) {
            const u32 pos = info[32 * w + b];
            v |= ((ubits[pos >> 5] >> (pos & 31)) & 1u) << b;
        }
        o[w] = v;
    }
#if PSOFT
    {
        const int j = PSYS ? PM : 0;
        const i8* l = reinterpret_cast<const i8*>(L) + j * PN;
        const i8* r = reinterpret_cast<const i8*>(R) + j * PN;
        for (int w = lane; w < (PK + 1) / 2; w += PTPC) {
            u32 v = 0;
            for (int k = 0; k < 2 && 2 * w + k < PK; k++) {
                const u32 pos = info[2 * w + k];
                v |= (u32)(unsigned short)(short)((int)l[pos] + (int)r[pos]) << (16 * k);
            }
            o[PKW + w] = v;
        }
    }
#endif
    if (lane == 0) status[unit] = ctl[CTL_ITERS] | (ctl[CTL_HOLDS] << 16);
}
