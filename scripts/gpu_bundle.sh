#!/usr/bin/env bash
# Build, on a machine without a GPU, everything the lent GPU machine runs:
# the `gpufec` CLI, every test binary with GPU tests (those that read
# GPUFEC_REQUIRE_GPU) and the kernels
# (embedded in the binaries; copied beside them for reading), into bundle/
# (ignored by git). There, one command runs it all:
#
#     bundle/run [bench arguments...]
#
# It runs each GPU test with GPUFEC_REQUIRE_GPU=1 (a missing GPU fails), then
# `gpufec info` and `gpufec bench viterbi --backend gpu`, logs everything under
# $OUT (or /tmp/gpufec-out) and prints a summary table last.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf bundle
mkdir -p bundle/bin bundle/tests bundle/kernels
cp kernels/* bundle/kernels/
cargo build --release --bin gpufec
cp target/release/gpufec bundle/bin/
for t in $(grep -l GPUFEC_REQUIRE_GPU tests/*.rs); do
    name=$(basename "$t" .rs)
    exe=$(cargo test --release --test "$name" --no-run --message-format=json 2>/dev/null |
        sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
    cp "$exe" "bundle/tests/$name"
done
cp scripts/gpu_run.sh bundle/run
chmod +x bundle/run
du -sh bundle
