#!/usr/bin/env bash
# One call on the GPU machine: build everything (Release, all cores), the whole CTest suite but the long matrices,
# `ingot test` on every backend, compute-sanitizer memcheck of the CUDA runs, optionally the bench of the rows of
# record with the cuDNN reference. Every step is cut at a global deadline (INGOT_DEADLINE seconds, default 540, inside
# the device tool's 600 s per command). Logs go to $OUT (or ./gpu-out): env.txt, ctest.log, test-all.log,
# memcheck.log, and with --bench reference.json, baseline.json, bench.log.
# Usage: bash scripts/gpu-run.sh [--bench]
#   INGOT_SLOW=1             ctest -L slow as well (every variant on every backend, the long sweeps)
#   INGOT_BENCH_FILTER=a,b   bench (and reference) only these kernels; INGOT_BENCH_CASES=re only these cases
#   INGOT_SKIP_TESTS=1       the bench alone
#   INGOT_FOCUS=re           one family in depth instead of the suite: the CLI alone, `ingot test --backend cuda
#                            --all-variants`, memcheck and (with --bench) the bench with every registered variant, each
#                            over the kernels the filter names (e.g. 'gemm$')
# Write the local commit to the git-ignored .commit and name it in the call's carry.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-out}; mkdir -p "$out"; out=$(cd "$out" && pwd)
export INGOT_CACHE_DIR=$PWD/.ingot-cache
t0=$(date +%s)
deadline=$((t0 + ${INGOT_DEADLINE:-540}))
left() { local l=$((deadline - $(date +%s))); echo $((l > 5 ? l : 5)); }
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(cat .commit 2>/dev/null || git rev-parse HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  nvcc --version 2>&1 | tail -2
} > "$out/env.txt"
cat "$out/env.txt"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cli_only=${INGOT_SKIP_TESTS:-${INGOT_FOCUS:-}}
cmake --build build -j "$(nproc)" ${cli_only:+--target ingot-cli} > "$out/build.log" 2>&1 ||
  { grep -E "error" "$out/build.log" | head -30; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
./build/ingot device > "$out/device.txt" 2>&1; head -30 "$out/device.txt"
if [[ -n ${INGOT_FOCUS:-} && -z ${INGOT_SKIP_TESTS:-} ]]; then
  timeout "$(( $(left) * 3 / 10 ))" ./build/ingot test --backend cuda --all-variants --filter "$INGOT_FOCUS" \
    --json "$out/test-focus.json" > "$out/test-focus.log" 2>&1
  echo "ingot test (cuda, every variant) rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "^FAIL" "$out/test-focus.log" | head
  tail -3 "$out/test-focus.log"
  timeout "$(( $(left) * 2 / 10 ))" compute-sanitizer --tool memcheck --error-exitcode 9 ./build/ingot test \
    --backend cuda --filter "$INGOT_FOCUS" > "$out/memcheck.log" 2>&1
  echo "memcheck rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|passed," "$out/memcheck.log" | tail -3
elif [[ -z ${INGOT_SKIP_TESTS:-} ]]; then
  labels=(--label-exclude slow); [[ -n ${INGOT_SLOW:-} ]] && labels=()
  (cd build && timeout "$(( $(left) * 5 / 10 ))" ctest -j 8 "${labels[@]}" > "$out/ctest.log" 2>&1)
  echo "ctest rc=$? at $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed|tests failed' "$out/ctest.log")"
  grep -E "\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception|Not Run" "$out/ctest.log" | head -30
  timeout "$(( $(left) * 4 / 10 ))" ./build/ingot test --backend all --json "$out/test-all.json" > "$out/test-all.log" 2>&1
  echo "ingot test rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "^FAIL" "$out/test-all.log" | head -10
  tail -8 "$out/test-all.log"
  if command -v compute-sanitizer >/dev/null; then
    timeout "$(left)" compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 ./build/ingot test \
      --backend cuda > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|passed," "$out/memcheck.log" | tail -3
  fi
fi
if [[ ${1:-} == --bench ]]; then
  if [[ -n ${INGOT_FOCUS:-} ]]; then INGOT_BENCH_FILTER=$INGOT_FOCUS; every=--all-variants; else every=; fi
  ./build/ingot bench --emit-cases "$out/cases.json" ${INGOT_BENCH_FILTER:+--filter "$INGOT_BENCH_FILTER"} $every \
    ${INGOT_BENCH_CASES:+--cases "$INGOT_BENCH_CASES"} > /dev/null
  timeout "$(( $(left) / 2 ))" python3 bench/reference_torch.py "$out/cases.json" "$out/reference.json" \
    > "$out/reference.log" 2>&1
  echo "reference rc=$?"; tail -3 "$out/reference.log"
  timeout "$(left)" ./build/ingot snap --backend cuda $every --reference "$out/reference.json" --out "$out/baseline.json" \
    ${INGOT_BENCH_FILTER:+--filter "$INGOT_BENCH_FILTER"} ${INGOT_BENCH_CASES:+--cases "$INGOT_BENCH_CASES"} \
    > "$out/bench.log" 2>&1
  echo "bench rc=$?"; tail -45 "$out/bench.log"
fi
echo "total: $(( $(date +%s) - t0 )) s"
