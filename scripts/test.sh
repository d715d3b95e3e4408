#!/usr/bin/env bash
# The whole test suite: install, build, run every test with CTest (ends with CTest's summary).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --preset "${INGOT_PRESET:-default}" -j "$(nproc)" --timeout 900
