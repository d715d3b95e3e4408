#!/usr/bin/env bash
# On an H200 only: the cuDNN reference and the snap of all 30 issue-7 rows (the step 40 defaults). Elsewhere: stop.
export INGOT_REQUIRE_GPU=H200 INGOT_SNAP_GPU=H200 INGOT_DEADLINE=290
export INGOT_SNAP_FILTER=depthwise_conv1d,causal_conv1d_prefill,depthwise_conv2d,conv2d_grouped,conv3d_grouped
export INGOT_SNAP_CASES='^(B8_C4096_L4096_K4_pad3|B4_C512_L65536_K3_s2|B8_C4096_L4096_K4|N32_C256_56x56_3x3_g32|N4_C64_16x56x56_3x3x3_g8|N32_C384_56x56_(3x3|7x7))$'
bash scripts/gpu-baseline.sh
