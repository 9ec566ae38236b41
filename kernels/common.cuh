// Shared device-side definitions for every gpufec kernel.
//
// Conventions (DESIGN.md): LLR = ln P(b=0)/P(b=1), positive means bit 0. Bits
// leave the device packed 32 per word, least significant bit first (the host
// unpacks them to one byte per bit at the block boundary). Kernels are compiled by NVRTC at
// run time with the code parameters as -D constants, so every loop over states
// or stages below is unrolled with compile-time bounds.
#pragma once

typedef signed char i8;
typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;

