#!/usr/bin/env bash
# Configures and builds ingot (preset "default", Ninja) with all cores.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset "${INGOT_PRESET:-default}" -G Ninja
cmake --build --preset "${INGOT_PRESET:-default}" -j "$(nproc)"
