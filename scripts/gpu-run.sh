#!/usr/bin/env bash
# One call on the GPU machine (H200): build, full test suite, ingot test on every backend,
# compute-sanitizer memcheck of the CUDA runs, optionally the bench. Logs go to $OUT (or ./gpu-out).
# Usage: bash scripts/gpu-run.sh [--bench]
#   INGOT_BENCH_FILTER=a,b   bench (and reference) only these kernels
#   INGOT_BENCH_CASES=re     bench (and reference) only cases whose name matches this regex (ingot bench --cases)
#   INGOT_SKIP_TESTS=1       skip ctest, ingot test and memcheck (bench-only exploration)
#   INGOT_TEST_FILTER=f      ingot test (every backend) only these kernels (default: all)
#   INGOT_MEMCHECK_FILTER=f  memcheck only these kernels (default: all)
#   INGOT_REFERENCE_SKIP=re  no cuDNN reference for bench cases whose name matches this Python regex
#                            (e.g. '_(v|t|oc)[0-9]|_minb|_pre|_nopre' keeps the reference shapes' default cases)
#   INGOT_BENCH_ARGS=...     extra arguments of ingot snap
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-out}; mkdir -p "$out"; out=$(cd "$out" && pwd)
export INGOT_CACHE_DIR=$PWD/.ingot-cache
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(cat .commit 2>/dev/null || git rev-parse HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  nvcc --version 2>&1 | tail -2
} > "$out/env.txt"
cat "$out/env.txt"
t0=$(date +%s)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build -j "$(nproc)" ${INGOT_SKIP_TESTS:+--target ingot} > "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
./build/ingot device > "$out/device.txt" 2>&1; cat "$out/device.txt"
if [[ -n ${INGOT_SKIP_TESTS:-} ]]; then
  timeout 300 ./build/ingot test --backend cuda ${INGOT_BENCH_FILTER:+--filter "$INGOT_BENCH_FILTER"} \
    > "$out/test-cuda.log" 2>&1
  echo "ingot test (cuda) rc=$?"; grep -E "FAIL" "$out/test-cuda.log" | head -10; tail -2 "$out/test-cuda.log"
else
(cd build && timeout 420 ctest -j 8 --timeout 300 > "$out/ctest.log" 2>&1); echo "ctest: $(grep -E 'tests passed|tests failed' "$out/ctest.log")"
grep -E "Failed|\*\*\*" "$out/ctest.log" | head -20
timeout 300 ./build/ingot test --backend all ${INGOT_TEST_FILTER:+--filter "$INGOT_TEST_FILTER"} --json "$out/test-all.json" \
  > "$out/test-all.log" 2>&1; echo "ingot test rc=$?"; tail -8 "$out/test-all.log"
if command -v compute-sanitizer >/dev/null; then
  timeout 300 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 ./build/ingot test --backend cuda \
    ${INGOT_MEMCHECK_FILTER:+--filter "$INGOT_MEMCHECK_FILTER"} > "$out/memcheck.log" 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed," "$out/memcheck.log" | tail -3
fi
fi
if [[ ${1:-} == --bench ]]; then
  ./build/ingot bench --emit-cases "$out/cases.json" ${INGOT_BENCH_FILTER:+--filter "$INGOT_BENCH_FILTER"} \
    ${INGOT_BENCH_CASES:+--cases "$INGOT_BENCH_CASES"} >/dev/null
  if [[ -n ${INGOT_REFERENCE_SKIP:-} ]]; then
    python3 -c 'import json, re, sys
cases = json.load(open(sys.argv[1]))
json.dump([c for c in cases if not re.search(sys.argv[2], c["case"])], open(sys.argv[1], "w"))' \
      "$out/cases.json" "$INGOT_REFERENCE_SKIP"
  fi
  timeout 240 python3 bench/reference_torch.py "$out/cases.json" "$out/reference.json" > "$out/reference.log" 2>&1
  echo "reference rc=$?"; tail -3 "$out/reference.log"
  timeout 420 ./build/ingot snap --backend cuda --reference "$out/reference.json" --out "$out/baseline.json" \
    ${INGOT_BENCH_FILTER:+--filter "$INGOT_BENCH_FILTER"} ${INGOT_BENCH_CASES:+--cases "$INGOT_BENCH_CASES"} \
    ${INGOT_BENCH_ARGS:-} > "$out/bench.log" 2>&1
  echo "bench rc=$?"; tail -70 "$out/bench.log"
fi
echo "total: $(( $(date +%s) - t0 )) s"
