#!/usr/bin/env bash
# Copied to bundle/run by scripts/gpu_bundle.sh; runs on the GPU machine, from
# the repository root (tests read flowgraphs/). `gpufec info` (with the
# pipeline self-test), every GPU test, the prebuilt flowgraph on the GPU (rate
# 1/2, and rate 3/4 depunctured by the block and by the decoder), then the GPU
# benchmark (extra arguments go to `gpufec bench conv --backend gpu`; with a
# baseline binary in the bundle: new, then baseline). The step "compare"
# (with a baseline) times a few single configurations end to end through the
# decoder contract, baseline and new alternately, three times each.
# The step "files" writes an LLR file and decodes it file to file (with and
# without a BER count) and runs the AWGN flowgraph, all with --profile.
# The step "punctured-ab" (with a baseline patched to read GPUFEC_ONLY_RATE)
# alternates the two on one punctured rate at a time.
# GPUFEC_STEPS picks the steps (default "info tests flowgraph bench"). Logs
# under $OUT (or /tmp/gpufec-out); summary table last.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/gpufec-out}
steps=${GPUFEC_STEPS:-info tests flowgraph bench}
mkdir -p "$out"
# NVRTC ships with the CUDA toolkit or its Python wheel; the loader must find it.
nvrtc=$(find / -xdev \( -path /proc -o -path /sys \) -prune -o -name 'libnvrtc.so.13*' -print 2>/dev/null | head -1)
[ -n "$nvrtc" ] && export LD_LIBRARY_PATH="$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GPUFEC_REQUIRE_GPU=1
rows=()
step() { # name command...
    local name=$1; shift
    local t0=$SECONDS
    if "$@" >"$out/$name.log" 2>&1; then s=pass; else s="FAIL ($?)"; fi
    rows+=("$(printf '| %-34s | %-9s | %5ds |' "$name" "$s" $((SECONDS - t0)))")
    tail -n 40 "$out/$name.log"
}
want() { [[ " $steps " == *" $1 "* ]]; }
want info && step info "$here/bin/gpufec" info
if want tests; then
    for t in "$here"/tests/*; do
        step "$(basename "$t")" "$t" --test-threads=4
    done
fi
if want flowgraph; then
    step flowgraph "$here/bin/gpufec" run flowgraphs/viterbi_awgn.toml --backend gpu --set source.total=1e9
    # Rate 3/4 both ways of depuncturing (f = 252 starts every tile on the period).
    r34=(--set vars.rate=3/4 --set vars.ebn0_db=4.5 --set vars.tile=252,20,20 --set source.total=1e9)
    for at in block decoder; do
        step "flowgraph-r34-$at" "$here/bin/gpufec" run flowgraphs/viterbi_awgn.toml --backend gpu "${r34[@]}" --set vars.depuncture=$at
    done
fi
if want files; then
    # File → decoder → file and the AWGN flowgraph, profiled: 4e9 information
    # bits make an 8 GB LLR file (page cache: the read is from memory).
    fd=${GPUFEC_FILES_DIR:-/tmp/gpufec-files}
    mkdir -p "$fd"
    names=(--set "vars.llrs=$fd/llrs.i8" --set "vars.bits=$fd/bits.packed")
    step files-write "$here/bin/gpufec" run flowgraphs/awgn_to_files.toml --profile --set source.total=${GPUFEC_FILE_BITS:-4e9} "${names[@]}"
    # FutureSDR's executor threads (GPUFEC_EXECUTORS, a list; 0: one per core).
    for ex in ${GPUFEC_EXECUTORS:-0}; do
        step files-decode-x$ex "$here/bin/gpufec" run flowgraphs/viterbi_file.toml --executors $ex --backend gpu --profile --set "vars.llrs=$fd/llrs.i8" --set "vars.decoded=$fd/decoded.packed"
    done
    step files-ber "$here/bin/gpufec" run flowgraphs/viterbi_file_ber.toml --backend gpu --profile "${names[@]}" --set "vars.decoded=$fd/decoded.packed"
    rm -rf "$fd"
    for ex in ${GPUFEC_EXECUTORS:-0}; do
        step flowgraph-profile-x$ex "$here/bin/gpufec" run flowgraphs/viterbi_awgn.toml --executors $ex --backend gpu --profile --set source.total=4e9
    done
fi
if want bench; then
    step bench "$here/bin/gpufec" bench conv --backend gpu "$@"
    if [ -x "$here/bin/gpufec-baseline" ]; then
        step bench-baseline "$here/bin/gpufec-baseline" bench viterbi --backend gpu "$@"
    fi
    cp "$out/bench.log" "$out/bench.md" 2>/dev/null
fi
if want compare && [ -x "$here/bin/gpufec-baseline" ]; then
    compare() {
        for round in 1 2 3; do
            for who in baseline new; do
                if [ $who = baseline ]; then bin=("$here/bin/gpufec-baseline" bench viterbi); else bin=("$here/bin/gpufec" bench conv); fi
                "${bin[@]}" --backend gpu --bits 268435456 --seconds 2 "$@" | grep -E '^tiled' | sed "s/^/$who $round: /"
            done
        done
    }
    step compare-serial-i8 compare --tile 256,20,20 --traceback serial --llr i8
    step compare-parallel30-i8 compare --tile 256,20,30 --traceback parallel:32 --llr i8
    step compare-serial-f32 compare --tile 256,20,20 --traceback serial --llr f32
fi
if want punctured-ab && [ -x "$here/bin/gpufec-baseline" ]; then
    # One punctured rate at a time (its rows of the punctured table only),
    # baseline and new alternately, the order swapped every round;
    # GPUFEC_ROUNDS rounds (default 8). Each line: who, round, the row.
    ab() {
        local first second
        for round in $(seq 1 "${GPUFEC_ROUNDS:-8}"); do
            if ((round % 2)); then first=baseline second=new; else first=new second=baseline; fi
            for rate in 2/3 3/4 7/8; do
                for who in $first $second; do
                    if [ $who = baseline ]; then
                        GPUFEC_ONLY_RATE=$rate "$here/bin/gpufec-baseline" bench viterbi --backend gpu --no-tables --llr i8 --bits 1048576 --seconds 0
                    else
                        "$here/bin/gpufec" bench conv --backend gpu --no-tables --llr i8 --bits 1048576 --seconds 0 --rate $rate
                    fi | grep -E '^\| [0-9]/[0-9] ' | sed "s/^/$who $round: /"
                done
            done
        done
    }
    step punctured-ab ab
fi
if want rebench && [ -x "$here/bin/gpufec-baseline" ]; then
    # Whole benches again, alternately, for rows a single bench cannot compare.
    for round in 1 2; do
        step "rebench-baseline-$round" "$here/bin/gpufec-baseline" bench viterbi --backend gpu --no-tables
        step "rebench-new-$round" "$here/bin/gpufec" bench conv --backend gpu --no-tables
    done
fi
echo
echo "| step                               | result    |  time |"
echo "|------------------------------------|-----------|-------|"
printf '%s\n' "${rows[@]}"
