#!/usr/bin/env bash
# Step 40: the grouped weights through shared memory (we) — 3-D planar as a variant, 2-D pixel (now the default)
# against we=0; where the other issue-7 kernels load their weights relative to their first barrier (SASS); memcheck of
# both grouped families.
set -uo pipefail
out=${OUT:-$PWD/gpu-out}; mkdir -p "$out"; t0=$(date +%s)
export INGOT_CACHE_DIR=$PWD/.ingot-cache
{ echo "commit: $(cat .commit)"; nvidia-smi --query-gpu=name --format=csv,noheader; } > "$out/summary.txt"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DINGOT_WERROR=OFF -DINGOT_BUILD_TESTS=OFF > /dev/null 2>&1 &&
  cmake --build build -j "$(nproc)" --target ingot-cli > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s" >> "$out/summary.txt"
for dt in bf16 f16; do
  ./build/ingot bench --backend cuda --filter conv3d_grouped --dtype $dt --cases '^N4_C64_16x56x56_3x3x3_g8$' \
    --variant we=1 --variant we=0 --variant we=1 > "$out/g3-$dt.log" 2>&1
  ./build/ingot bench --backend cuda --filter conv2d_grouped --dtype $dt --cases '^N32_C256_56x56_3x3_g32$' \
    --variant we=0 --variant we=1 --variant we=0 > "$out/g2-$dt.log" 2>&1
  echo "benches $dt ($(( $(date +%s) - t0 )) s)" >> "$out/summary.txt"
done
mkdir -p /tmp/sass
INGOT_SASS_FULL=1 bash scripts/gpu-sass.sh /tmp/sass "depthwise_conv2d_nhwc|bf16|N32_C384_56x56_3x3" \
  "depthwise_conv2d|bf16|N32_C384_56x56_7x7" "depthwise_conv2d_nhwc|bf16|N32_C384_56x56_7x7" \
  "depthwise_conv2d|bf16|N32_C384_56x56_3x3" "conv3d_grouped|bf16|N4_C64_16x56x56_3x3x3_g8" > /tmp/sass/hist.txt 2>&1
for f in /tmp/sass/*.sass; do
  echo "# $f"; grep -nE "LDG|BAR|LDGSTS|DEPBAR|LDGDEPBAR|EXIT" "$f" | head -60
done > "$out/sass-order.txt"
cat /tmp/sass/hist.txt >> "$out/sass-order.txt"
timeout 200 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 ./build/ingot test --backend cuda \
  --filter conv2d_grouped,conv3d_grouped > /tmp/mc.log 2>&1
echo "memcheck rc=$? ($(( $(date +%s) - t0 )) s): $(grep -E "passed,|ERROR SUMMARY|LEAK SUMMARY|^FAIL" /tmp/mc.log | tail -4 | tr '\n' ' ')" >> "$out/summary.txt"
for f in "$out"/g*.log; do echo "== $f"; grep -E "^conv" "$f" | awk '{print $1,$2,$3,$4,$6,$7}'; done >> "$out/summary.txt"
cat "$out/summary.txt"
