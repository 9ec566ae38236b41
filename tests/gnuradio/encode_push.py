#!/usr/bin/python3
"""GNU Radio's own chain for tests/gnuradio.rs: information bits (a packed
file, first bit most significant, as gpufec writes them) → gr-fec's
convolutional encoder (K=7, polys [79, 109]: the (171,133) code, bit for bit
gpufec's encoder) → BPSK → GNU Radio's Gaussian noise at an Eb/N0 → i8 LLRs
(round(32·y): gpufec's matched scale 16·σ² times 2y/σ²) → gr-zeromq's
push_sink (item size 1, raw layout), and the same LLRs into a file.

    encode_push.py BITS_FILE EBN0_DB SEED ADDRESS LLR_FILE

It binds ADDRESS, runs to the end of the bits, prints how many LLRs it
pushed, and keeps its socket open until its standard input closes.
"""

import math
import os
import sys

from gnuradio import analog, blocks, fec, gr, zeromq


class EncodePush(gr.top_block):
    def __init__(self, bits, ebn0_db, seed, address, llr_file):
        gr.top_block.__init__(self, "encode_push")
        n = os.path.getsize(bits) * 8
        rate = 0.5
        sigma = math.sqrt(1.0 / (2.0 * rate * 10 ** (ebn0_db / 10.0)))
        source = blocks.file_source(gr.sizeof_char, bits, False)
        unpack = blocks.packed_to_unpacked_bb(1, gr.GR_MSB_FIRST)
        encoder = fec.extended_encoder(fec.cc_encoder_make(n, 7, 2, [79, 109], 0, fec.CC_STREAMING, False), None, "11")
        to_float = blocks.char_to_float(1, 1.0)
        bpsk = blocks.multiply_const_ff(-2.0)
        offset = blocks.add_const_ff(1.0)
        noise = analog.noise_source_f(analog.GR_GAUSSIAN, sigma, seed)
        channel = blocks.add_ff(1)
        quantize = blocks.float_to_char(1, 32.0)
        self.push = zeromq.push_sink(gr.sizeof_char, 1, address, 100, False, -1)
        self.file = blocks.file_sink(gr.sizeof_char, llr_file, False)
        self.file.set_unbuffered(False)
        self.connect(source, unpack, encoder, to_float, bpsk, offset, (channel, 0))
        self.connect(noise, (channel, 1))
        self.connect(channel, quantize, self.push)
        self.connect(quantize, self.file)


def main():
    bits, ebn0_db, seed, address, llr_file = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    tb = EncodePush(bits, ebn0_db, seed, address, llr_file)
    tb.run()
    tb.file.close()
    print(f"gnuradio {gr.version()}: pushed {os.path.getsize(llr_file)} items to {address}", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
