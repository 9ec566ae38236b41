// The family-independent kernels of the device link simulator: information
// bits by counter, the comparison of decoded bits with them as error counts
// per frame, and the sum of those counts that the host reads instead of
// every frame's (link.cuh has the recipes). A family adds only its encoder and
// channel kernel (`kernels/<family>_link.cu`) between these and its decoder.
#include "link.cuh"

using namespace link;

// words[i] = information word first_word + i (bits 32·(first_word + i) ..);
// words before the stream (negative) are zero: the encoder's register is
// clear before the first bit.
extern "C" __global__ void link_bits(u32* __restrict__ words, long long first_word, u32 n, u32 k0, u32 k1) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const long long w = first_word + i;
    if (w < 0) {
        words[i] = 0;
        return;
    }
    const uint4 x = philox((u64)w >> 2, Key{k0, k1});
    const u32 j = (u32)w & 3u;
    words[i] = j == 0 ? x.x : j == 1 ? x.y : j == 2 ? x.z : x.w;
}

// Decoded tiles against the information words: tile t holds `f` bits from
// stream position first_bit + t·f in `out_words` words (least significant
// first); bits in [a, b) are compared with `info` (whose bit 0 is position
// info_first, a multiple of 32) and the differences added to counts[frame −
// a / frame_bits] for frames of frame_bits bits from position 0.
extern "C" __global__ void link_count(const u32* __restrict__ dec, u32 tiles, u32 f, u32 out_words, long long first_bit,
                                      const u32* __restrict__ info, long long info_first, long long a, long long b,
                                      long long frame_bits, u32* __restrict__ counts) {
    const u64 idx = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (u64)tiles * out_words) return;
    const u32 t = (u32)(idx / out_words), w = (u32)(idx % out_words);
    const long long s = first_bit + (long long)t * f + 32ll * w;
    const int nb = min(32, (int)(f - 32 * w));
    const long long lo = max(s, a), hi = min(s + nb, b);
    if (lo >= hi) return;
    const long long pos = s - info_first;
    const u32 r = __funnelshift_r(info[pos >> 5], info[(pos >> 5) + 1], (u32)(pos & 31));
    const u32 x = dec[idx] ^ r;
    if (x == 0) return;
    const long long frame0 = a / frame_bits;
    for (long long fr = lo / frame_bits; fr * frame_bits < hi; fr++) {
        const long long from = max(lo, fr * frame_bits) - s, to = min(hi, (fr + 1) * frame_bits) - s;
        const u32 mask = (to - from == 32 ? 0xffffffffu : ((1u << (to - from)) - 1u)) << from;
        const int e = __popc(x & mask);
        if (e) atomicAdd(&counts[fr - frame0], (u32)e);
    }
}

// The sum of counts[0 .. n): out[0] += errors and out[1] += frames with an
// error among counts[1 .. n − 1); out[2], out[3] = counts[0], counts[n − 1].
// out must be zero before.
extern "C" __global__ void link_summary(const u32* __restrict__ counts, u32 n, u64* __restrict__ out) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 e = (i >= 1 && i + 1 < n) ? counts[i] : 0u;
    u64 sum = e, frames = e > 0;
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        sum += __shfl_down_sync(FULL_MASK, sum, d);
        frames += __shfl_down_sync(FULL_MASK, frames, d);
    }
    if ((threadIdx.x & 31) == 0 && (sum | frames)) {
        atomicAdd(&out[0], sum);
        atomicAdd(&out[1], frames);
    }
    if (i == 0) {
        out[2] = counts[0];
        out[3] = counts[n - 1];
    }
}

// z[j] = normal of sample first + j: the device's noise, for the tests that
// hold it against the host's bit for bit.
extern "C" __global__ void link_normals(float* __restrict__ z, u64 first, u32 n, u32 k0, u32 k1) {
    const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    const u64 i = first + j;
    const float4 v = normals(16 * (i >> 6) + (i & 15), Key{k0, k1});
    z[j] = row(v, (int)((i >> 4) & 3));
}

// The LLRs of BPSK over AWGN of channel bits bits[0 .. n), bit j at stream
// position first + j, as `BpskAwgn::transmit_into` sends them: thread t
// draws block 16·g + l of the recipe (g = first / 64 + t / 16, l = t mod 16)
// and writes those of its four rows' samples 64·g + 16·row + l that lie in
// the call (positions wrap at 2^64 as the host's do). *bad ends as the least
// index of a bit that is not 0 or 1 (it must be all ones before).
template <typename T, typename Put>
__device__ __forceinline__ void bpsk_awgn(const u8* __restrict__ bits, T* __restrict__ out, u64* bad, u64 first, u64 n, Key key, float sigma, float gain, Put put) {
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 g = (first >> 6) + (t >> 4), l = t & 15;
    const u64 j0 = 64 * g + l - first;
    bool any = false;
#pragma unroll
    for (int r = 0; r < 4; r++) any |= j0 + 16 * (u64)r < n;
    if (!any) return;
    const float4 z = normals(16 * g + l, key);
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const u64 j = j0 + 16 * (u64)r;
        if (j >= n) continue;
        const u8 b = bits[j];
        if (b > 1) atomicMin(bad, j);
        out[j] = put(channel_llr(b, row(z, r), sigma, gain));
    }
}

extern "C" __global__ void link_bpsk_awgn_f32(const u8* __restrict__ bits, float* __restrict__ out, u64* bad, u64 first, u64 n, u32 k0, u32 k1, float sigma, float gain, float scale) {
    bpsk_awgn(bits, out, bad, first, n, Key{k0, k1}, sigma, gain, [](float llr) { return llr; });
}

extern "C" __global__ void link_bpsk_awgn_i8(const u8* __restrict__ bits, i8* __restrict__ out, u64* bad, u64 first, u64 n, u32 k0, u32 k1, float sigma, float gain, float scale) {
    bpsk_awgn(bits, out, bad, first, n, Key{k0, k1}, sigma, gain, [scale](float llr) { return quantize(llr, scale); });
}
