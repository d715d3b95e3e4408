#!/usr/bin/env bash
# On an H200 only: the snap of record of the 30 issue-7 rows with cuDNN, step 38's rps beside the NCHW default, memcheck
# of every issue-7 family. Any other card: stop before building (~30 s).
export INGOT_REQUIRE_GPU=H200 INGOT_SNAP_GPU=H200 INGOT_DEADLINE=430 INGOT_MEMCHECK_CAP=220
export INGOT_CHECK_FILTER=depthwise_conv2d,depthwise_conv1d,causal_conv1d_prefill,conv2d_grouped,conv3d_grouped
export INGOT_SNAP_FILTER=depthwise_conv1d,causal_conv1d_prefill,depthwise_conv2d,conv2d_grouped,conv3d_grouped
export INGOT_SNAP_CASES='^(B8_C4096_L4096_K4_pad3|B4_C512_L65536_K3_s2|B8_C4096_L4096_K4|N32_C256_56x56_3x3_g32|N4_C64_16x56x56_3x3x3_g8|N32_C384_56x56_(3x3|7x7))$'
export INGOT_VARIANT_FILTER='depthwise_conv2d$' INGOT_VARIANT_CASES='^N32_C384_56x56_(3x3|7x7)$' INGOT_VARIANT_DTYPE=bf16,f16
export INGOT_VARIANTS="rps=1 rps=0 rps=1"
bash scripts/gpu-baseline.sh
