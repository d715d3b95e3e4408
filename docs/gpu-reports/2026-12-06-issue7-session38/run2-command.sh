#!/usr/bin/env bash
# On an H200: compute-sanitizer memcheck of every issue-7 family to completion. Elsewhere: memcheck of the NCHW 2-D
# family alone (its plane-buffer fix, 028ca1a, and step 38's rps cases have not run on a GPU yet).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if [[ $gpu == *H200* ]]; then
  export INGOT_DEADLINE=560 INGOT_MEMCHECK_CAP=500
  export INGOT_CHECK_FILTER=depthwise_conv2d,depthwise_conv1d,causal_conv1d_prefill,conv2d_grouped,conv3d_grouped
else
  export INGOT_DEADLINE=300 INGOT_MEMCHECK_CAP=250 INGOT_CHECK_FILTER='depthwise_conv2d$'
fi
bash scripts/gpu-baseline.sh
