#!/usr/bin/env bash
# The main job: install, build the library and the CLI (not the test suite), then `ingot test` over every kernel x
# dtype of the library's default variants on every backend present (the interpreter at least, PoCL on a CPU-only
# machine; absent backends are counted skips with their reason) against the CPU oracles. Ends with
# "N passed, N failed, N skipped". `ingot test --all-variants` adds every tuning option set the registry lists.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh ingot-cli
# Vulkan runs in the test suite instead (`ctest -L vulkan`): lavapipe compiles every pipeline with LLVM, too long for
# this job's budget on top of PoCL's. CUDA runs where a GPU is; without one, compiling every kernel for sm_90 is the
# test suite's (compile.library_sources), not this job's 5 minutes.
backends=interp,opencl
if command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then backends+=,cuda; fi
./build/ingot test --backend "$backends"
