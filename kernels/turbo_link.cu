// The turbo family's encoder and channel on the device, for the device link
// simulator (src/gpu/turbo/link.rs): code block b of the stream holds
// information bits b·TK .. (b+1)·TK (link.cuh's counter bits); it is encoded
// as `codes/turbo/encoder.rs`'s `encode_block` does (the systematic stream,
// the two constituent RSC encoders, the second over the interleaved bits,
// their tails at TTAILPOS, input then parity per tail stage, the first
// encoder's stages first), and sent LLR i of the block is coded bit i with
// noise sample b·TN + i, as the host sends the coded stream.
//
// Parameters (-D): TK, TM (memory), TS (states), TN (3·TK + 4·TM), TS1, TS2
// (starts of the parity streams), TNEXT, TPAR (2·TS entries: state 2s + u),
// TTAILIN (TS entries), TTAILPOS (4·TM entries), TZERORUN (TS entries: the
// state after CL zero inputs), NCH (chunks of the parallel encoder), LLR_F32.
#include "link.cuh"

using namespace link;

__constant__ u8 rsc_next[2 * TS] = {TNEXT};
__constant__ u8 rsc_par[2 * TS] = {TPAR};
__constant__ u8 rsc_tail[TS] = {TTAILIN};
__constant__ u32 tail_pos[4 * TM] = {TTAILPOS};

constexpr int UW = (TK + 31) / 32;
constexpr int CW = (TN + 31) / 32;
constexpr int LINK_NT = 256;

__device__ __forceinline__ void set_bit(u32* words, int i) { atomicOr(&words[i >> 5], 1u << (i & 31)); }

// The constituent encoders run in NCH chunks of CL inputs each, one thread a
// chunk: the code is linear over GF(2), so the state after a chunk is the
// state its inputs give from 0, XORed with where CL zero inputs take the
// state it started from (rsc_zero_run); one thread chains the chunks' starts,
// then every thread encodes its chunk again from its start. NCH = 1 (set by
// the launcher for a trellis that is not linear) is the serial encoder.
#ifndef NCH
#define NCH 64
#endif
constexpr int CL = (TK + NCH - 1) / NCH;
__constant__ u8 rsc_zero_run[TS] = {TZERORUN};

// Encoder e's chunk j: inputs at(i) for i in its chunk, from state s; with
// `write`, parities at start + i and, for the last chunk, the tail stages.
// Returns the state after the chunk.
template <class At>
__device__ int rsc_chunk(const u32* ub, u32* cb, int j, int s, bool write, int start, int tail_first, At at) {
    const int lo = j * CL, hi = min(TK, lo + CL);
    for (int i = lo; i < hi; i++) {
        const int k = at(i);
        const int u = (ub[k >> 5] >> (k & 31)) & 1;
        if (write && rsc_par[2 * s + u]) set_bit(cb, start + i);
        s = rsc_next[2 * s + u];
    }
    if (write && lo < TK && hi == TK) {
        for (int t = 0; t < TM; t++) {
            const int u = rsc_tail[s];
            if (u) set_bit(cb, tail_pos[2 * (tail_first + t)]);
            if (rsc_par[2 * s + u]) set_bit(cb, tail_pos[2 * (tail_first + t) + 1]);
            s = rsc_next[2 * s + u];
        }
    }
    return s;
}

// Both constituent encoders of the block in ub into cb: threads e·NCH + j
// (e = 0 natural order, 1 interleaved) run chunk j. All threads call it.
__device__ void encode(const u32* ub, u32* cb, const u32* __restrict__ perm) {
    __shared__ u8 chunk_state[2][NCH];
    const int e = threadIdx.x / NCH, j = threadIdx.x % NCH;
    const bool mine = threadIdx.x < 2 * NCH;
    auto natural = [](int i) { return i; };
    auto interleaved = [&](int i) { return (int)__ldg(&perm[i]); };
    if (mine) chunk_state[e][j] = (u8)(e == 0 ? rsc_chunk(ub, cb, j, 0, false, TS1, 0, natural) : rsc_chunk(ub, cb, j, 0, false, TS2, TM, interleaved));
    __syncthreads();
    if (mine && j == 0) {
        int st = 0;
        for (int c = 0; c < NCH; c++) {
            const int from_zero = chunk_state[e][c];
            chunk_state[e][c] = (u8)st;
            st = rsc_zero_run[st] ^ from_zero;
        }
    }
    __syncthreads();
    if (mine) {
        if (e == 0) rsc_chunk(ub, cb, j, chunk_state[0][j], true, TS1, 0, natural);
        else rsc_chunk(ub, cb, j, chunk_state[1][j], true, TS2, TM, interleaved);
    }
}

// out + blk·pitch: the TN LLRs of block first_block + blk, for blk < blocks.
extern "C" __global__ void __launch_bounds__(LINK_NT) turbo_link_llrs(llr_t* __restrict__ out, unsigned long long pitch, u32 blocks,
                                                                    long long first_block, const u32* __restrict__ info, long long info_first,
                                                                    const u32* __restrict__ perm, u32 k0, u32 k1, float sigma, float gain,
                                                                    float scale) {
    __shared__ u32 ub[UW + 1];
    __shared__ u32 cb[CW + 1];
    const u32 blk = blockIdx.x;
    if (blk >= blocks) return;
    const long long b = first_block + blk;
    const long long pos = b * TK - info_first;
    for (int w = threadIdx.x; w <= UW; w += LINK_NT) {
        const long long at = (pos >> 5) + w;
        ub[w] = __funnelshift_r(info[at], info[at + 1], (u32)(pos & 31));
    }
    for (int w = threadIdx.x; w <= CW; w += LINK_NT) cb[w] = 0;
    __syncthreads();
    // The systematic stream is the block's bits (stream 0 starts at 0).
    for (int w = threadIdx.x; w < UW; w += LINK_NT) {
        const u32 keep = (32 * (w + 1) <= TK) ? 0xffffffffu : ((1u << (TK & 31)) - 1u);
        if (ub[w] & keep) atomicOr(&cb[w], ub[w] & keep);
    }
    encode(ub, cb, perm);
    __syncthreads();
    send_llrs(out + (unsigned long long)blk * pitch, b * TN, TN, LINK_NT, Key{k0, k1}, sigma, gain, scale, [&](int i) { return (cb[i >> 5] >> (i & 31)) & 1u; });
}
