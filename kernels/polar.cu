// Belief propagation decoding of polar codes: scaled min-sum (α = 15/16) on
// the m-stage factor graph with the round-trip schedule and the G-matrix
// or CRC early stop per codeword, computing exactly what the CPU's i8 model
// computes (codes/polar/decoder/bp.rs: its graph, schedule and arithmetic
// are written down there; this file follows them step for step).
//
// One group of PTPC threads decodes one codeword; a CTA holds PCW groups,
// which never wait for each other: a group synchronises its own threads
// only (its CTA's barrier, a named barrier of its own, or the group's lanes
// of a warp), so a codeword that stops early lets its threads leave while
// the CTA's other codewords go on.
// A codeword's messages in memory are the columns 3..m of L and of R
// (and L[0] with soft output), in shared memory (PGLOBAL 0: the
// full-parallel decoder, sized by the host from the device's opt-in shared
// memory per block) or in a global scratch buffer (PGLOBAL 1: the
// partial-parallel decoder of longer codes, one codeword per CTA, each
// thread several quads per stage). The columns 0..2 never leave registers:
// in the stages of span 1, 2 and 4 a thread's quad is the same 8 bytes
// 8q..8q+7 of every column, so the left pass's stages 2, 1, 0 and the right
// pass's 0, 1, 2 run back to back in one thread, which keeps R[0] (the
// frozen prior), R[1] and R[2] from iteration to iteration in registers and
// needs no barrier between them ("the low block").
//
// The unit of work is a quad: four processing elements of one stage whose
// messages sit in whole 32-bit words, updated together by SIMD-within-a-word
// arithmetic (four i8 messages per register). Where the span h is 4 or more
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
//   PSTOP         1: stop a codeword when û·G = x̂; 2: when its information
//                 bits pass the CRC; 0: run PIMAX iterations
//   PXOR          with PSTOP 2: the syndrome the CRC passes with
//   PSYS          information bits are read from x = û·G
//   PSOFT         also write each information bit's L + R
//   PQPT          quads per thread: N/8/PTPC
//   PMINB         CTAs an SM should hold (caps the registers)
//   PF32, PQSCALE f32 LLRs, quantized on load at this scale (as the host's
//                 shared quantizer does); else i8 LLRs
#include "polar.cuh"

constexpr int QUADS = PN / 8;
static_assert(QUADS == PQPT * PTPC, "every thread updates PQPT quads of a stage");
// Columns of L (and of R) in memory: 3..m.
constexpr int COLS = PM - 2;
// Bytes of a codeword's messages: L[3..m], R[3..m], then with PSOFT L[0].
constexpr unsigned long long MSG_BYTES = (2ull * COLS + PSOFT) * PN;
// Warps of a codeword's group (a part of one counts as one).
constexpr int GROUP_WARPS = (PTPC + 31) / 32;
// Words a codeword keeps beside its messages: û, x̂, two control words, and
// a word per warp for the CRC's syndrome.
constexpr int TAIL_WORDS = 2 * PUW + 2 + GROUP_WARPS;
// The control words: still active, and (once stopped) the status word.
constexpr int CTL_ACTIVE = 0, CTL_STATUS = 1;

// The stage loops unrolled, so that a stage's addresses are constants
// (12 % fewer instructions at N = 1024), where the messages are in shared
// memory; the partial-parallel decoder's quads per thread would spill.
#if PGLOBAL
#define STAGE_LOOP _Pragma("unroll 1")
#else
#define STAGE_LOOP _Pragma("unroll")
#endif

static_assert(PTPC <= 32 || PCW <= 2, "a group of several warps shares its CTA with one other at most (named barriers 1 and 2)");

// A named barrier of `threads` threads, its number an immediate: with a
// number in a register the compiler reserves all 16 of a CTA's barriers,
// and an SM then holds 4 CTAs (at N = 1024 a third of what its shared
// memory holds).
template <int ID>
static __device__ __forceinline__ void named_barrier() {
    asm volatile("bar.sync %0, %1;" ::"n"(ID), "n"(PTPC) : "memory");
}

