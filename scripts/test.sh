#!/usr/bin/env bash
# The whole test suite: install, build, run every test with CTest but the long matrices (label `slow`, for the GPU
# machine); ends with CTest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --preset "${INGOT_PRESET:-default}" -j "$(nproc)" --label-exclude slow  # `ctest -L slow`: the long matrices
