#!/usr/bin/env bash
# H200: the baseline of record (snap + cuDNN reference of the 30 rows), step 41's variants, then memcheck.
# Any other card: step 41's variants (skip = 0 against the default), alternated, then memcheck of the two families.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
if [[ $gpu == *H200* ]]; then
  export INGOT_SNAP_GPU=H200 INGOT_DEADLINE=570 INGOT_MEMCHECK_CAP=300
  export INGOT_CHECK_FILTER=depthwise_conv2d,depthwise_conv1d,causal_conv1d_prefill,conv2d_grouped,conv3d_grouped
  export INGOT_SNAP_FILTER=depthwise_conv1d,causal_conv1d_prefill,depthwise_conv2d,conv2d_grouped,conv3d_grouped
  export INGOT_SNAP_CASES='^(B8_C4096_L4096_K4_pad3|B4_C512_L65536_K3_s2|B8_C4096_L4096_K4|N32_C256_56x56_3x3_g32|N4_C64_16x56x56_3x3x3_g8|N32_C384_56x56_(3x3|7x7))$'
  export INGOT_VARIANT_FILTER=depthwise_conv2d_nhwc INGOT_VARIANT_CASES='^N32_C384_56x56_(3x3|7x7)$'
  export INGOT_VARIANT_DTYPE=bf16,f16,f32 INGOT_VARIANTS='skip=0,stream=1'
  export INGOT_VARIANT2_FILTER=conv2d_grouped INGOT_VARIANT2_CASES='^N32_C256_56x56_3x3_g32$' INGOT_VARIANTS2='skip=0'
  bash scripts/gpu-baseline.sh
else
  G='skip=0 skip=1 skip=0 skip=1'
  N='skip=0,stream=1 skip=1,stream=1 skip=0,stream=1 skip=1,stream=1'
  export INGOT_BENCH="conv2d_grouped|bf16|^N32_C256_56x56_3x3_g32\$|$G;conv2d_grouped|f16|^N32_C256_56x56_3x3_g32\$|$G;depthwise_conv2d_nhwc|bf16|^N32_C384_56x56_3x3\$|$N;depthwise_conv2d_nhwc|f16|^N32_C384_56x56_3x3\$|$N;depthwise_conv2d_nhwc|f32|^N32_C384_56x56_(3x3|7x7)\$|$N"
  export INGOT_MEMCHECK=conv2d_grouped INGOT_TEST="cuda|depthwise_conv2d_nhwc" INGOT_TEST_LIMIT=500
  bash scripts/gpu-profile.sh
fi
