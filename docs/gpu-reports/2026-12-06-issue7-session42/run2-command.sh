#!/usr/bin/env bash
# Any card. On an H200: the baseline of record (reference + snap of the 30 issue-7 rows), the grouped old defaults and
# step 47's wy variants beside the new, memcheck of the five families with the time left. On any other card: only
# step 47's wy variants of the grouped 3-D row (bf16, f16) beside the default, then memcheck of both grouped families.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
c3='^N4_C64_16x56x56_3x3x3_g8$' c2='^N32_C256_56x56_3x3_g32$'
wyv="wy=1,minb=7 wy=1 minb=7 wy=1,minb=7"
export INGOT_VARIANT2_FILTER=conv3d_grouped INGOT_VARIANT2_CASES="$c3" INGOT_VARIANT_DTYPE=${VD:-bf16,f16}
if [[ $gpu == *H200* ]]; then
  export INGOT_SNAP_GPU=H200 INGOT_DEADLINE=${DL:-540} INGOT_MEMCHECK_CAP=300
  export INGOT_CHECK_FILTER=depthwise_conv2d,depthwise_conv1d,causal_conv1d_prefill,conv2d_grouped,conv3d_grouped
  export INGOT_SNAP_FILTER=depthwise_conv1d,causal_conv1d_prefill,depthwise_conv2d,conv2d_grouped,conv3d_grouped
  export INGOT_SNAP_CASES='^(B8_C4096_L4096_K4_pad3|B4_C512_L65536_K3_s2|B8_C4096_L4096_K4|N32_C256_56x56_3x3_g32|N4_C64_16x56x56_3x3x3_g8|N32_C384_56x56_(3x3|7x7))$'
  export INGOT_VARIANT_FILTER=conv2d_grouped INGOT_VARIANT_CASES="$c2" INGOT_VARIANTS='bw=2,ya=0 ya=0'
  export INGOT_VARIANTS2="stage=2,ds=8,threads=64 $wyv"
else
  export INGOT_DEADLINE=${DL:-150} INGOT_VARIANTS2="$wyv" INGOT_MEMCHECK_CAP=80
  export INGOT_CHECK_FILTER=conv2d_grouped,conv3d_grouped
fi
bash scripts/gpu-baseline.sh
