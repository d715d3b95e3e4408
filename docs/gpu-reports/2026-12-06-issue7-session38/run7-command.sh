#!/usr/bin/env bash
# Step 40: the NHWC stream kernel's weights through shared memory (stream=1,we=1) against the default, 3x3 in every
# dtype and 7x7 f32; the 3-D grouped default (we now) against we=0; memcheck of the NHWC and 3-D grouped families.
set -uo pipefail
out=${OUT:-$PWD/gpu-out}; mkdir -p "$out"; t0=$(date +%s)
export INGOT_CACHE_DIR=$PWD/.ingot-cache
{ echo "commit: $(cat .commit)"; nvidia-smi --query-gpu=name --format=csv,noheader; } > "$out/summary.txt"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DINGOT_WERROR=OFF -DINGOT_BUILD_TESTS=OFF > /dev/null 2>&1 &&
  cmake --build build -j "$(nproc)" --target ingot-cli > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s" >> "$out/summary.txt"
for dt in bf16 f16 f32; do
  ./build/ingot bench --backend cuda --filter 'depthwise_conv2d_nhwc$' --dtype $dt --cases '^N32_C384_56x56_3x3$' \
    --variant stream=1,we=1 --variant stream=1,we=0 --variant stream=1,we=1 > "$out/n3-$dt.log" 2>&1
done
./build/ingot bench --backend cuda --filter 'depthwise_conv2d_nhwc$' --dtype f32 --cases '^N32_C384_56x56_7x7$' \
  --variant stream=1,we=1 --variant stream=1,we=0 --variant stream=1,we=1 > "$out/n7-f32.log" 2>&1
./build/ingot bench --backend cuda --filter conv3d_grouped --dtype bf16 --cases '^N4_C64_16x56x56_3x3x3_g8$' \
  --variant we=0 --variant we=1 > "$out/g3-bf16.log" 2>&1
echo "benches ($(( $(date +%s) - t0 )) s)" >> "$out/summary.txt"
timeout 200 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 ./build/ingot test --backend cuda \
  --filter 'depthwise_conv2d_nhwc$,conv3d_grouped' > /tmp/mc.log 2>&1
echo "memcheck rc=$? ($(( $(date +%s) - t0 )) s): $(grep -E "passed,|ERROR SUMMARY|LEAK SUMMARY|^FAIL" /tmp/mc.log | tail -4 | tr '\n' ' ')" >> "$out/summary.txt"
for f in "$out"/n*.log "$out"/g*.log; do echo "== $f"; grep -E "^(conv|depth)" "$f" | awk '{print $1,$2,$3,$4,$6,$7}'; done >> "$out/summary.txt"
cat "$out/summary.txt"
