// The polar family's encoder and channel on the device, for the device link
// simulator (src/gpu/polar/link.rs), each step the port of the host function
// named with it. A counted frame (a message) is PA information bits of the
// stream, message f bits f·PA .. (f+1)·PA (link.cuh's counter bits), sent in
// PC code blocks of PE bits each; block b = f·PC + r. A bare codeword is a
// message of one block, PA = PP its payload, PE = PN, no rate matching.
// - The block's PP payload bits: PLEAD zeros, then the message's bits from
//   r·PP − PLEAD on, zeros after its end (`NrPolar::blocks_info`: UCI filler
//   in front, DCI padding behind).
// - Its CRC of PCRC bits (`InfoCheck::attach`): the parity is PXOR XOR the
//   payload's column (`InfoCheck::payload_columns`) of every payload bit
//   that is 1; c = [payload | parity, p_0 the most significant], and c_i
//   goes to information bit cidx(i) (Π⁻¹ of the input interleaver, else i).
// - u (`PolarSpec::place`): information bit k at the k-th information
//   position (ascending, the decoder's tables), frozen bits 0, and each of
//   the PNPC parity-check bits at p the register's y0 there: the XOR of the
//   information bits u_i, i < p, i ≡ p (mod 5).
// - x = u·G by the m butterfly stages, as `codes/polar/transform.rs` does
//   them, and for a systematic code x = ((u·G) with the frozen positions
//   cleared)·G (`PolarSpec::encode_info`).
// - Bare codewords (PRM 0): sent LLR i of block b is coded bit x_i with
//   noise sample b·PN + i, as the host sends the coded stream.
// - Rate matched (PRM 1): sent bit i of block b is x_map(i) with noise
//   sample b·PE + i (`RateMatch::select`, the E bits of each block in turn);
//   the decoder's N LLRs are recovered as `RateMatch::recover` does: LLR j
//   is the sum, by `Llr::plus` in the order they were sent (i8 saturating at
//   ±127 each step, after each LLR's quantization), of the LLRs of the sent
//   bits that carry x_j; 0 where none does (punctured), and the certain zero
//   where shortening left x_j out.
// polar_link_messages then reads the decoded blocks back into messages
// (`NrPolar::message_of` of `InfoCheck::payload`) with each message's
// iterations and its check (every block's CRC passes, as
// `InfoCheck::syndrome_columns` tests it), as `NrDecoder` reports them.
//
// Parameters (-D): PN (N), PK (information bits K), PUW (⌈N/32⌉), PSYS
// (systematic), PLT (threads of a CTA, one CTA a block), LLR_F32; PP
// (payload bits of a block), PA (message bits), PC (blocks of a message),
// PLEAD; PCRC (CRC bits, 0 none) and PXOR; PNPC (parity-check bits); PRM
// (rate matched) and PE (bits each block is sent in); the offsets into the
// link's table (`lt`): T_COLS (PP payload columns), T_CIDX (PK), T_PC
// (PNPC positions), T_RSTART (PN + 1 starts into T_RIDX), T_RIDX (PE sent
// indices, by coded bit then ascending), T_SHORT (PUW words of shortened bits).
#include "link.cuh"
#include "polar.cuh"

using namespace link;

constexpr int PPW = (PP + 31) / 32;
constexpr int PAW = (PA + 31) / 32;

// x ← x·G on the PN bits packed in x[0 .. PUW). All threads call it.
__device__ void transform(u32* x) {
    for (int w = threadIdx.x; w < PUW; w += PLT) x[w] = polar_in_word(x[w], PN);
    __syncthreads();
    for (int h = 1; h < PUW; h *= 2) {
        polar_across_words(x, PUW, h, threadIdx.x, PLT);
        __syncthreads();
    }
}

__device__ __forceinline__ u32 bit_of(const u32* v, int i) { return (v[i >> 5] >> (i & 31)) & 1u; }

