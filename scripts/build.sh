#!/usr/bin/env bash
# Configures and builds ingot (preset "default", Ninja) with all cores: every target, or the targets named
# (e.g. `bash scripts/build.sh ingot-cli`: the library and the CLI alone, without the test suite).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset "${INGOT_PRESET:-default}" -G Ninja
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build --preset "${INGOT_PRESET:-default}" -j "$(nproc)" "${targets[@]}"
