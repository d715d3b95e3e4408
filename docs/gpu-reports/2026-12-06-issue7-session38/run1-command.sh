#!/usr/bin/env bash
# On an H200: memcheck of every issue-7 family to completion, then the bf16 issue-7 rows with ptxas's default store
# cache operator and with evict-first stores (.cs), alternated. Elsewhere: the store-cache benches alone.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
t0=$(date +%s)
out=${OUT:-$PWD/gpu-out}; mkdir -p "$out"
if [[ $gpu == *H200* ]]; then
  INGOT_DEADLINE=360 INGOT_MEMCHECK_CAP=330 \
  INGOT_CHECK_FILTER=depthwise_conv2d,depthwise_conv1d,causal_conv1d_prefill,conv2d_grouped,conv3d_grouped \
    bash scripts/gpu-baseline.sh
else
  INGOT_DEADLINE=120 bash scripts/gpu-baseline.sh
fi
C='^(B8_C4096_L4096_K4_pad3|B4_C512_L65536_K3_s2|B8_C4096_L4096_K4|N32_C256_56x56_3x3_g32|N4_C64_16x56x56_3x3x3_g8|N32_C384_56x56_(3x3|7x7))$'
F=depthwise_conv1d,causal_conv1d_prefill,depthwise_conv2d,conv2d_grouped,conv3d_grouped
i=0
for sc in ${CACHES:-- cs - cs}; do
  i=$((i + 1)); left=$(( 570 - ($(date +%s) - t0) )); (( left > 30 )) || break
  extra=(); [[ $sc != - ]] && extra=(--cuda-store-cache "$sc")
  timeout "$left" ./build/ingot bench --backend cuda --dtype "${DT:-bf16}" --filter "$F" --cases "$C" "${extra[@]}" \
    > "$out/cache$i-$sc.log" 2>&1
  echo "store cache $sc rc=$? ($(( $(date +%s) - t0 )) s)" >> "$out/summary.txt"
done
cat "$out/summary.txt"
