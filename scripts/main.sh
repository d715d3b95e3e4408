#!/usr/bin/env bash
# The main job: install, build, run the example kernels on every backend present (the
# interpreter at least) against their CPU oracles. Ends with "N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/ingot-examples
