#!/usr/bin/env bash
# The main job: install, build, then `ingot test` over the kernel library on every backend
# present (the interpreter at least; absent backends are counted skips with their reason)
# against the CPU oracles. Ends with "N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/ingot test --backend all
