#!/usr/bin/python3
"""GNU Radio on the receiving side for tests/gnuradio.rs: gr-zeromq's
pull_source (item size 1, raw layout) connects to ADDRESS, and the first
COUNT items go into a file. GNU Radio's ZeroMQ sources never end, and a
head block after one does not end the flowgraph either (the source's work
keeps returning nothing): the script stops it once the head has passed
COUNT items.

    pull_llrs.py ADDRESS COUNT FILE
"""

import sys
import time

from gnuradio import blocks, gr, zeromq


def main():
    address, count, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    tb = gr.top_block("pull_llrs")
    pull = zeromq.pull_source(gr.sizeof_char, 1, address, 100, False, -1)
    head = blocks.head(gr.sizeof_char, count)
    sink = blocks.file_sink(gr.sizeof_char, path, False)
    sink.set_unbuffered(False)
    tb.connect(pull, head, sink)
    tb.start()
    while head.nitems_written(0) < count:
        time.sleep(0.05)
    tb.stop()
    tb.wait()
    sink.close()
    print(f"gnuradio {gr.version()}: pulled {count} items from {address}", flush=True)


if __name__ == "__main__":
    main()
