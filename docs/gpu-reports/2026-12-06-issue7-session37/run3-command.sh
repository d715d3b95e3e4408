#!/usr/bin/env bash
# Step 38: NCHW row-pair stores per task (rps) against rps 0, beside the default, on any card; on an H200 also the snap
# of record of the 30 rows and memcheck of every family; elsewhere memcheck of depthwise_conv2d only.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
export INGOT_SNAP_GPU=H200
export INGOT_SNAP_FILTER=depthwise_conv1d,causal_conv1d_prefill,depthwise_conv2d,conv2d_grouped,conv3d_grouped
export INGOT_SNAP_CASES='^(B8_C4096_L4096_K4_pad3|B4_C512_L65536_K3_s2|B8_C4096_L4096_K4|N32_C256_56x56_3x3_g32|N4_C64_16x56x56_3x3x3_g8|N32_C384_56x56_(3x3|7x7))$'
export INGOT_VARIANT_FILTER='depthwise_conv2d$' INGOT_VARIANT_CASES='^N32_C384_56x56_(3x3|7x7)$' INGOT_VARIANT_DTYPE=bf16,f16
export INGOT_VARIANTS="rps=0 rps=1 rps=0"
export INGOT_SASS="depthwise_conv2d|bf16|N32_C384_56x56_7x7|rps=0 depthwise_conv2d|bf16|N32_C384_56x56_7x7|rps=1 depthwise_conv2d|bf16|N32_C384_56x56_3x3|rps=0 depthwise_conv2d|bf16|N32_C384_56x56_3x3|rps=1"
if [[ $gpu == *H200* ]]; then
  export INGOT_DEADLINE=470 INGOT_MEMCHECK_CAP=220
  export INGOT_CHECK_FILTER=depthwise_conv2d,depthwise_conv1d,causal_conv1d_prefill,conv2d_grouped,conv3d_grouped
else
  export INGOT_DEADLINE=200 INGOT_MEMCHECK_CAP=90 INGOT_CHECK_FILTER='depthwise_conv2d$'
fi
bash scripts/gpu-baseline.sh
