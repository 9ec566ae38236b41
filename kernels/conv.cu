// Tiled soft-decision Viterbi decoder: the paper's unified kernel (forward pass,
// survivors in shared memory, traceback in the same kernel), with one thread per
// tile so that the add-compare-select needs no exchange between threads.
//
// The model it reproduces bit for bit is `src/codes/conv/viterbi/scalar.rs`:
// - tile i of a work unit covers stages i·F .. i·F + V1 + F + V2 of the unit;
//   path metrics start equal;
// - new state j is entered from predecessors 2j and 2j+1 (mod S) on input
//   j >> (K−2); it keeps the even predecessor unless the odd one's candidate is
//   strictly greater;
// - subframe s (F0 stages) is traced back from the lowest-numbered state with the
//   largest metric at stage min(V1 + (s+1)·F0 + V2, STAGES) − 1.
//
// Register layout. A thread holds its S metrics as S/2 pairs. At "phase" d the
// pair in register q holds the states rotl(2q, d) and rotl(2q+1, d) (rotation of
// the B = K−1 state bits). One trellis stage maps phase d to phase d−1 (mod B)
// with no data movement: the two predecessors of a butterfly sit in the same half
// of two registers (d ≥ 1) or in the two halves of one register (d = 0). After B
// stages the layout is back where it started, so the stage loop is unrolled by a
// multiple of B and every index below is a compile-time constant.
//
// Metrics: for i8 LLRs, two signed 16-bit metrics packed in a 32-bit register,
// added and compared by Hopper's DPX instructions (VIADD.16x2, VIADDMNMX.S16x2);
// exact integer arithmetic, normalised every NORM stages (a common shift changes
// no decision). For f32 LLRs, two floats, added in the model's order, so that
// every rounding is the model's.
//
// Decisions. The decision of a new state is the sign of (even candidate − odd
// candidate). A sign-replicating byte permute gathers four signs into the four
// bytes of a word, and one LOP3 merges them into the stage's decision words. A
// decision therefore lands at a bit position x = sigma(p) fixed by its physical
// position p = 2q + h, and the traceback walks in those x coordinates, where one
// step back is "overwrite one bit of x with the decision": no rotation needed.
//
// Parameters (-D, set by the launcher): VK, VN, VG0..VG3 (generators, bit K−1
// taps the current input), VINV (bit g: output g sent inverted, as the
// trellis labels of the host carry it), VF, VV1, VV2, VF0, VGROUP, VNT (threads per block),
// VP, VPMASK, VPH0 (puncturing period, sent positions, period stage of a tile's
// first stage),
// VMINB (blocks per SM the register allocation must allow; 0: the compiler's
// choice), LLR_F32 (0: i8 LLRs, 1: f32 LLRs), VEC_LOAD (1: tiles start on 16-byte
// boundaries), DEC_GLOBAL (1: survivor ring in global instead of shared memory).
#include "common.cuh"

