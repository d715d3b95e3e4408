#!/usr/bin/env bash
# H200: the baseline of record, old defaults and rl beside the new. Other card: rl (row lanes) and pipe on the grouped
# 3-D and 2-D rows, each beside the default; ncu metrics of the 3-D default, rl, and the 2-D default and rl.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
c3='^N4_C64_16x56x56_3x3x3_g8$' c2='^N32_C256_56x56_3x3_g32$'
if [[ $gpu == *H200* ]]; then
  export INGOT_VARIANT2_FILTER=conv3d_grouped INGOT_VARIANT2_CASES="$c3" INGOT_VARIANT_DTYPE=bf16,f16
  export INGOT_SNAP_GPU=H200 INGOT_DEADLINE=565 INGOT_MEMCHECK_CAP=300
  export INGOT_CHECK_FILTER=depthwise_conv2d,depthwise_conv1d,causal_conv1d_prefill,conv2d_grouped,conv3d_grouped
  export INGOT_SNAP_FILTER=depthwise_conv1d,causal_conv1d_prefill,depthwise_conv2d,conv2d_grouped,conv3d_grouped
  export INGOT_SNAP_CASES='^(B8_C4096_L4096_K4_pad3|B4_C512_L65536_K3_s2|B8_C4096_L4096_K4|N32_C256_56x56_3x3_g32|N4_C64_16x56x56_3x3x3_g8|N32_C384_56x56_(3x3|7x7))$'
  export INGOT_VARIANT_FILTER=conv2d_grouped INGOT_VARIANT_CASES="$c2"
  export INGOT_VARIANTS='bw=2,ya=0 ya=0 rl=1'
  export INGOT_VARIANTS2='stage=2,ds=8,threads=64 rl=1,minb=6 stage=2,ds=8,threads=128,pipe=1,rl=1'
  bash scripts/gpu-baseline.sh
else
  v3='rl=1 rl=1,minb=6 stage=2,ds=8,threads=128,pipe=1 stage=2,ds=8,threads=128,pipe=1,rl=1 stage=2,ds=4,threads=64,rl=1 stage=2,ds=8,threads=64,pipe=1,rl=1 stage=2,ds=16,threads=256,pipe=1,msm=120,rl=1'
  export INGOT_BENCH="conv3d_grouped|bf16|$c3|$v3;conv3d_grouped|f16|$c3|rl=1,minb=6 stage=2,ds=8,threads=128,pipe=1,rl=1;conv2d_grouped|bf16|$c2|rl=1;conv2d_grouped|f16|$c2|rl=1"
  export INGOT_NCU="conv3d_grouped|bf16|$c3|conv3d;conv3d_grouped|bf16|$c3|conv3d|rl=1,minb=6;conv2d_grouped|bf16|$c2|conv2d;conv2d_grouped|bf16|$c2|conv2d|rl=1"
  bash scripts/gpu-profile.sh
fi
