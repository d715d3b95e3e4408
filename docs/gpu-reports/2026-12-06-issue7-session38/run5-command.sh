#!/usr/bin/env bash
# Grouped 2-D 16-bit (step 40): the weights through shared memory (we) and 10-row bands against the default, bf16 and
# f16, alternated; then memcheck of conv2d_grouped.
V='we=1 stage=3,rows=10,bw=2 stage=3,rows=10,bw=2,we=1 stage=3,rows=8,bw=7,we=1 we=0 we=1 stage=3,rows=10,bw=2 stage=3,rows=10,bw=2,we=1'
export INGOT_BENCH="conv2d_grouped|bf16|^N32_C256_56x56_3x3_g32\$|$V;conv2d_grouped|f16|^N32_C256_56x56_3x3_g32\$|$V"
export INGOT_MEMCHECK=conv2d_grouped
bash scripts/gpu-profile.sh
