#!/usr/bin/env bash
# Copied to bundle/run by scripts/gpu_bundle.sh; runs on the GPU machine, from
# the repository root (tests read flowgraphs/). `gpufec info`, every GPU test,
# the prebuilt flowgraph on the GPU (rate 1/2, and rate 3/4 depunctured by the
# block and by the decoder), then the GPU benchmark (extra arguments go
# to `gpufec bench viterbi --backend gpu`); logs under $OUT; summary table last.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/gpufec-out}
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
step info "$here/bin/gpufec" info
for t in "$here"/tests/*; do
    step "$(basename "$t")" "$t" --test-threads=1
done
step flowgraph "$here/bin/gpufec" run flowgraphs/viterbi_awgn.toml --backend gpu --set source.total=1e9
# Rate 3/4 both ways of depuncturing (f = 252 starts every tile on the period).
r34=(--set vars.rate=3/4 --set vars.ebn0_db=4.5 --set vars.tile=252,20,20 --set source.total=1e9)
for at in block decoder; do
    step "flowgraph-r34-$at" "$here/bin/gpufec" run flowgraphs/viterbi_awgn.toml --backend gpu "${r34[@]}" --set vars.depuncture=$at
done
step bench "$here/bin/gpufec" bench viterbi --backend gpu "$@"
cp "$out/bench.log" "$out/bench.md" 2>/dev/null
echo
echo "| step                               | result    |  time |"
echo "|------------------------------------|-----------|-------|"
printf '%s\n' "${rows[@]}"