namespace vit {

constexpr int K = VK;
constexpr int N = VN;
constexpr int S = 1 << (K - 1);
constexpr int B = K - 1;
constexpr int NR = S / 2;
constexpr int HALF = NR / 2;               // gather partner distance in registers
constexpr int F = VF, V1 = VV1, V2 = VV2, F0 = VF0, GROUP = VGROUP, NT = VNT;
constexpr int STAGES = V1 + F + V2;
constexpr int NSUB = (F + F0 - 1) / F0;
constexpr int OUT_WORDS = (F + 31) / 32;    // output words per tile
constexpr int WORDS = S >= 32 ? S / 32 : 1; // decision words per stage

// Puncturing. The LLRs arrive as the puncturer left them: output j of stage t
// is present only when the pattern sends it, and an absent one is an erasure
// (LLR 0), put back here as the stage loads. Unpunctured streams are the
// period-1 pattern that sends everything. Every tile starts at period stage
// PH0, so where each LLR lies in a block of loads is a compile-time constant.
constexpr int P = VP;
constexpr unsigned long long PMASK = VPMASK;  // bit c·N + j: output j of period stage c is sent
constexpr int PH0 = VPH0;
__host__ __device__ constexpr bool sent(int t, int j) { return (PMASK >> (((PH0 + t) % P) * N + j)) & 1; }
// LLRs present in tile stages [0, t) and in outputs [0, j) of stage t.
__host__ __device__ constexpr int llr_index(int t, int j) {
    int c = 0;
    for (int s = 0; s < t; s++)
        for (int k = 0; k < N; k++) c += sent(s, k);
    for (int k = 0; k < j; k++) c += sent(t, k);
    return c;
}
constexpr int KEPT = llr_index(P, 0);             // LLRs per period
constexpr int PB = KEPT * (int)sizeof(llr_t);     // bytes per period
constexpr int TILE_BYTES = F / P * PB;            // from one tile's start to the next

constexpr int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }
constexpr int lcm(int a, int b) { return a / gcd(a, b) * b; }
// Loads: 16-byte vectors where a whole number of periods fills one in at most 8
// periods, else 4-byte words, so that the unrolled block stays short. A block
// of UNROLL stages is a whole number of periods and of loads. The launcher
// computes the same LOAD_BYTES to decide VEC_LOAD.
constexpr int LOAD_BYTES = lcm(PB, 16) / PB <= 8 ? 16 : 4;
constexpr int CHUNK = VEC_LOAD ? P * (lcm(PB, LOAD_BYTES) / PB) : P;
constexpr int UNROLL = lcm(B, CHUNK);
constexpr int BLOCKS = (STAGES + UNROLL - 1) / UNROLL;
constexpr int BLOCK_LLRS = UNROLL / P * KEPT;
[[maybe_unused]] constexpr int LOAD_WORDS = VEC_LOAD ? BLOCK_LLRS * (int)sizeof(llr_t) / 4 : 1;
// Survivor ring: stage t lives in slot t mod WIN. A traceback spans at most
// F0 + V2 stages; rounding up to UNROLL makes every slot offset static.
constexpr int WIN = (F0 + V2 + UNROLL - 1) / UNROLL * UNROLL;
constexpr int norm_period_le(int u, int d) { return u % d == 0 ? d : norm_period_le(u, d - 1); }
// i16 metrics are normalised every NORM stages, NORM the largest divisor of
// UNROLL up to 16, so that normalisation points repeat identically in every
// unrolled block. Between two of them the metric spread stays below
// 2·(K−1)·N·128 + 16·N·128 < 2^15.
constexpr int norm_period(int u) { return u <= 16 ? u : norm_period_le(u, 16); }
[[maybe_unused]] constexpr int NORM = norm_period(UNROLL);
constexpr int RING_BLOCKS = WIN / UNROLL;