// An LLR as the decoder's input type takes it (`Llr::from_llrs`) and the
// sum of two (`Llr::plus`).
#if LLR_F32
__device__ __forceinline__ float as_llr(float l, float) { return l; }
__device__ __forceinline__ float plus(float a, float b) { return __fadd_rn(a, b); }
#else
__device__ __forceinline__ i8 as_llr(float l, float scale) { return quantize(l, scale); }
__device__ __forceinline__ i8 plus(i8 a, i8 b) {
    const int s = (int)a + (int)b;
    return (i8)(s < -127 ? -127 : s > 127 ? 127 : s);
}
#endif

// out + c·pitch: the PN LLRs of block first + c, for c < count. tables: the
// decoder's (u's frozen bits in PUW words, then the PK information
// positions, ascending); lt: the link's (above).
extern "C" __global__ void __launch_bounds__(PLT) polar_link_llrs(llr_t* __restrict__ out, unsigned long long pitch, u32 count, long long first,
                                                                const u32* __restrict__ info, long long info_first, const u32* __restrict__ tables,
                                                                const u32* __restrict__ lt, u32 k0, u32 k1, float sigma, float gain, float scale) {
    __shared__ u32 pb[PPW];
    __shared__ u32 x[PUW];
    __shared__ u32 parity;
#if PNPC
    __shared__ u32 pcv[PNPC];
#endif
    const u32 c = blockIdx.x;
    if (c >= count) return;
    const long long b = first + c;
    const long long f = b / PC;
    const int r = (int)(b % PC);
    // The payload, bit j of the block: message bit r·PP + j − PLEAD, if any.
    for (int w = threadIdx.x; w < PPW; w += PLT) {
        u32 word = 0;
        for (int t = 0; t < 32; t++) {
            const int q = r * PP + 32 * w + t - PLEAD;
            if (32 * w + t < PP && q >= 0 && q < PA) {
                const long long p = f * PA + q - info_first;
                word |= ((info[p >> 5] >> (p & 31)) & 1u) << t;
            }
        }
        pb[w] = word;
    }
    for (int w = threadIdx.x; w < PUW; w += PLT) x[w] = 0;
    if (threadIdx.x == 0) parity = 0;
    __syncthreads();
#if PCRC
    u32 acc = 0;
    for (int j = threadIdx.x; j < PP; j += PLT)
        if (bit_of(pb, j)) acc ^= __ldg(&lt[T_COLS + j]);
    if (acc) atomicXor(&parity, acc);
    __syncthreads();
    const u32 par = parity ^ PXOR;
#else
    const u32 par = 0;
#endif
    // c_i to information bit cidx(i), at its position in u.
    for (int i = threadIdx.x; i < PK; i += PLT) {
        const u32 v = i < PP ? bit_of(pb, i) : (par >> (PCRC - 1 - (i - PP))) & 1u;
        if (v) {
            const u32 p = __ldg(&tables[PUW + __ldg(&lt[T_CIDX + i])]);
            atomicOr(&x[p >> 5], 1u << (p & 31));
        }
    }
    __syncthreads();
#if PNPC
    // Every parity-check bit from the information bits alone, then set.
    for (int t = threadIdx.x; t < PNPC; t += PLT) {
        const int p = (int)__ldg(&lt[T_PC + t]);
        u32 v = 0;
        for (int i = p - 5; i >= 0; i -= 5) v ^= bit_of(x, i);
        pcv[t] = v;
    }
    __syncthreads();
    for (int t = threadIdx.x; t < PNPC; t += PLT) {
        const u32 p = __ldg(&lt[T_PC + t]);
        if (pcv[t]) atomicOr(&x[p >> 5], 1u << (p & 31));
    }
    __syncthreads();
#endif
    transform(x);
#if PSYS
    for (int w = threadIdx.x; w < PUW; w += PLT) x[w] &= ~__ldg(&tables[w]);
    __syncthreads();
    transform(x);
#endif
    llr_t* __restrict__ o = out + (unsigned long long)c * pitch;
#if PRM
    const long long g0 = b * PE;
    for (int j = threadIdx.x; j < PN; j += PLT) {
        llr_t acc = 0;
        if (bit_of(lt + T_SHORT, j)) {
            acc = LLR_CERTAIN_ZERO;
        } else {
            const u32 bit = bit_of(x, j);
            const u32 s1 = __ldg(&lt[T_RSTART + j + 1]);
            for (u32 s = __ldg(&lt[T_RSTART + j]); s < s1; s++) {
                const long long g = g0 + __ldg(&lt[T_RIDX + s]);
                acc = plus(acc, as_llr(channel_llr(bit, normal_of(g, Key{k0, k1}), sigma, gain), scale));
            }
        }
        o[j] = acc;
    }
#else
    send_llrs(o, b * PN, PN, PLT, Key{k0, k1}, sigma, gain, scale, [&](int i) { return bit_of(x, i); });
#endif
}