// The barrier of one codeword's threads (with the memory ordering of
// __syncthreads among them): the group's lanes of one warp, the CTA's
// barrier when the group is the CTA, else a named barrier of its own.
struct Group {
    u32 id;    // the named barrier: 1 + the codeword's place in the CTA
    u32 mask;  // the group's lanes, when it is (part of) one warp
    __device__ __forceinline__ void sync() const {
#if PTPC <= 32
        __syncwarp(mask);
#elif PCW == 1
        __syncthreads();
#else
        if (id == 1)
            named_barrier<1>();
        else
            named_barrier<2>();
#endif
    }
};

static __device__ __forceinline__ u32 ld(const u8* p) { return *reinterpret_cast<const u32*>(p); }
static __device__ __forceinline__ void st(u8* p, u32 v) { *reinterpret_cast<u32*>(p) = v; }

// Each byte's sign spread over the byte: 0xff where it is negative (the
// byte permute's sign-replicating mode, one instruction).
static __device__ __forceinline__ u32 signs(u32 v) {
    u32 r;
    asm("prmt.b32 %0, %1, 0, 0xba98;" : "=r"(r) : "r"(v));
    return r;
}

// |q| of each byte, 0..128 (−128 gives 128): the absolute difference of
// the offset-binary bytes from 0x80, which Hopper does in one instruction.
static __device__ __forceinline__ u32 abs128(u32 q) {
    u32 r;
    asm("vabsdiff4.u32.u32.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(q ^ 0x80808080u), "r"(0x80808080u), "r"(0u));
    return r;
}

// a − b as an IMAD (b·(−1) + a), which Hopper issues on the FMA pipe
// instead of the INT32 pipe that runs every other step of the element
// function and bounds the kernel. The −1 must be opaque, or the compiler
// turns the IMAD back into an IADD3: it is −gridDim.z, and every launch of
// this kernel has gridDim.z = 1 (gpu/polar/kernel.rs, `launch`). Measured
// on the H200: 20.53 → 20.75 Gb/s at (1024, 512), 5 dB.
static __device__ __forceinline__ u32 fsub(u32 a, u32 b) {
    u32 one, r;
    asm("mov.u32 %0, %%nctaid.z;" : "=r"(one));
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(b), "r"(0u - one), "r"(a));
    return r;
}

// F(p, q) = α·f(p, q) on four messages, given ap = |p|⁺ (saturating
// absolute values: −128 counts as 127) and ap80 = ap + 0x80 per byte:
// m = min(ap, |q|⁺), α·m = m − ((m + 8) >> 4), negated where the signs
// differ; never −128. Every step is plain word arithmetic that cannot
// carry or borrow across bytes, which the byte-SIMD intrinsics (emulated
// since Maxwell) do not know: the min from the sign of ap + 0x80 − |q|
// (0..255 for ap <= 127 and |q| <= 128, so |q| needs no saturation: where
// it is 128, ap is the min); (m + 8) >> 4 <= m and m + 8 <= 135; −am =
// (0x80 − am) ^ 0x80 for am <= 119 (and 0 for 0). 14 instructions where
// the intrinsics took 27.
static __device__ __forceinline__ u32 scaled_abs(u32 ap, u32 ap80, u32 p, u32 q) {
    const u32 aq = abs128(q);
    const u32 ge = signs(fsub(ap80, aq));
    const u32 m = (aq & ge) | (ap & ~ge);
    const u32 am = fsub(m, ((m + 0x08080808u) >> 4) & 0x0f0f0f0fu);
    const u32 neg = signs(p ^ q);
    const u32 minus = fsub(0x80808080u, am) ^ 0x80808080u;
    return (minus & neg) | (am & ~neg);
}

