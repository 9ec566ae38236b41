#!/usr/bin/python3
"""Peer measurement: GNU Radio's gr-fec cc_decoder (K=7, 171/133, r=1/2) as a
block in a flowgraph, decode throughput on one core, for BENCHMARKS.md. Needs
Debian's `gnuradio` package.

    /usr/bin/python3 scripts/bench-gnuradio-cc-decoder.py [INFO_BITS]

The process pins itself to one core first, so every flowgraph thread (source,
head, decoder, sink) shares that core: the figure is what one core delivers,
scheduler and buffer copies included. (scripts/bench-gnuradio-cc-decoder.cpp
times the decoder object alone.)

Input: random bits through GNU Radio's own cc_encoder (terminated frames of
2048 bits), BPSK over AWGN at Eb/N0 = 3 dB, converted to the uchar soft symbols
a "uchar" decoder takes (48·y + 128, clipped, as gr-fec's extended_decoder
does). A first pass decodes them once and prints the BER against the sent
bits, so a misconfigured decoder cannot pass unnoticed; the timed pass decodes
them repeatedly into a null sink.
"""
import os
import sys
import time

import numpy as np
from gnuradio import blocks, fec, gr

FRAME = 2048
SET = 64  # distinct noisy frames, decoded in turn
POLYS = [109, 79]  # 171/133 octal in GNU Radio's bit order

os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
bits = int(float(sys.argv[1])) if len(sys.argv) > 1 else 20_000_000
rng = np.random.default_rng(1)


def run(*chain):
    tb = gr.top_block()
    tb.connect(*chain)
    t0 = time.perf_counter()
    tb.run()
    return time.perf_counter() - t0


info = rng.integers(0, 2, FRAME * SET, dtype=np.uint8)
enc = fec.cc_encoder_make(FRAME, 7, 2, POLYS, 0, fec.CC_TERMINATED, False)
coded_sink = blocks.vector_sink_b()
run(blocks.vector_source_b(info.tolist(), False), fec.encoder(enc, gr.sizeof_char, gr.sizeof_char), coded_sink)
coded = np.array(coded_sink.data(), dtype=np.uint8)
sigma = np.sqrt(1.0 / (2.0 * 0.5 * 10 ** 0.3))
y = (2.0 * coded - 1.0) + sigma * rng.standard_normal(coded.size)
syms = np.clip(np.round(48.0 * y + 128.0), 0, 255).astype(np.uint8).tolist()

dec = fec.cc_decoder.make(FRAME, 7, 2, POLYS, 0, -1, fec.CC_TERMINATED, False)
check = blocks.vector_sink_b()
run(blocks.vector_source_b(syms, False), fec.decoder(dec, gr.sizeof_char, gr.sizeof_char), check)
decoded = np.array(check.data(), dtype=np.uint8)
assert decoded.size == info.size, (decoded.size, info.size)
ber = np.count_nonzero(decoded != info) / info.size

frames = bits // FRAME
head = blocks.head(gr.sizeof_char, frames * len(syms) // SET)
dec_block = fec.decoder(dec, gr.sizeof_char, gr.sizeof_char)
dt = run(blocks.vector_source_b(syms, True), head, dec_block, blocks.null_sink(gr.sizeof_char))
print(f"gr-fec cc_decoder (flowgraph block, one core) frames of {FRAME}, terminated: "
      f"{frames * FRAME / dt / 1e6:.1f} Mb/s ({frames * FRAME} bits in {dt:.2f} s; BER {ber:.2e} over {info.size} bits)")
