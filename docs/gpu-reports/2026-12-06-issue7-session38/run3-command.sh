#!/usr/bin/env bash
# Grouped 2-D 16-bit: ncu (metrics and per-SASS source counters) of the default, and a bench of band heights, bands per
# work-group and work-group sizes beside it.
export INGOT_NCU='conv2d_grouped|bf16|^N32_C256_56x56_3x3_g32$|conv2d_grouped'
export INGOT_NCU_SOURCE=1
V='stage=3,rows=8,bw=2 stage=3,rows=14,bw=1 stage=3,rows=6,bw=3 stage=3,rows=4,bw=2 stage=3,rows=10,bw=2 stage=3,rows=8,bw=2,threads=256 stage=3,rows=8,bw=1 stage=3,rows=4,bw=4 stage=3,rows=8,bw=2'
export INGOT_BENCH="conv2d_grouped|bf16|^N32_C256_56x56_3x3_g32\$|$V"
bash scripts/gpu-profile.sh