// One processing element's two outputs, four at a time: with (p, q) the
// inputs from the side written towards and (r, t) the other side's,
// top = F(p, q + t) and bottom = F(p, r) + q (bp.rs, `stage`). Where the
// other side is still 0 (`FRESH`: the first left pass) that is
// top = F(p, q) and bottom = q (F(p, 0) = 0).
template <bool FRESH>
static __device__ __forceinline__ void element(u32 p, u32 q, u32 r, u32 t, u32& top, u32& bottom) {
    const u32 ap = __vabsss4(p);
    const u32 ap80 = ap + 0x80808080u;
    if (FRESH) {
        top = scaled_abs(ap, ap80, p, q);
        bottom = q;
    } else {
        top = scaled_abs(ap, ap80, p, __vaddss4(q, t));
        bottom = __vaddss4(scaled_abs(ap, ap80, p, r), q);
    }
}

// Eight consecutive messages of a column, bytes 0..3 in lo and 4..7 in hi.
struct Oct {
    u32 lo, hi;
};

static __device__ __forceinline__ Oct ld8(const u8* p) {
    const uint2 v = *reinterpret_cast<const uint2*>(p);
    return {v.x, v.y};
}
static __device__ __forceinline__ void st8(u8* p, Oct v) { *reinterpret_cast<uint2*>(p) = make_uint2(v.lo, v.hi); }

// A stage of span H (1, 2 or 4) on the 8 bytes it joins among themselves:
// the new side `dst` from `src` (read along the pass) and `oth` (the
// opposite direction's). Tops and bottoms are gathered from the bytes
// (H = 1: t b t b; H = 2: t t b b; H = 4: the two words) and scattered back.
template <int H, bool FRESH = false>
static __device__ __forceinline__ Oct stage8(Oct src, Oct oth) {
    const u32 gt = H == 1 ? 0x6420u : 0x5410u, gb = H == 1 ? 0x7531u : 0x7632u;
    const u32 slo = H == 1 ? 0x5140u : 0x5410u, shi = H == 1 ? 0x7362u : 0x7632u;
    u32 top, bottom;
    if (H == 4) {
        element<FRESH>(src.lo, src.hi, oth.lo, oth.hi, top, bottom);
        return {top, bottom};
    }
    element<FRESH>(__byte_perm(src.lo, src.hi, gt), __byte_perm(src.lo, src.hi, gb), __byte_perm(oth.lo, oth.hi, gt), __byte_perm(oth.lo, oth.hi, gb), top,
            bottom);
    return {__byte_perm(top, bottom, slo), __byte_perm(top, bottom, shi)};
}

// One stage of span 2^s >= 8 by one codeword's threads: the left pass
// writes L[s] from L[s+1] and R[s]; the right pass R[s+1] from R[s] and
// L[s+1]. `L` and `R` point at column 3; `fresh`: R[s] has not been
// written yet (the first left pass), so it is 0 and not read.
template <bool LEFT>
static __device__ __forceinline__ void stage(u8* L, u8* R, int s, int lane, bool fresh) {
    const int h = 1 << s;
    u8* dst = LEFT ? L + (s - 3) * PN : R + (s - 2) * PN;
    const u8* src = LEFT ? L + (s - 2) * PN : R + (s - 3) * PN;
    const u8* oth = LEFT ? R + (s - 3) * PN : L + (s - 2) * PN;
#pragma unroll
    for (int k = 0; k < PQPT; k++) {
        const int e = 4 * (lane + k * PTPC);
        const int i = ((e >> s) << (s + 1)) | (e & (h - 1));
        u32 top, bottom;
        if (LEFT && fresh)
            element<true>(ld(src + i), ld(src + i + h), 0u, 0u, top, bottom);
        else
            element<false>(ld(src + i), ld(src + i + h), ld(oth + i), ld(oth + i + h), top, bottom);
        st(dst + i, top);
        st(dst + i + h, bottom);
    }
}

// Bits 0..3: whether bit 7 of each byte of s is set.
static __device__ __forceinline__ u32 negatives(u32 s) {
    return ((signs(s) & 0x08040201u) * 0x01010101u) >> 24;
}

