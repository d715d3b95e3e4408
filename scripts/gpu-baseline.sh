#!/usr/bin/env bash
# One short call on the GPU machine when device time is scarce: build only the CLI, measure the cuDNN
# reference and `ingot snap` of the chosen default rows in the same run, bench extra variants, then
# run `ingot test --backend cuda` of the named kernels under compute-sanitizer memcheck (at most INGOT_MEMCHECK_CAP s,
# default 150) with the time left. Every step is cut at a global deadline; at most 8 files come
# back ($OUT): summary.txt, baseline.json, reference.json, snap.log, variants.log, variants.json, memcheck.log (and
# sass.txt).
# Usage (env): INGOT_REQUIRE_GPU=H200 (below) INGOT_DEADLINE=seconds (default 480) INGOT_SNAP_FILTER=a,b INGOT_SNAP_CASES=regex
#              INGOT_VARIANT_FILTER=a,b INGOT_VARIANT_CASES=regex INGOT_VARIANT_DTYPE=bf16[,f32..]
#              INGOT_VARIANTS="K=V,K=V K=V" (space-separated: each also run as ingot bench --variant, beside the default)
#              INGOT_VARIANT2_FILTER, INGOT_VARIANT2_CASES, INGOT_VARIANTS2: the same for a second kernel (its own keys)
#              INGOT_CHECK_FILTER=a,b (ingot test --backend cuda under memcheck) INGOT_MEMCHECK_CAP=seconds
#              INGOT_SNAP_GPU=H200 (the snap only on that card; the rest runs on any)
#              INGOT_SNAP_CHECK=1 (snap --check: every row also against the CPU oracle at its size; 15-25 s a row for
#              the issue-7 rows on the 16-core H200 machine: 30 rows do not fit one call with the reference)
#              INGOT_B2B=N (the reference and snap again with N launches back to back per timed window:
#              reference-b2b.json, baseline-b2b.json, snap-b2b.log)
#              INGOT_SASS="kernel|dtype|case|K=V ..." (space-separated items, K=V pairs joined by commas: each
#              kernel's CUDA print disassembled by scripts/gpu-sass.sh, histograms and whole listings in sass.txt)
# Write the local commit to .commit first and name it in the run call's carry (.commit is git-ignored: without carry
# it does not reach the device copy, whose git metadata may be older).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-out}; mkdir -p "$out"; out=$(cd "$out" && pwd)
# INGOT_REQUIRE_GPU=NAME (e.g. H200): stop before building on any other card (scripts/require-gpu.sh)
source scripts/require-gpu.sh
export INGOT_CACHE_DIR=$PWD/.ingot-cache
t0=$(date +%s)
deadline=$((t0 + ${INGOT_DEADLINE:-480}))
left() { echo $((deadline - $(date +%s))); }
log() { echo "$*" | tee -a "$out/summary.txt"; }
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(cat .commit 2>/dev/null || git rev-parse HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  nvcc --version 2>&1 | tail -2
} > "$out/summary.txt"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DINGOT_WERROR=OFF -DINGOT_BUILD_TESTS=OFF > "$out/build.tmp" 2>&1 &&
  cmake --build build -j "$(nproc)" --target ingot-cli >> "$out/build.tmp" 2>&1 ||
  { grep -E "error|Error" "$out/build.tmp" | head -30 | tee -a "$out/summary.txt"; exit 1; }
rm -f "$out/build.tmp"
log "build: $(( $(date +%s) - t0 )) s"
./build/ingot device >> "$out/summary.txt" 2>&1
# INGOT_SNAP_GPU=NAME (e.g. H200): the snap and reference only on that card (a baseline of record), the later steps on
# any card (variants compare within the call)
snap_gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
if [[ -n ${INGOT_SNAP_FILTER:-} && -n ${INGOT_SNAP_GPU:-} && $snap_gpu != *"$INGOT_SNAP_GPU"* ]]; then
  log "no snap: the GPU is '${snap_gpu:-none}', not the $INGOT_SNAP_GPU asked for (INGOT_SNAP_GPU)"
  INGOT_SNAP_FILTER=