__host__ __device__ constexpr int gen(int i) {
    return i == 0 ? VG0 : i == 1 ? VG1 : i == 2 ? VG2 : VG3;
}
__host__ __device__ constexpr int parity(int x) { return x == 0 ? 0 : (x & 1) ^ parity(x >> 1); }
// Branch label (bit g = output of generator g) leaving state s on input u.
__host__ __device__ constexpr int label(int s, int u) {
    int reg = (u << (K - 1)) | s, l = 0;
    for (int g = 0; g < N; g++) l |= parity(reg & gen(g)) << g;
    return l ^ VINV;
}
__host__ __device__ constexpr int rotl(int p, int d) {
    return d == 0 ? p : ((p << d) | (p >> (B - d))) & (S - 1);
}
__host__ __device__ constexpr int rotr(int s, int d) { return rotl(s, (B - d) % B); }
// State held at physical position p (= 2·register + half) in phase d.
__host__ __device__ constexpr int state_at(int p, int d) { return rotl(p, d); }
__host__ __device__ constexpr int phys(int s, int d) { return rotr(s, d); }
// Bit position in a stage's decision words of physical position p.
__host__ __device__ constexpr int sigma(int p) {
    int h = p & 1, q = p >> 1;
    int hq = q / HALF, lq = q % HALF;
    return 32 * (lq >> 3) + 8 * (2 * hq + h) + (lq & 7);
}
// Where physical bit j of p lands in sigma(p).
__host__ __device__ constexpr int sigma_bit(int j) {
    int x = sigma(1 << j) ^ sigma(0);
    int b = 0;
    while ((1 << b) != x) b++;
    return b;
}
// Input (output) phase of stage t: a block of UNROLL stages starts at phase B−1.
__host__ __device__ constexpr int phase_in(int t) { return ((B - 1 - t) % B + B) % B; }
__host__ __device__ constexpr int phase_out(int t) { return phase_in(t + 1); }
// Stage whose best state starts the traceback of subframe s.
__host__ __device__ constexpr int tb_start(int s) {
    return (V1 + (s + 1) * F0 + V2 < STAGES ? V1 + (s + 1) * F0 + V2 : STAGES) - 1;
}
// Bit i set: a traceback may start after position i of an unrolled block.
__host__ __device__ constexpr unsigned long long tb_mask() {
    unsigned long long m = 0;
    for (int s = 0; s < NSUB; s++) m |= 1ull << (tb_start(s) % UNROLL);
    return m;
}
// sigma_bit((t + 1) % B) for every residue, 3 bits each: the x-coordinate bit
// that holds a state's newest input bit after stage t.
__host__ __device__ constexpr u32 pos_table() {
    u32 v = 0;
    for (int j = 0; j < B; j++) v |= (u32)sigma_bit(j) << (3 * j);
    return v;
}

// The layout claims above, checked when the kernel is compiled: each stage
// writes every register exactly once, predecessors pair up as the model says,
// and sigma is one-to-one.
__host__ __device__ constexpr bool layout_ok() {
    for (int d = 0; d < B; d++) {
        unsigned long long hit[4] = {0, 0, 0, 0};
        for (int r = 0; r < NR; r++) {
            int q[2] = {0, 0};
            if (d == 0) {
                if (phys(r, B - 1) != 2 * r || phys(r + S / 2, B - 1) != 2 * r + 1) return false;
                hit[r >> 6] |= 1ull << (r & 63);
                continue;
            }
            const int rb = B - d - 1;
            if ((r >> rb) & 1) continue;
            const int r2 = r | (1 << rb);
            const int e0 = state_at(2 * r, d), e1 = state_at(2 * r + 1, d);
            if (e0 & 1 || state_at(2 * r2, d) != e0 + 1 || state_at(2 * r2 + 1, d) != e1 + 1) return false;
            const int i0 = e0 >> 1, i1 = e1 >> 1;
            q[0] = phys(i0, d - 1);
            q[1] = phys(i0 + S / 2, d - 1);
            if (q[0] & 1 || q[1] & 1) return false;
            if (phys(i1, d - 1) != q[0] + 1 || phys(i1 + S / 2, d - 1) != q[1] + 1) return false;
            for (int k = 0; k < 2; k++) {
                const int qq = q[k] >> 1;
                if (hit[qq >> 6] >> (qq & 63) & 1) return false;
                hit[qq >> 6] |= 1ull << (qq & 63);
            }
        }
        for (int r = 0; r < NR; r++)
            if (!(hit[r >> 6] >> (r & 63) & 1)) return false;
    }
    unsigned long long seen[4] = {0, 0, 0, 0};
    for (int p = 0; p < S; p++) {
        const int x = sigma(p);
        if (x >= 32 * WORDS || seen[x >> 6] >> (x & 63) & 1) return false;
        seen[x >> 6] |= 1ull << (x & 63);
        for (int j = 0; j < B; j++)
            if (((x >> sigma_bit(j)) & 1) != ((p >> j) & 1)) return false;
    }
    return true;
}

static_assert(K >= 3 && K <= 9, "K out of range");
static_assert(F % P == 0, "tiles must start on a puncturing period boundary");
static_assert(P * N <= 64 && KEPT > 0, "puncturing pattern out of range");
static_assert(N >= 2 && N <= 4, "n out of range");
static_assert(WIN >= F0 + V2, "survivor ring too short");
static_assert(UNROLL <= 64, "unrolled block too long for the traceback mask");
static_assert(layout_ok(), "register layout self-check failed");
static_assert(LLR_F32 || 2 * (K - 1) * N * 128 + (NORM + 1) * N * 128 < 32768, "i16 metrics could overflow");