// Bit 7 of each byte: whether the exact sum a + b is negative (the sign of
// the saturating sum): both negative, or one of them and the sum of the
// low seven bits carries nothing into bit 7.
static __device__ __forceinline__ u32 sum_negative(u32 a, u32 b) {
    const u32 low = (a & 0x7f7f7f7fu) + (b & 0x7f7f7f7fu);
    return (a & b) | ((a ^ b) & ~low);
}

// The hard decisions of eight sums a + b, as a byte.
static __device__ __forceinline__ u32 decide8(Oct a, Oct b) {
    return negatives(sum_negative(a.lo, b.lo)) | negatives(sum_negative(a.hi, b.hi)) << 4;
}

// v ← v·G for N bits packed in PUW words, by one codeword's threads, every
// one of which must call it (it synchronises them). Word w is lane w's.
static __device__ void transform(u32* v, int lane, const Group& g) {
    for (int w = lane; w < PUW; w += PTPC) v[w] = polar_in_word(v[w], 1 << PM);
    for (int hw = 1; hw < PUW; hw *= 2) {
        g.sync();
        polar_across_words(v, PUW, hw, lane, PTPC);
    }
    g.sync();
}

// Whether û·G = x̂ (û = x̂·G, as G·G = I), by one codeword's threads, all
// of which call it and get the answer; û's frozen bits are cleared on the
// way. Up to N = 1024 one warp (or the group's lanes of one) transforms
// x̂ in registers, across words with shuffles, and votes: one barrier.
static __device__ bool g_matrix_holds(u32* ubits, u32* xbits, const u32* frozen, u32* ctl, int lane, const Group& g) {
#if PUW <= 32
    if (lane < 32) {
        const u32 mask = PTPC >= 32 ? FULL_MASK : g.mask;
        u32 x = lane < PUW ? xbits[lane] : 0u;
        x = polar_in_word(x, 1 << PM);
        // Word j ^= word j + hw for j & hw = 0: lane^hw stays in the group (PUW <= PTPC).
#pragma unroll
        for (int hw = 1; hw < PUW; hw *= 2) {
            const u32 y = __shfl_xor_sync(mask, x, hw);
            if (!(lane & hw)) x ^= y;
        }
        u32 u = 0;
        if (lane < PUW) {
            u = ubits[lane] & ~frozen[lane];
            ubits[lane] = u;
        }
        // Below N = 32 only the word's first N bits are decisions.
        const u32 valid = PN >= 32 ? ~0u : (1u << (PN & 31)) - 1u;
        const bool differs = __any_sync(mask, lane < PUW && ((x ^ u) & valid) != 0);
        if (lane == 0) ctl[CTL_ACTIVE] = differs ? 1u : 0u;
    }
    g.sync();
    return ctl[CTL_ACTIVE] == 0;
#else
    if (lane == 0) ctl[CTL_ACTIVE] = 0;
    for (int w = lane; w < PUW; w += PTPC) ubits[w] &= ~frozen[w];
    transform(xbits, lane, g);
    for (int w = lane; w < PUW; w += PTPC)
        if (xbits[w] != ubits[w]) ctl[CTL_ACTIVE] = 1;
    g.sync();
    return ctl[CTL_ACTIVE] == 0;
#endif
}

// The low block: the left pass's stages 2, 1, 0, û's decisions, the right
// pass's stages 0, 1, 2, on a thread's quads 8q..8q+7, which these stages
// join among themselves: L[3] in, R[3] (and with PSOFT L[0]) out, R[0..2]
// kept in registers. `FRESH`: the first iteration, when R[1] and R[2] are 0.
template <bool FRESH>
static __device__ __forceinline__ void low_block(const u8* L, u8* R, u8* L0, u8* ub, const Oct* r0, Oct* r1, Oct* r2, int lane, bool decide) {
#pragma unroll
    for (int k = 0; k < PQPT; k++) {
        const int q = lane + k * PTPC;
        const Oct l3 = ld8(L + 8 * q);
        const Oct l2 = stage8<4, FRESH>(l3, r2[k]);
        const Oct l1 = stage8<2, FRESH>(l2, r1[k]);
        const Oct l0 = stage8<1>(l1, r0[k]);
        // û: the signs of L[0] + R[0], which are L[0]'s where R[0] is 0
        // (the frozen bits are cleared by the check).
        if (decide) ub[q] = (u8)(negatives(l0.lo) | negatives(l0.hi) << 4);
#if PSOFT
        st8(L0 + 8 * q, l0);
#endif
        r1[k] = stage8<1>(r0[k], l1);
        r2[k] = stage8<2>(r1[k], l2);
        st8(R + 8 * q, stage8<4>(r2[k], l3));
    }
}