fi
if [[ -n ${INGOT_SNAP_FILTER:-} ]]; then
  args=(--filter "$INGOT_SNAP_FILTER" ${INGOT_SNAP_CASES:+--cases "$INGOT_SNAP_CASES"})
  ./build/ingot bench --emit-cases "$out/cases.tmp" "${args[@]}" > /dev/null
  timeout $(( $(left) > 60 ? $(left) / 3 : 20 )) python3 bench/reference_torch.py "$out/cases.tmp" \
    "$out/reference.json" > "$out/reference.tmp" 2>&1
  log "reference rc=$? ($(( $(date +%s) - t0 )) s): $(tail -1 "$out/reference.tmp")"
  rm -f "$out/cases.tmp" "$out/reference.tmp"
  timeout $(( $(left) > 30 ? $(left) - 20 : 10 )) ./build/ingot snap --backend cuda --reference "$out/reference.json" \
    --out "$out/baseline.json" "${args[@]}" ${INGOT_SNAP_CHECK:+--check} > "$out/snap.log" 2>&1
  log "snap rc=$? ($(( $(date +%s) - t0 )) s)"
  if [[ -n ${INGOT_B2B:-} && $(left) -gt 60 ]]; then
    # The same rows again with INGOT_B2B launches (and cuDNN calls) back to back per pair of events.
    ./build/ingot bench --emit-cases "$out/cases.tmp" "${args[@]}" > /dev/null
    timeout $(( $(left) / 3 )) python3 bench/reference_torch.py "$out/cases.tmp" "$out/reference-b2b.json" \
      --back-to-back "$INGOT_B2B" > "$out/reference.tmp" 2>&1
    log "reference back to back rc=$? ($(( $(date +%s) - t0 )) s): $(tail -1 "$out/reference.tmp")"
    rm -f "$out/cases.tmp" "$out/reference.tmp"
    timeout $(( $(left) > 30 ? $(left) - 20 : 10 )) ./build/ingot snap --backend cuda --back-to-back "$INGOT_B2B" \
      --reference "$out/reference-b2b.json" --out "$out/baseline-b2b.json" "${args[@]}" > "$out/snap-b2b.log" 2>&1
    log "snap back to back rc=$? ($(( $(date +%s) - t0 )) s)"
  fi
fi
memcheck() {  # compute-sanitizer memcheck of ingot test --backend cuda over INGOT_CHECK_FILTER, at most $1 s
  [[ -n ${INGOT_CHECK_FILTER:-} && $(left) -gt 30 ]] && command -v compute-sanitizer > /dev/null || return 0
  local cap=$1; (( cap > $(left) - 5 )) && cap=$(( $(left) - 5 ))
  timeout "$cap" compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    ./build/ingot test --backend cuda --filter "$INGOT_CHECK_FILTER" > "$out/memcheck.tmp" 2>&1
  local rc=$?
  { grep -E "^FAIL" "$out/memcheck.tmp" | head -5; grep -E "ERROR SUMMARY|LEAK SUMMARY|passed,|progress" "$out/memcheck.tmp" | tail -4; } \
    > "$out/memcheck.log"
  log "memcheck of $INGOT_CHECK_FILTER rc=$rc ($(( $(date +%s) - t0 )) s): $(tr '\n' ' ' < "$out/memcheck.log")"
  rm -f "$out/memcheck.tmp"
}
variants() {  # $1 filter, $2 cases regex, $3 space-separated variants: one bench per dtype, appended to variants.log
  # (INGOT_VARIANT_DTYPE may name several dtypes, a comma list; variants.json holds the last bench's rows)
  IFS=, read -ra vdts <<< "${INGOT_VARIANT_DTYPE:-}"
  local vargs=(); for v in $3; do vargs+=(--variant "$v"); done
  [[ ${#vdts[@]} -eq 0 ]] && vdts=("")
  for vdt in "${vdts[@]}"; do
    (( $(left) > 30 )) || break
    timeout $(( $(left) - 10 )) ./build/ingot bench --backend cuda --filter "$1" ${2:+--cases "$2"} \
      ${vdt:+--dtype "$vdt"} "${vargs[@]}" --json "$out/variants.json" >> "$out/variants.log" 2>&1
    log "variants of $1 ${vdt:-all dtypes} rc=$? ($(( $(date +%s) - t0 )) s)"
  done
}
: > "$out/variants.log"
if [[ -n ${INGOT_VARIANT_FILTER:-} && $(left) -gt 30 ]]; then
  variants "$INGOT_VARIANT_FILTER" "${INGOT_VARIANT_CASES:-}" "${INGOT_VARIANTS:-}"
fi
if [[ -n ${INGOT_VARIANT2_FILTER:-} && $(left) -gt 30 ]]; then  # a second kernel's variants (other keys)
  variants "$INGOT_VARIANT2_FILTER" "${INGOT_VARIANT2_CASES:-}" "${INGOT_VARIANTS2:-}"
fi
if [[ -n ${INGOT_SASS:-} ]]; then  # (scripts/gpu-sass.sh, its whole listing kept)
  read -ra items <<< "$INGOT_SASS"
  INGOT_SASS_FULL=1 bash scripts/gpu-sass.sh "$out/sass.d" "${items[@]}" > "$out/sass.txt" 2>&1
  log "sass rc=$? ($(( $(date +%s) - t0 )) s)"
  for f in "$out"/sass.d/*.sass; do [[ -f $f ]] && { echo "# $f"; cat "$f"; } >> "$out/sass.txt"; done
  rm -rf "$out/sass.d"
fi
memcheck "${INGOT_MEMCHECK_CAP:-150}"
log "total: $(( $(date +%s) - t0 )) s"
