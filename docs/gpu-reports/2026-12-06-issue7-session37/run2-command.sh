#!/usr/bin/env bash
# On an H200: the snap of record (gpu-now.sh). Elsewhere: snap --check of the 30 issue-7 rows (NHWC first), at most
# ~440 s, every row's time and its check against the f64 CPU oracle at bench size.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if [[ $gpu == *H200* ]]; then exec bash gpu-now.sh; fi
out=${OUT:-$PWD/gpu-out}; mkdir -p "$out"; t0=$(date +%s)
export INGOT_CACHE_DIR=$PWD/.ingot-cache
{ echo "commit: $(cat .commit)"; echo "gpu: $gpu"; } > "$out/check-summary.txt"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DINGOT_WERROR=OFF -DINGOT_BUILD_TESTS=OFF > /dev/null 2>&1 &&
  cmake --build build -j "$(nproc)" --target ingot-cli > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s" >> "$out/check-summary.txt"
C='^(B8_C4096_L4096_K4_pad3|B4_C512_L65536_K3_s2|B8_C4096_L4096_K4|N32_C256_56x56_3x3_g32|N4_C64_16x56x56_3x3x3_g8|N32_C384_56x56_(3x3|7x7))$'
i=0
for f in ${CHECK_FAMILIES:-depthwise_conv1d causal_conv1d_prefill}; do
  i=$((i + 1)); left=$(( 520 - ($(date +%s) - t0) )); (( left > 20 )) || break
  timeout "$left" ./build/ingot snap --backend cuda --check --filter "$f" --cases "$C" --out "$out/check$i.json" \
    > "$out/check$i.log" 2>&1
  echo "$f rc=$? ($(( $(date +%s) - t0 )) s)" >> "$out/check-summary.txt"
done
cat "$out/check-summary.txt"
