#!/usr/bin/env bash
# What the ZeroMQ tests need beyond `cargo`: GNU Radio with its Python
# bindings and gr-zeromq (Debian's gnuradio, without recommends: about 105 MB
# of packages, 27 s to install on the development machine), for
# tests/gnuradio.rs. libzmq itself needs nothing: the zmq crate builds it.
# Idempotent: it installs only what is missing. Prints, as its last line,
# `GPUFEC_GNURADIO=1` when GNU Radio's Python bindings import, for .ci/run.
set -euo pipefail

have_gnuradio() {
    /usr/bin/python3 -c 'from gnuradio import gr, blocks, zeromq' 2>/dev/null
}

if ! have_gnuradio; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq --no-install-recommends gnuradio >&2
    else
        echo "setup-zmq: GNU Radio is missing and cannot be installed here (needs root and apt-get); its test will say SKIPPED" >&2
    fi
fi
if have_gnuradio; then
    echo "GPUFEC_GNURADIO=1"
fi
