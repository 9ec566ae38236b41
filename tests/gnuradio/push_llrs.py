#!/usr/bin/python3
"""GNU Radio's side of tests/gnuradio.rs: a GNU Radio flowgraph that reads a
file of i8 LLRs (one byte each) and pushes them over gr-zeromq's push_sink
(item size 1, pass_tags off: the raw layout), for a gpufec ZmqPullSource to
decode.

    push_llrs.py LLR_FILE ADDRESS

It binds ADDRESS (tcp://127.0.0.1:PORT), runs the flowgraph to the end of
the file (push_sink waits while the receiver's queue is full), prints how
many items it pushed, and then keeps its socket open until its standard
input closes, so that what is still queued reaches the receiver (the
socket's linger is one second).
"""

import os
import sys

from gnuradio import blocks, gr, zeromq


class PushLlrs(gr.top_block):
    def __init__(self, path, address):
        gr.top_block.__init__(self, "push_llrs")
        self.source = blocks.file_source(gr.sizeof_char, path, False)
        self.push = zeromq.push_sink(gr.sizeof_char, 1, address, 100, False, -1)
        self.connect(self.source, self.push)


def main():
    path, address = sys.argv[1], sys.argv[2]
    tb = PushLlrs(path, address)
    tb.run()
    print(f"gnuradio {gr.version()}: pushed {os.path.getsize(path)} items to {address}", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
