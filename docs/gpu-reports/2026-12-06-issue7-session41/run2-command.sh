#!/usr/bin/env bash
# H200: the baseline of record (as gpu-now14's H200 branch). Other card: grouped 3-D band heights (rows) beside the
# default (band heights, bw, pipe), and ncu (with the source page) of the default and of pipe.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
if [[ $gpu == *H200* ]]; then
  export INGOT_VARIANT2_FILTER=conv3d_grouped INGOT_VARIANT2_CASES='^N4_C64_16x56x56_3x3x3_g8$' INGOT_VARIANT_DTYPE=bf16,f16
  export INGOT_SNAP_GPU=H200 INGOT_DEADLINE=565 INGOT_MEMCHECK_CAP=300
  export INGOT_CHECK_FILTER=depthwise_conv2d,depthwise_conv1d,causal_conv1d_prefill,conv2d_grouped,conv3d_grouped
  export INGOT_SNAP_FILTER=depthwise_conv1d,causal_conv1d_prefill,depthwise_conv2d,conv2d_grouped,conv3d_grouped
  export INGOT_SNAP_CASES='^(B8_C4096_L4096_K4_pad3|B4_C512_L65536_K3_s2|B8_C4096_L4096_K4|N32_C256_56x56_3x3_g32|N4_C64_16x56x56_3x3x3_g8|N32_C384_56x56_(3x3|7x7))$'
  export INGOT_VARIANT_FILTER=conv2d_grouped INGOT_VARIANT_CASES='^N32_C256_56x56_3x3_g32$'
  export INGOT_VARIANTS='bw=2,ya=0 bw=2,ya=0,we=0,skip=0 ya=0'
  export INGOT_VARIANTS2='stage=2,ds=8,threads=64 stage=2,ds=8,threads=128 stage=2,ds=8,threads=256,msm=64'
  bash scripts/gpu-baseline.sh
else
  c='^N4_C64_16x56x56_3x3x3_g8$'
  v='stage=2,ds=8,threads=128 stage=2,ds=8,threads=128,pipe=1 stage=2,ds=8,threads=64 stage=2,ds=8,threads=64,pipe=1 stage=2,ds=4,threads=64,pipe=1 stage=2,ds=16,threads=128,pipe=1,msm=100 stage=2,ds=16,threads=256,pipe=1,msm=120 stage=2,ds=4,threads=128,rows=4 stage=2,ds=2,threads=128,bw=2 stage=2,ds=4,threads=128,bw=2,msm=80'
  export INGOT_BENCH="conv3d_grouped|bf16|$c|$v;conv3d_grouped|f16|$c|stage=2,ds=8,threads=128,pipe=1 stage=2,ds=16,threads=128,pipe=1,msm=100 stage=2,ds=4,threads=128,rows=4"
  export INGOT_NCU="conv3d_grouped|bf16|$c|conv3d;conv3d_grouped|bf16|$c|conv3d|stage=2,ds=8,threads=128,pipe=1" INGOT_NCU_SOURCE=1
  bash scripts/gpu-profile.sh
fi
