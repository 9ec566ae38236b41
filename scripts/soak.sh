#!/usr/bin/env bash
# A soak: a flowgraph on the GPU for SECONDS (default 600), its resident
# memory (VmRSS) and the device memory it holds (nvidia-smi, per process)
# sampled every second into a CSV, then the run ended with SIGINT (its
# summary printed) and the memory's course summarised: after the first
# WARMUP seconds (default 30) both must stay flat.
#   scripts/soak.sh [GPUFEC] [SECONDS] [FLOWGRAPH] [--set ...]
# Writes $OUT/soak.csv (or /tmp/soak.csv) and prints the summary; BACKEND=cpu
# soaks the CPU decoder instead.
set -uo pipefail
gpufec=${1:-target/release/gpufec}
seconds=${2:-600}
flowgraph=${3:-flowgraphs/viterbi_awgn.toml}
shift $(( $# < 3 ? $# : 3 ))
warmup=${WARMUP:-30}
out=${OUT:-/tmp}
csv="$out/soak.csv"
"$gpufec" run "$flowgraph" --backend "${BACKEND:-gpu}" --quiet --set source.total=9e15 "$@" >"$out/soak.log" 2>&1 &
pid=$!
echo "t_s,rss_kib,gpu_mib" >"$csv"
for ((t = 1; t <= seconds; t++)); do
    sleep 1
    kill -0 "$pid" 2>/dev/null || { echo "the run ended early after $t s:"; cat "$out/soak.log"; exit 1; }
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null)
    gpu=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null | awk -F', *' -v p="$pid" '$1 == p {print $2}')
    echo "$t,${rss:-},${gpu:-}" >>"$csv"
done
kill -INT "$pid"
wait "$pid"
status=$?
cat "$out/soak.log"
awk -F, -v w="$warmup" 'NR > 1 && $1 > w && $2 != "" {
        n++; if (n == 1) { r0 = $2; g0 = $3 } r1 = $2; g1 = $3
        if (rmin == "" || $2 < rmin) rmin = $2; if ($2 > rmax) rmax = $2
        if (gmin == "" || $3 < gmin) gmin = $3; if ($3 > gmax) gmax = $3
    }
    END {
        printf "soak: %d samples after %d s of warm-up; RSS %.1f → %.1f MiB (min %.1f, max %.1f); device memory %s → %s MiB (min %s, max %s)\n",
            n, w, r0 / 1024, r1 / 1024, rmin / 1024, rmax / 1024, g0, g1, gmin, gmax
    }' "$csv"
echo "exit status of the run: $status (130: ended by SIGINT, with its summary)"
