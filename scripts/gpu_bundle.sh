#!/usr/bin/env bash
# Build, on a machine without a GPU, everything the lent GPU machine runs:
# the `gpufec` CLI, every test binary with GPU tests (those that ask
# tests/common's have_gpu or have_nvrtc), the kernels (embedded in the
# binaries; copied beside them for reading) and the list of commands to run
# (scripts/gpu_runs.list), into bundle/ (ignored by git). There, one command
# runs it all:
#
#     bundle/run
#
# With BASELINE=path/to/an/older/gpufec, that binary travels too (as
# bundle/bin/gpufec-baseline), and the step "ab" (GPUFEC_STEPS=ab) runs the
# list's "ab" lines with both binaries alternately, in the same lease, for an
# old-against-new comparison.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf bundle
mkdir -p bundle/bin bundle/tests bundle/kernels
cp kernels/* bundle/kernels/
cargo build --release --bin gpufec
cp target/release/gpufec bundle/bin/
if [ -n "${BASELINE:-}" ]; then
    cp "$BASELINE" bundle/bin/gpufec-baseline
fi
for t in $(grep -l "have_gpu\|have_nvrtc" tests/*.rs); do
    name=$(basename "$t" .rs)
    # The test's own executable (cargo also lists the gpufec binary it builds for the test).
    exe=$(cargo test --release --test "$name" --no-run --message-format=json 2>/dev/null |
        sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | grep "/deps/$name-" | tail -1)
    cp "$exe" "bundle/tests/$name"
done
strip bundle/bin/* bundle/tests/* 2>/dev/null || true
cp scripts/gpu_run.sh bundle/run
cp scripts/gpu_runs.list bundle/runs.list
chmod +x bundle/run
du -sh bundle
