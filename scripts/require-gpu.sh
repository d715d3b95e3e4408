# Sourced by scripts/gpu-baseline.sh and scripts/gpu-profile.sh (after `cd` to the repository root and setting $out):
# INGOT_REQUIRE_GPU=NAME (e.g. H200) stops the script at once, before building, where the GPU's name lacks NAME, and
# says so in $out/not-run.txt (the device tool may give an H100 for an H200 call; a baseline of record must come from
# the H200).
if [[ -n ${INGOT_REQUIRE_GPU:-} ]]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  if [[ $gpu != *"$INGOT_REQUIRE_GPU"* ]]; then
    echo "the GPU is '${gpu:-none}', not the $INGOT_REQUIRE_GPU asked for (INGOT_REQUIRE_GPU); stopping" |
      tee "$out/not-run.txt"
    exit 3
  fi
fi
