// What the polar kernels share: the butterflies of x·G (G = F^⊗m) on the bits
// of a codeword packed 32 per word, least significant first (bit i is
// codeword bit i). The decoder transforms its decisions with them for the
// G-matrix check, the device link its messages into codewords.
#pragma once
#include "common.cuh"

// The stages of span 1, 2, 4, 8 and 16 that a code of n bits has, inside one
// word: bit i takes bit i + h where i & h = 0.
__device__ __forceinline__ u32 polar_in_word(u32 x, int n) {
    if (n > 1) x ^= (x >> 1) & 0x55555555u;
    if (n > 2) x ^= (x >> 2) & 0x33333333u;
    if (n > 4) x ^= (x >> 4) & 0x0f0f0f0fu;
    if (n > 8) x ^= (x >> 8) & 0x00ff00ffu;
    if (n > 16) x ^= (x >> 16) & 0x0000ffffu;
    return x;
}

// The stage of span hw words: word j ^= word j + hw for every j with
// j & hw = 0, of `words` words, the pairs first, first + step, ... of this
// thread.
__device__ __forceinline__ void polar_across_words(u32* v, int words, int hw, int first, int step) {
    for (int p = first; p < words / 2; p += step) {
        const int j = (p / hw) * 2 * hw + p % hw;
        v[j] ^= v[j + hw];
    }
}
