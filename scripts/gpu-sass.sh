#!/usr/bin/env bash
# SASS of chosen kernels on a machine with the CUDA toolkit (cuobjdump): `ingot inspect --stage cuda` of each item,
# compiled by nvcc for sm_90, its registers and an opcode histogram (and, with INGOT_SASS_FULL=1, the whole listing).
# Usage: bash scripts/gpu-sass.sh OUTDIR "kernel|dtype|case[|NAME=VALUE ...]" ...   (needs build/ingot; the pairs
#        separated by spaces or commas)
set -uo pipefail
cd "$(dirname "$0")/.."
out=$1; shift
mkdir -p "$out"
n=0
for it in "$@"; do
  IFS='|' read -r kern dt cs sets <<< "$it"; n=$((n + 1))
  args=(inspect "$kern" --dtype "$dt" --case "$cs" --stage cuda)
  for kv in ${sets//,/ }; do args+=(--set "$kv"); done
  ./build/ingot "${args[@]}" > "$out/k$n.cu" 2> "$out/k$n.err" || { echo "== $it: inspect failed: $(head -2 "$out/k$n.err")"; continue; }
  nvcc -cubin -arch=sm_90 -O3 -Xptxas -v "$out/k$n.cu" -o "$out/k$n.cubin" > "$out/k$n.ptxas" 2>&1
  echo "== $it: $(grep -o 'Used [0-9]* registers.*' "$out/k$n.ptxas")"
  cuobjdump -sass "$out/k$n.cubin" > "$out/k$n.sass" 2>&1
  grep -E '^\s+/\*[0-9a-f]{4,}\*/' "$out/k$n.sass" | sed -E 's#^\s+/\*[0-9a-f]+\*/\s+(@!?U?P[0-9T]+\s+)?([A-Z0-9_.]+).*#\2#' |
    sed -E 's/\..*//' | sort | uniq -c | sort -rn | head -25 | awk '{printf "  %6d %s\n", $1, $2}'
  echo "  total: $(grep -cE '^\s+/\*[0-9a-f]{4,}\*/' "$out/k$n.sass")"
  [[ ${INGOT_SASS_FULL:-0} == 1 ]] || rm -f "$out/k$n.sass"
  rm -f "$out/k$n.cubin" "$out/k$n.cu" "$out/k$n.err" "$out/k$n.ptxas"
done
