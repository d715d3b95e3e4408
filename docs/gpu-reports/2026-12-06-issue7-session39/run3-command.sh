#!/usr/bin/env bash
N='skip=0,stream=1 skip=1,stream=1 skip=0,stream=1 skip=1,stream=1'
export INGOT_BENCH="depthwise_conv2d_nhwc|f32|^N32_C384_56x56_7x7\$|$N;depthwise_conv2d_nhwc|bf16|^N32_C384_56x56_3x3\$|$N;depthwise_conv2d_nhwc|f16|^N32_C384_56x56_3x3\$|$N"
export INGOT_TEST="cuda|depthwise_conv2d_nhwc" INGOT_TEST_LIMIT=300
bash scripts/gpu-profile.sh
