#!/usr/bin/env bash
# What the tests need beyond Rust on a fresh machine, installed where it is
# missing (quick when everything is there): Debian's chromium, in which
# tests/dashboard.rs opens the dashboard's page headless. `.ci/run` calls it
# before the tests. Needs root, or sudo, to install.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    echo "setup: chromium is missing and this is not root (no sudo): install it with 'apt-get install -y chromium'," \
         "or run the tests with GPUFEC_SKIP_BROWSER=1 to leave the dashboard's page unchecked" >&2
    exit 1
fi
echo "setup: installing chromium (tests/dashboard.rs opens the dashboard's page in it)" >&2
export DEBIAN_FRONTEND=noninteractive
# A fresh image's package lists may be empty or stale: update only when the install fails.
"${as_root[@]}" apt-get install -y chromium ||
    { "${as_root[@]}" apt-get update && "${as_root[@]}" apt-get install -y chromium; }
