#!/usr/bin/env bash
# Copied to bundle/run by scripts/gpu_bundle.sh; runs on the GPU machine, from
# the repository root (tests read flowgraphs/). `gpufec info` (with the
# pipeline self-test), every GPU test, then the `gpufec` commands of
# scripts/gpu_runs.list (copied to bundle/runs.list) whose step is wanted:
# every family's flowgraphs and benches. With a baseline binary in the
# bundle (bundle/bin/gpufec-baseline), the step "ab" runs each of its lines
# with both binaries alternately (GPUFEC_ROUNDS rounds, default 3), for an
# old-against-new comparison in one lease.
# GPUFEC_STEPS picks the steps (default "info tests flowgraph bench"; "multi":
# every family over all the host's GPUs, for a host with several);
# GPUFEC_TEST_ARGS go to every test binary (e.g. "--skip compiles"). Logs
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
    local t0=$SECONDS result
    if "$@" >"$out/$name.log" 2>&1; then result=pass; else result="FAIL ($?)"; fi
    rows+=("$(printf '| %-34s | %-9s | %5ds |' "$name" "$result" $((SECONDS - t0)))")
    tail -n 40 "$out/$name.log"
}
want() { [[ " $steps " == *" $1 "* ]]; }
# The lines of runs.list for step $1: "name|arguments".
runs() { sed -n "s/^$1 *\([^ |]*\) *| *\(.*\)$/\1|\2/p" "$here/runs.list"; }
want info && step info "$here/bin/gpufec" info
if want tests; then
    for t in "$here"/tests/*; do
        # shellcheck disable=SC2086 # GPUFEC_TEST_ARGS are words (e.g. "--skip compiles")
        step "$(basename "$t")" "$t" --test-threads=4 ${GPUFEC_TEST_ARGS:-}
    done
fi
# Where the step "files" writes its files ({files} in the list): 4e9
# information bits make an 8 GB LLR file (page cache: the read is from memory).
fd=${GPUFEC_FILES_DIR:-/tmp/gpufec-files}
mkdir -p "$fd"
for kind in flowgraph bench files multi; do
    want $kind || continue
    while IFS='|' read -r name args; do
        # shellcheck disable=SC2086 # the list's arguments are words
        step "$kind-$name" "$here/bin/gpufec" ${args//\{files\}/$fd}
    done < <(runs $kind)
done
rm -rf "$fd"
if want ab && [ -x "$here/bin/gpufec-baseline" ]; then
    ab() { # arguments...
        for round in $(seq 1 "${GPUFEC_ROUNDS:-3}"); do
            for who in baseline new; do
                if [ $who = baseline ]; then bin="$here/bin/gpufec-baseline"; else bin="$here/bin/gpufec"; fi
                "$bin" "$@" 2>&1 | sed "s/^/$who $round: /"
            done
        done
    }
    while IFS='|' read -r name args; do
        # shellcheck disable=SC2086
        step "ab-$name" ab $args
    done < <(runs ab)
fi
echo
echo "| step                               | result    |  time |"
echo "|------------------------------------|-----------|-------|"
printf '%s\n' "${rows[@]}"