// Compile-time loop: calls f(IC<I>{}) for I in [I0, I1), so that every index
// derived from I is a constant (a `#pragma unroll` of a body this large is not
// reliably unrolled, and index arithmetic left to the
// optimiser makes compiles take minutes).
template <int V> struct IC { static constexpr int value = V; };
// Halving the range keeps the instantiation depth logarithmic (S = 256 states
// would exceed the compiler's recursion limit one by one).
template <int I0, int I1, class Fn>
__device__ __forceinline__ void static_for(Fn&& f) {
    if constexpr (I1 - I0 == 1) {
        f(IC<I0>{});
    } else if constexpr (I1 - I0 > 1) {
        constexpr int M = I0 + (I1 - I0) / 2;
        static_for<I0, M>(f);
        static_for<M, I1>(f);
    }
}

// ---- metric pairs -----------------------------------------------------------

#if LLR_F32
struct pair_t { float lo, hi; };
__device__ __forceinline__ pair_t mk(float a, float b) { return {a, b}; }
__device__ __forceinline__ pair_t zero_pair() { return {0.0f, 0.0f}; }
// New metrics and decision signs of one half-butterfly pair, in the model's
// rounding: x0 = pm_even + bm_even, x1 = pm_odd + bm_odd, keep the odd one only
// if it is strictly greater.
__device__ __forceinline__ void acs(pair_t e, pair_t pe, pair_t o, pair_t po, pair_t& n, pair_t& dsign) {
    float x0l = e.lo + pe.lo, x1l = o.lo + po.lo;
    float x0h = e.hi + pe.hi, x1h = o.hi + po.hi;
    n.lo = fmaxf(x0l, x1l);
    n.hi = fmaxf(x0h, x1h);
    // Metrics are never −0 and exact (no flush to zero), so x0 − x1 is negative
    // exactly when x1 > x0.
    dsign.lo = x0l - x1l;
    dsign.hi = x0h - x1h;
}
__device__ __forceinline__ pair_t bcast_lo(pair_t a) { return {a.lo, a.lo}; }
__device__ __forceinline__ pair_t bcast_hi(pair_t a) { return {a.hi, a.hi}; }
// 0xff in byte k when sign k of (a.lo, a.hi, b.lo, b.hi) is set.
__device__ __forceinline__ u32 sign_bytes(pair_t a, pair_t b) {
    // Selector nibble 0xb (0xf): the sign of byte 3 (7), i.e. of the first
    // (second) float, replicated over the output byte.
    u32 lo, hi, r;
    asm("prmt.b32 %0, %1, %2, 0x00fb;" : "=r"(lo) : "r"(__float_as_uint(a.lo)), "r"(__float_as_uint(a.hi)));
    asm("prmt.b32 %0, %1, %2, 0x00fb;" : "=r"(hi) : "r"(__float_as_uint(b.lo)), "r"(__float_as_uint(b.hi)));
    asm("prmt.b32 %0, %1, %2, 0x5410;" : "=r"(r) : "r"(lo), "r"(hi));
    return r;
}
#else
typedef u32 pair_t;
__device__ __forceinline__ pair_t mk(int a, int b) { return __byte_perm((u32)a, (u32)b, 0x5410); }
__device__ __forceinline__ pair_t zero_pair() { return 0u; }
__device__ __forceinline__ void acs(pair_t e, pair_t pe, pair_t o, pair_t po, pair_t& n, pair_t& dsign) {
    // Exact 16-bit arithmetic: x0 − x1 = (e − o) + (pe − po); the compiler shares
    // e − o between the two outputs of a butterfly pair.
    n = __viaddmax_s16x2(e, pe, __vadd2(o, po));
    dsign = __vadd2(__vsub2(e, o), __vsub2(pe, po));
}
__device__ __forceinline__ pair_t bcast_lo(pair_t a) { return __byte_perm(a, 0, 0x1010); }
__device__ __forceinline__ pair_t bcast_hi(pair_t a) { return __byte_perm(a, 0, 0x3232); }
__device__ __forceinline__ u32 sign_bytes(pair_t a, pair_t b) {
    u32 r;
    // Bytes 1 and 3 of each word carry the signs of its halves; selector nibbles
    // with bit 3 set replicate the sign bit over the byte.
    asm("prmt.b32 %0, %1, %2, 0xfdb9;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
#endif

// ---- one stage ----------------------------------------------------------------

// Branch metric of every label: sum over generators, in generator order, of
// +llr (label bit 0) or −llr (label bit 1).
struct Bm {
#if LLR_F32
    float v[1 << N];
#else
    int v[1 << N];
#endif
};

__device__ __forceinline__ Bm branch_metrics(const llr_t* l) {
    Bm bm;
#pragma unroll
    for (int lab = 0; lab < (1 << N); lab++) {
        auto acc = (lab & 1) ? -l[0] : l[0];
#pragma unroll
        for (int i = 1; i < N; i++) acc = acc + (((lab >> i) & 1) ? -l[i] : l[i]);
        bm.v[lab] = acc;
    }
    return bm;
}

// Add-compare-select of stage with input phase D; decisions merged into dec.
template <int D>
__device__ __forceinline__ void stage(pair_t (&pm)[NR], const Bm& bm, u32 (&dec)[WORDS]) {
    pair_t nw[NR], ds[NR];
    if constexpr (D >= 1) {
        constexpr int rb = B - D - 1;  // register bit telling even from odd predecessor
        static_for<0, NR / 2>([&](auto jc) {
            constexpr int j = decltype(jc)::value;
            // The j-th register with bit rb clear, and its odd partner.
            constexpr int r = ((j >> rb) << (rb + 1)) | (j & ((1 << rb) - 1));
            constexpr int r2 = r | (1 << rb);
            constexpr int e0 = state_at(2 * r, D), e1 = state_at(2 * r + 1, D);
            constexpr int q0 = phys(e0 >> 1, D - 1) >> 1, q1 = phys((e0 >> 1) + S / 2, D - 1) >> 1;
            const pair_t pe0 = mk(bm.v[label(e0, 0)], bm.v[label(e1, 0)]);
            const pair_t po0 = mk(bm.v[label(e0 + 1, 0)], bm.v[label(e1 + 1, 0)]);
            const pair_t pe1 = mk(bm.v[label(e0, 1)], bm.v[label(e1, 1)]);
            const pair_t po1 = mk(bm.v[label(e0 + 1, 1)], bm.v[label(e1 + 1, 1)]);
            acs(pm[r], pe0, pm[r2], po0, nw[q0], ds[q0]);
            acs(pm[r], pe1, pm[r2], po1, nw[q1], ds[q1]);
        });
    } else {
        static_for<0, NR>([&](auto rc) {
            constexpr int r = decltype(rc)::value;
            constexpr int e = 2 * r;  // phase 0: the pair (2r, 2r+1) is butterfly r
            const pair_t pe = mk(bm.v[label(e, 0)], bm.v[label(e, 1)]);
            const pair_t po = mk(bm.v[label(e + 1, 0)], bm.v[label(e + 1, 1)]);
            acs(bcast_lo(pm[r]), pe, bcast_hi(pm[r]), po, nw[r], ds[r]);
        });
    }
#pragma unroll
    for (int w = 0; w < WORDS; w++) dec[w] = 0;
#pragma unroll
    for (int q = 0; q < HALF; q++) dec[q >> 3] |= sign_bytes(ds[q], ds[q + HALF]) & (0x01010101u << (q & 7));
#pragma unroll
    for (int r = 0; r < NR; r++) pm[r] = nw[r];
}

// ---- best state and traceback -------------------------------------------------

// x coordinate of the lowest-numbered state holding the largest metric, with
// the registers in output phase D.
template <int D>
__device__ __forceinline__ int best_x(const pair_t (&pm)[NR]) {
#if LLR_F32
    float m = pm[0].lo;
#pragma unroll
    for (int r = 0; r < NR; r++) m = fmaxf(m, fmaxf(pm[r].lo, pm[r].hi));
    int bx = 0;
    // Visit states from the highest number down, so the last hit is the lowest.
    static_for<0, S>([&](auto kc) {
        constexpr int p = phys(S - 1 - decltype(kc)::value, D);
        const float v = (p & 1) ? pm[p >> 1].hi : pm[p >> 1].lo;
        if (v == m) bx = sigma(p);
    });
    return bx;
#else
    // Key: metric in the top 16 bits, then (S−1−state) so that among equal
    // metrics the lowest state wins a signed max, then x in the low byte.
    int best = -2147483647 - 1;
    static_for<0, NR>([&](auto rc) {
        constexpr int r = decltype(rc)::value;
        constexpr int tl = ((S - 1 - state_at(2 * r, D)) << 8) | sigma(2 * r);
        constexpr int th = ((S - 1 - state_at(2 * r + 1, D)) << 8) | sigma(2 * r + 1);
        const int kl = (int)(pm[r] << 16) | tl;
        const int kh = (int)(pm[r] & 0xffff0000u) | th;
        best = max(best, max(kl, kh));
    });
    return best & 0xff;
#endif
}

struct Ring {
    u32* base;  // this thread's word 0 of slot 0
    __device__ __forceinline__ u32* at(int slot, int w) const { return base + (slot * WORDS + w) * NT; }
};

// Trace back from decision-coordinate x at stage `from` down to stage `to`,
// writing the bits of stages [keep_lo, from] ∩ [to, keep_hi) packed into the
// tile's words `out`, stage keep_lo at bit `bit0`, least significant bit first.
// Bits travel packed so that the copy back and the host read 32 times fewer
// bytes than one byte per bit would. Subframes are traced in increasing order,
// so a word a previous subframe began already holds its lower bits.
__device__ __noinline__ void traceback(Ring ring, int x, int from, int keep_lo, int keep_hi, u32* out, int bit0) {
    int slot = from % WIN;
    u32 word = 0;
    for (int t = from; t >= keep_lo; t--) {
        const u32 dw = *ring.at(slot, x >> 5);
        const int d = (dw >> (x & 31)) & 1;
        constexpr u32 POS = pos_table();
        const int pos = (POS >> (3 * ((t + 1) % B))) & 7;
        if (t < keep_hi) {
            const int j = bit0 + t - keep_lo;
            word |= ((u32)(x >> pos) & 1u) << (j & 31);
            if ((j & 31) == 0 || t == keep_lo) {
                u32* w = out + (j >> 5);
                *w = (j & 31) ? (*w | word) : word;
                word = 0;
            }
        }
        x = (x & ~(1 << pos)) | (d << pos);
        slot = slot == 0 ? WIN - 1 : slot - 1;
    }
}

}  // namespace vit

using namespace vit;

#if !DEC_GLOBAL
extern __shared__ u32 smem_ring[];
#endif

// One thread per tile. llr: work units at `unit_pitch` bytes, each the sent LLRs
// of GROUP·F + V1 + V2 stages; out: OUT_WORDS words per tile (F bits, least
// significant first, the last word's spare bits zero), tiles in order;
// dec_global: survivor rings when DEC_GLOBAL (WIN·WORDS words a tile).
#if VMINB > 0
#define VBOUNDS __launch_bounds__(VNT, VMINB)
#else
#define VBOUNDS __launch_bounds__(VNT)
#endif
extern "C" __global__ void VBOUNDS viterbi_tiles(const u8* __restrict__ llr, unsigned long long unit_pitch,
                                                              u32 tiles, u32* __restrict__ out, u32* __restrict__ dec_global) {
    const u32 tile = blockIdx.x * NT + threadIdx.x;
    if (tile >= tiles) return;
    const u32 unit = tile / GROUP, k = tile % GROUP;
    const u8* src = llr + unit * unit_pitch + (unsigned long long)k * TILE_BYTES;
    u32* dst = out + (unsigned long long)tile * OUT_WORDS;
#if DEC_GLOBAL
    Ring ring{dec_global + (unsigned long long)blockIdx.x * NT * WIN * WORDS + threadIdx.x};
#else
    Ring ring{smem_ring + threadIdx.x};
#endif

    pair_t pm[NR];
#pragma unroll
    for (int r = 0; r < NR; r++) pm[r] = zero_pair();

    // Next traceback: subframe `sub` starts at stage tb_next.
    int sub = 0, tb_next = tb_start(0);

#if VEC_LOAD
    u32 cur[LOAD_WORDS], nxt[LOAD_WORDS];
    auto load = [&](u32 (&w)[LOAD_WORDS], int blk) {
        const u8* at = src + (unsigned long long)blk * BLOCK_LLRS * sizeof(llr_t);
        if constexpr (LOAD_BYTES == 16) {
#pragma unroll
            for (int j = 0; j < LOAD_WORDS / 4; j++) {
                const uint4 v = __ldg(reinterpret_cast<const uint4*>(at) + j);
                w[4 * j] = v.x; w[4 * j + 1] = v.y; w[4 * j + 2] = v.z; w[4 * j + 3] = v.w;
            }
        } else {
#pragma unroll
            for (int j = 0; j < LOAD_WORDS; j++) w[j] = __ldg(reinterpret_cast<const u32*>(at) + j);
        }
    };
    load(cur, 0);
#endif

    for (int blk = 0; blk < BLOCKS; blk++) {
#if VEC_LOAD
        if (blk + 1 < BLOCKS) load(nxt, blk + 1);
#endif
        const int ring_base = (blk % RING_BLOCKS) * UNROLL;
        bool done = false;
        static_for<0, UNROLL>([&](auto ic) {
            constexpr int i = decltype(ic)::value;
            if (done) return;
            llr_t l[N];
            static_for<0, N>([&](auto jc) {
                constexpr int j = decltype(jc)::value;
                if constexpr (!sent(i, j)) {
                    l[j] = 0;
                } else {
                    constexpr int at = llr_index(i, j);
#if VEC_LOAD
                    constexpr int byte = at * (int)sizeof(llr_t);
#if LLR_F32
                    l[j] = __uint_as_float(cur[byte >> 2]);
#else
                    l[j] = (i8)(cur[byte >> 2] >> (8 * (byte & 3)));
#endif
#else
                    l[j] = reinterpret_cast<const llr_t*>(src)[blk * BLOCK_LLRS + at];
#endif
                }
            });
            const Bm bm = branch_metrics(l);
            u32 dec[WORDS];
            // Stage blk·UNROLL + i has the phase of stage i (UNROLL is a multiple of B).
            stage<phase_in(i)>(pm, bm, dec);
#pragma unroll
            for (int w = 0; w < WORDS; w++) *ring.at(ring_base + i, w) = dec[w];
#if !LLR_F32
            if constexpr (i % NORM == NORM - 1) {
                const pair_t z = bcast_lo(pm[0]);
#pragma unroll
                for (int r = 0; r < NR; r++) pm[r] = __vsub2(pm[r], z);
            }
#endif
            const int t = blk * UNROLL + i;
            if constexpr ((tb_mask() >> i) & 1) {
                if (t == tb_next) {
                    const int lo = V1 + sub * F0;
                    const int hi = lo + F0 < V1 + F ? lo + F0 : V1 + F;
                    traceback(ring, best_x<phase_out(i)>(pm), t, lo, hi, dst, sub * F0);
                    sub++;
                    tb_next = sub < NSUB ? tb_start(sub) : -1;
                }
            }
            if constexpr (i == (STAGES - 1) % UNROLL) {
                if (blk == BLOCKS - 1) done = true;
            }
        });
        if (done) return;
#if VEC_LOAD
#pragma unroll
        for (int j = 0; j < LOAD_WORDS; j++) cur[j] = nxt[j];
#endif
    }
}