// The decoded blocks of `count` messages (block b's PK information bits in
// dec[b·words ..], status words as the decoder leaves them) back into the
// messages' PA bits, msgs[m·PAW ..], and meta[m]: the blocks' iterations
// summed | (every block's CRC passes) << 16. tables: the decoder's (after
// the positions, each information bit's syndrome column); lt: the link's.
extern "C" __global__ void polar_link_messages(const u32* __restrict__ dec, u32 words, const u32* __restrict__ status, u32 count,
                                               const u32* __restrict__ tables, const u32* __restrict__ lt, u32* __restrict__ msgs,
                                               u32* __restrict__ meta) {
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < (u64)count * PAW) {
        const u64 m = t / PAW;
        const int w = (int)(t % PAW);
        u32 word = 0;
        for (int s = 0; s < 32 && 32 * w + s < PA; s++) {
            const int p = 32 * w + s + PLEAD;
            const int ci = (int)__ldg(&lt[T_CIDX + p % PP]);
            word |= bit_of(dec + (m * PC + p / PP) * words, ci) << s;
        }
        msgs[t] = word;
    }
    if (t < count) {
        u32 iterations = 0, passes = 1;
        for (int r = 0; r < PC; r++) {
            const u64 blk = t * PC + r;
            iterations += status[blk] & 0xffffu;
            const u32* __restrict__ d = dec + blk * words;
            u32 syndrome = 0;
            for (int k = 0; k < PK; k++)
                if (bit_of(d, k)) syndrome ^= __ldg(&tables[PUW + PK + k]);
            passes &= syndrome == PXOR;
        }
        meta[t] = iterations | passes << 16;
    }
}

// What the host link's reports add up to, over the first `count` messages
// of a batch: out[0] += their iterations (meta bits 0..15), out[1] += the
// messages with errors (counts) whose check failed (meta bit 16 clear) when
// they have one (`checked`: the CRC's, or the G-matrix stop's on bare
// codewords without a CRC: detected errors). meta: the decoder's status
// words (bare codewords without a CRC) or polar_link_messages'. out must be
// zero before.
extern "C" __global__ void polar_link_reports(const u32* __restrict__ counts, const u32* __restrict__ meta, u32 count, u32 checked,
                                              u64* __restrict__ out) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 st = i < count ? meta[i] : 0u;
    u64 iterations = st & 0xffffu;
    u64 detected = (i < count && checked && counts[i] > 0 && ((st >> 16) & 1u) == 0) ? 1 : 0;
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        iterations += __shfl_down_sync(FULL_MASK, iterations, d);
        detected += __shfl_down_sync(FULL_MASK, detected, d);
    }
    if ((threadIdx.x & 31) == 0 && (iterations | detected)) {
        atomicAdd(&out[0], iterations);
        atomicAdd(&out[1], detected);
    }
}
