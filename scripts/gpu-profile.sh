#!/usr/bin/env bash
# One profiling call on the GPU machine (H200): builds the ingot CLI, the copy probe
# (bench/probes/copy_probe.cu), runs the probe, then Nsight Compute on chosen bench cases at the
# card's own clocks (caches flushed before each launch, as the bench's rotation leaves them cold),
# and optionally a bench of chosen cases. Logs go to $OUT (or ./gpu-out).
# Usage: bash scripts/gpu-profile.sh (write the local commit to .commit first and name it in the run call's carry:
# .commit is git-ignored, and the device copy's git metadata may be older than the working tree it runs)
#   INGOT_NCU="filter|dtype|case-regex|kernel-regex[|KEY=V,..];..."   cases to profile (one launch each, after 2); a
#                                                         fifth field profiles that variant alone (--variants-only)
#   INGOT_BENCH="filter|dtype|case-regex[|variants];..."  cases to bench (median of 30 after 5); variants: space-separated
#                                                         KEY=V,KEY=V lists, each also run as ingot bench --variant
#   INGOT_UNIT=gtest-filter                               build the unit tests and run those matching (e.g. 'CudaExec.*')
#   INGOT_UNIT_MEMCHECK=1, INGOT_UNIT_TIMEOUT=s (300)     ... under compute-sanitizer memcheck (e.g. with INGOT_UNIT=
#                                                         'ConvSweep.*' INGOT_SWEEP_BACKEND=cuda INGOT_SWEEP_DRAWS=1: the
#                                                         random-shape sweep on the GPU)
#   INGOT_NCU_SOURCE=1                                    ... and each case's source page (per SASS instruction: executed,
#                                                         stall samples by reason) into ncu-source.tar.gz (read it
#                                                         with scripts/ncu_source_digest.py)
#   INGOT_PROBE=1                                         also build and run the copy probe
#   INGOT_MEMCHECK=filter                                 compute-sanitizer memcheck of ingot test --backend cuda
#   INGOT_TEST="backends|filter,filter..[|dtype]"         ingot test --backend backends, once per filter (the harness
#                                                         on the GPU's backends, e.g. 'opencl|depthwise,causal': NVIDIA's
#                                                         OpenCL); INGOT_TEST_LIMIT: seconds since the start (420);
#                                                         INGOT_TEST_PARALLEL=1: the filters run at once
#   INGOT_OCL_CHECK="filter|dtype|case-regex[|f16];..."   ingot bench --backend opencl --check of those cases on the
#                                                         GPU's OpenCL device (NVIDIA's: 48 KB of local memory); f16:
#                                                         $INGOT_OPENCL_F16 for it (builtins, portable; default auto)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-out}; mkdir -p "$out"; out=$(cd "$out" && pwd)
# INGOT_REQUIRE_GPU=NAME (e.g. H200): stop before building on any other card (scripts/require-gpu.sh)
source scripts/require-gpu.sh
export INGOT_CACHE_DIR=$PWD/.ingot-cache
t0=$(date +%s)
{ echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"; echo "commit: $(cat .commit 2>/dev/null || git rev-parse HEAD 2>/dev/null || echo unknown)"
  git status --short 2>/dev/null | head -20
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1; } > "$out/env.txt"
# (at most 8 files come back from a device call: the build's and ncu's raw logs stay in $tmp)
tmp=$(mktemp -d)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DINGOT_BUILD_TESTS=OFF > "$tmp/configure.log" 2>&1 || { tail -20 "$tmp/configure.log"; exit 1; }
cmake --build build -j "$(nproc)" --target ingot > "$tmp/build.log" 2>&1 || { grep -E "error" "$tmp/build.log" | head; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
if [[ -n ${INGOT_UNIT:-} ]]; then  # the unit tests (GoogleTest) whose names match this filter, on the GPU
  cmake -S . -B build-tests -G Ninja -DCMAKE_BUILD_TYPE=Release -DINGOT_BUILD_TESTS=ON > "$tmp/configure-tests.log" 2>&1 &&
    cmake --build build-tests -j "$(nproc)" --target ingot_unit_tests > "$tmp/build-tests.log" 2>&1 ||
    { grep -E "error" "$tmp/build-tests.log" | head; tail -5 "$tmp/configure-tests.log"; }
  sanitizer=()
  [[ ${INGOT_UNIT_MEMCHECK:-0} == 1 ]] && sanitizer=(compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9)
  timeout "${INGOT_UNIT_TIMEOUT:-300}" "${sanitizer[@]}" ./build-tests/tests/ingot_unit_tests --gtest_filter="$INGOT_UNIT" > "$out/unit.log" 2>&1
  echo "unit tests rc=$? ($(( $(date +%s) - t0 )) s)"; grep -E "^\[  (FAILED|PASSED|SKIPPED) |tests? ran|ERROR SUMMARY|draws ran" "$out/unit.log" | tail -24
fi
if [[ -n ${INGOT_PROBE:-} ]]; then
  nvcc -O3 -arch=sm_90 bench/probes/copy_probe.cu -o build/copy_probe 2>&1 | tail -5
  ./build/copy_probe 2>&1 | tee "$out/copy-probe.txt"
fi
if [[ -n ${INGOT_MEMCHECK:-} ]]; then
  timeout 420 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 ./build/ingot test --backend cuda \
    --filter "$INGOT_MEMCHECK" > "$out/memcheck.log" 2>&1
  echo "memcheck rc=$?"; grep -E "FAIL" "$out/memcheck.log" | head -10; grep -E "ERROR SUMMARY|passed," "$out/memcheck.log" | tail -3
fi
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,\
lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,\
lts__ltcfabric2ltc_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,\
launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__waves_per_multiprocessor,\
sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,\
smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio,\
smsp__average_warp_latency_issue_stalled_lg_throttle.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,\
smsp__average_warp_latency_issue_stalled_mio_throttle.ratio,smsp__average_warp_latency_issue_stalled_not_selected.ratio,\
smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_drain.ratio,\
sm__cycles_elapsed.avg.per_second,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,\
sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__warps_eligible.avg.per_cycle_active,\
smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_no_instruction.ratio,\
smsp__average_warp_latency_issue_stalled_dispatch_stall.ratio,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,\
sm__inst_executed_pipe_tensor_op_hmma.sum
ncu_common=(--clock-control none --cache-control all --metrics "$metrics" --csv --page raw)
if [[ -n ${INGOT_NCU:-} ]] && command -v ncu >/dev/null; then
  [[ -x build/copy_probe ]] && timeout 120 ncu "${ncu_common[@]}" -k regex:copy_plain --launch-skip 5 --launch-count 1 ./build/copy_probe 154.1e6 \
    > "$tmp/ncu-copy.csv" 2>&1
  IFS=';' read -ra items <<< "${INGOT_NCU:-}"
  n=0
  for it in "${items[@]}"; do
    IFS='|' read -r filt dt cs kr va <<< "$it"; n=$((n + 1))
    vargs=(); [[ -n ${va:-} ]] && vargs=(--variant "$va" --variants-only)  # (a variant alone: its launches are counted)
    timeout 150 ncu "${ncu_common[@]}" -k "regex:$kr" --launch-skip 2 --launch-count 1 \
      ./build/ingot bench --backend cuda --filter "$filt" --dtype "$dt" --cases "$cs" "${vargs[@]}" --reps 3 --warmup 1 \
      > "$tmp/ncu-$n.csv" 2>&1; echo "ncu $n ($it) rc=$?"
    if [[ ${INGOT_NCU_SOURCE:-0} == 1 ]]; then  # per-SASS-instruction counters and stall samples (source page)
      mkdir -p "$tmp/src"
      timeout 200 ncu --clock-control none --cache-control all --section SourceCounters --section WarpStateStats \
        --section SchedulerStats --section LaunchStats --section Occupancy -k "regex:$kr" --launch-skip 2 --launch-count 1 \
        -o "$tmp/src/src-$n" ./build/ingot bench --backend cuda --filter "$filt" --dtype "$dt" --cases "$cs" "${vargs[@]}" \
        --reps 3 --warmup 1 > "$tmp/src/collect-$n.log" 2>&1; echo "ncu source $n rc=$?"
      ncu -i "$tmp/src/src-$n.ncu-rep" --page source --csv --print-source sass > "$tmp/src/src-$n.csv" 2> "$tmp/src/src-$n.err" ||
        ncu -i "$tmp/src/src-$n.ncu-rep" --page source --csv > "$tmp/src/src-$n.csv" 2>> "$tmp/src/src-$n.err"
      ncu -i "$tmp/src/src-$n.ncu-rep" --page details --csv > "$tmp/src/details-$n.csv" 2>&1
      echo "  source page: $(wc -l < "$tmp/src/src-$n.csv") lines; $(head -c 300 "$tmp/src/src-$n.err")"
    fi
  done
  [[ -d $tmp/src ]] && tar -czf "$out/ncu-source.tar.gz" -C "$tmp/src" --exclude='*.ncu-rep' .
  python3 - "$tmp" <<'PY' > "$out/ncu-table.md"
import csv, glob, io, sys
rows = []
for f in sorted(glob.glob(sys.argv[1] + "/ncu-*.csv")):
    txt = open(f).read().splitlines()
    start = next((i for i, l in enumerate(txt) if l.startswith('"ID"')), None)
    if start is None: continue
    recs = list(csv.DictReader(io.StringIO("\n".join(txt[start:]))))
    for r in recs[1:]:  # recs[0] holds the units
        rows.append((f.rsplit("/", 1)[1], r))
if rows:
    keys = [k for k in rows[0][1] if "__" in k]
    print("| metric | " + " | ".join(f"{n} {r.get('Kernel Name','')[:40]}" for n, r in rows) + " |")
    print("|---|" + "---:|" * len(rows))
    for k in keys: print(f"| {k} | " + " | ".join(r.get(k, "") for _, r in rows) + " |")
PY
  cat "$out/ncu-table.md"
fi
IFS=';' read -ra items <<< "${INGOT_BENCH:-}"
n=0
for it in "${items[@]}"; do
  IFS='|' read -r filt dt cs vs <<< "$it"; n=$((n + 1))
  vargs=(); for v in ${vs:-}; do vargs+=(--variant "$v"); done
  timeout 300 ./build/ingot bench --backend cuda --filter "$filt" --dtype "$dt" --cases "$cs" "${vargs[@]}" > "$out/bench-$n.log" 2>&1
  echo "bench $n ($it) rc=$?"; grep -E "^[a-z_0-9]+ +(bf16|f16|f32) " "$out/bench-$n.log" | awk '{printf "%-22s %-5s %-60s %s %s %s\n",$1,$2,$3,$4,$6,$7}'
done
if [[ -n ${INGOT_TEST:-} ]]; then  # one ingot test per filter part, so that a cut run still summarises the parts done
  IFS='|' read -r tb tf tdt <<< "$INGOT_TEST"
  IFS=',' read -ra parts <<< "${tf:-}"; [[ ${#parts[@]} -eq 0 ]] && parts=("")
  : > "$out/test.log"
  one_part() {  # part index, part: one ingot test into $tmp/test-<index>.log, its rc in $tmp/test-<index>.rc
    local left=$(( ${INGOT_TEST_LIMIT:-420} - ($(date +%s) - t0) ))
    (( left < 10 )) && { echo "no time left" > "$tmp/test-$1.log"; echo skipped > "$tmp/test-$1.rc"; return; }
    timeout "$left" ./build/ingot test --backend "$tb" --filter "$2" ${tdt:+--dtype "$tdt"} > "$tmp/test-$1.log" 2>&1
    echo $? > "$tmp/test-$1.rc"
  }
  for i in "${!parts[@]}"; do  # INGOT_TEST_PARALLEL=1: every part at once (the driver's compiler is CPU-bound)
    if [[ -n ${INGOT_TEST_PARALLEL:-} ]]; then one_part "$i" "${parts[$i]}" & else one_part "$i" "${parts[$i]}"; fi
  done
  wait
  for i in "${!parts[@]}"; do
    { echo "== ingot test --backend $tb --filter '${parts[$i]}' ${tdt:+--dtype $tdt}"; cat "$tmp/test-$i.log"; } >> "$out/test.log"
    echo "ingot test ($tb, '${parts[$i]}') rc=$(cat "$tmp/test-$i.rc")"; tail -3 "$tmp/test-$i.log" | grep -E "passed,|^skipped|no time"
  done
  grep -E "^FAIL" "$out/test.log" | head -12
fi
IFS=';' read -ra items <<< "${INGOT_OCL_CHECK:-}"
n=0
for it in "${items[@]}"; do
  IFS='|' read -r filt dt cs f16 <<< "$it"; n=$((n + 1))
  INGOT_OPENCL_F16=${f16:-auto} timeout 300 ./build/ingot bench --backend opencl --check --filter "$filt" --dtype "$dt" --cases "$cs" --reps 5 \
    --warmup 2 > "$out/ocl-check-$n.log" 2>&1
  echo "opencl check $n ($it) rc=$?"; grep -E "device|check|skip|^[a-z_0-9]+ +(bf16|f16|f32) " "$out/ocl-check-$n.log" | head -12
done
echo "total: $(( $(date +%s) - t0 )) s"
