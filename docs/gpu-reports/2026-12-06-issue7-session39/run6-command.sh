#!/usr/bin/env bash
G='bw=2,ya=0 ya=0 bw=2 bw=2,ya=0 skip=1'
export INGOT_BENCH="conv2d_grouped|bf16|^N32_C256_56x56_3x3_g32\$|$G;conv2d_grouped|f16|^N32_C256_56x56_3x3_g32\$|$G"
export INGOT_MEMCHECK=conv2d_grouped
bash scripts/gpu-profile.sh