#if PSTOP == 2
// Whether û's information bits pass the CRC, by one codeword's threads,
// all of which call it and get the answer: the XOR of the syndrome columns
// (`columns`, one per information bit; InfoCheck::syndrome_columns) of the
// bits that are 1 equals PXOR. Each thread takes information bits, each
// warp reduces by shuffles, and the group by a word per warp.
static __device__ bool crc_holds(const u32* ubits, const u32* info, const u32* columns, u32* ctl, u32* partial, int lane, const Group& g) {
    u32 s = 0;
    for (int i = lane; i < PK; i += PTPC) {
        const u32 pos = info[i];
        if ((ubits[pos >> 5] >> (pos & 31)) & 1u) s ^= columns[i];
    }
#if PTPC <= 32
    for (int o = PTPC / 2; o > 0; o >>= 1) s ^= __shfl_xor_sync(g.mask, s, o);
    if (lane == 0) ctl[CTL_ACTIVE] = s != PXOR;
#else
    for (int o = 16; o > 0; o >>= 1) s ^= __shfl_xor_sync(FULL_MASK, s, o);
    if ((lane & 31) == 0) partial[lane >> 5] = s;
    g.sync();
    if (lane == 0) {
        u32 all = 0;
        for (int w = 0; w < GROUP_WARPS; w++) all ^= partial[w];
        ctl[CTL_ACTIVE] = all != PXOR;
    }
#endif
    g.sync();
    return ctl[CTL_ACTIVE] == 0;
}
#endif

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
// iterations | the stop's check (G-matrix or CRC) held << 16. `tables`:
// the frozen bits of u (PUW words), the K information positions,
// ascending, and with PSTOP 2 the K syndrome columns. `scratch`:
// MSG_BYTES per codeword with PGLOBAL, else unused.
extern "C" __global__ void __launch_bounds__(PTPC * PCW, PMINB) polar_bp(const void* __restrict__ llrs, u32 count, u32* __restrict__ out,
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
    // Column j >= 3 of L is at L + (j - 3)·N, of R at R + (j - 3)·N.
    u8* L = msg;
    u8* R = msg + COLS * PN;
    u8* Lm = L + (COLS - 1) * PN;
    u8* Rm = R + (COLS - 1) * PN;
    u8* L0 = R + COLS * PN;  // with PSOFT: L[0], for the soft output
    u32* ubits = tail;
    u32* xbits = tail + PUW;
    u32* ctl = tail + 2 * PUW;
    const u32* frozen = tables;
    const u32* info = tables + PUW;

    // L[m] = the channel; R[0] = 127 for a frozen bit, else 0, and R[1],
    // R[2] = 0, in registers. The columns 3..m − 1 of R are 0 too: the
    // first left pass does not read them, every other message is written
    // before it is read.
    for (int w = lane; w < PN / 4; w += PTPC) st(Lm + 4 * w, channel(llrs, unit, w));
    Oct r0[PQPT], r1[PQPT], r2[PQPT];
#pragma unroll
    for (int k = 0; k < PQPT; k++) {
        const int q = lane + k * PTPC;
        const u32 f = (frozen[q >> 2] >> ((q & 3) * 8)) & 0xffu;
        u32 lo = 0, hi = 0;
#pragma unroll
        for (int b = 0; b < 4; b++) {
            lo |= ((f >> b) & 1u) * (0x7fu << (8 * b));
            hi |= ((f >> (b + 4)) & 1u) * (0x7fu << (8 * b));
        }
        r0[k] = {lo, hi};
        r1[k] = r2[k] = {0u, 0u};
    }
    g.sync();

    u32 state = 0;  // the status word once stopped
    for (int t = 1; t <= PIMAX; t++) {
        STAGE_LOOP
        for (int s = PM - 1; s >= 3; s--) {
            stage<true>(L, R, s, lane, t == 1);
            g.sync();
        }
        // Whether this iteration ends with the decisions and the check.
        const bool check = PSTOP || t == PIMAX;
        if (t == 1)
            low_block<true>(L, R, L0, reinterpret_cast<u8*>(ubits), r0, r1, r2, lane, check);
        else
            low_block<false>(L, R, L0, reinterpret_cast<u8*>(ubits), r0, r1, r2, lane, check);
        g.sync();
        STAGE_LOOP
        for (int s = 3; s < PM; s++) {
            stage<false>(L, R, s, lane, false);
            // The last stage's R[m] is read only by the decisions: without
            // them the next left pass may start at once (its first stage
            // reads L[m] and R[m − 1], written before the last barrier).
            if (s < PM - 1 || check) g.sync();
        }
        if (check) {
#if PSTOP == 2
            const bool holds = crc_holds(ubits, info, info + PK, ctl, ctl + 2, lane, g);
            if (holds || t == PIMAX) {
                state = (u32)t | (holds ? 1u << 16 : 0u);
                break;
            }
#else
            u8* xb = reinterpret_cast<u8*>(xbits);
#pragma unroll
            for (int k = 0; k < PQPT; k++) {
                const int q = lane + k * PTPC;
                xb[q] = (u8)decide8(ld8(Lm + 8 * q), ld8(Rm + 8 * q));
            }
            g.sync();
            const bool holds = g_matrix_holds(ubits, xbits, frozen, ctl, lane, g);
            if ((PSTOP && holds) || t == PIMAX) {
                state = (u32)t | (holds ? 1u << 16 : 0u);
                break;
            }
#endif
        }
    }

    if (PSYS) transform(ubits, lane, g);
    u32* o = out + unit * POW;
#if PTPC >= 32
    // One information bit per lane, gathered into words by a vote.
    for (int base = 0; base < 32 * PKW; base += PTPC) {
        const int i = base + lane;
        u32 bit = 0;
        if (i < PK) {
            const u32 pos = info[i];
            bit = (ubits[pos >> 5] >> (pos & 31)) & 1u;
        }
        const u32 word = __ballot_sync(FULL_MASK, bit);
        if ((lane & 31) == 0 && (i >> 5) < PKW) o[i >> 5] = word;
    }
#else
    for (int w = lane; w < PKW; w += PTPC) {
        u32 v = 0;
        const int bits = PK - 32 * w < 32 ? PK - 32 * w : 32;
        for (int b = 0; b < bits; b++) {
            const u32 pos = info[32 * w + b];
            v |= ((ubits[pos >> 5] >> (pos & 31)) & 1u) << b;
        }
        o[w] = v;
    }
#endif
#if PSOFT
    {
        // The a-posteriori sums: of x (L[m] + R[m]) for a systematic code,
        // else of u, where R[0] is 0 at every information bit.
        const i8* l = reinterpret_cast<const i8*>(PSYS ? Lm : L0);
        const i8* r = reinterpret_cast<const i8*>(Rm);
        for (int w = lane; w < (PK + 1) / 2; w += PTPC) {
            u32 v = 0;
            for (int k = 0; k < 2 && 2 * w + k < PK; k++) {
                const u32 pos = info[2 * w + k];
                v |= (u32)(unsigned short)(short)((int)l[pos] + (PSYS ? (int)r[pos] : 0)) << (16 * k);
            }
            o[PKW + w] = v;
        }
    }
#endif
    if (lane == 0) status[unit] = state;
}
