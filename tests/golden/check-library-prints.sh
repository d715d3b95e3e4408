#!/usr/bin/env bash
# The printed source of every default variant of the kernel library (each kernel x dtype x case naming no tuning
# option, in CUDA, HIP, OpenCL C, MSL and GLSL) against the digests pinned in library-defaults.sha256: a change to a kernel,
# a block or the printer that alters a default's print fails here, naming the variants; a change that should alter
# them is committed with the file regenerated (--update) and the GPU times of the changed rows measured.
# Usage: check-library-prints.sh path/to/ingot [--update]
set -euo pipefail
ingot=${1:?usage: check-library-prints.sh path/to/ingot [--update]}
golden=$(cd "$(dirname "$0")" && pwd)/library-defaults.sha256
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$ingot" build --backend all --sources-only --out "$tmp/src" > /dev/null
(cd "$tmp/src" && sha256sum -- *.cu *.hip *.cl *.metal *.comp | LC_ALL=C sort -k2) > "$tmp/now"
if [[ ${2:-} == --update ]]; then
  cp "$tmp/now" "$golden"
  echo "wrote $(wc -l < "$golden") digests to $golden"
  exit 0
fi
[[ -f $golden ]] || { echo "no $golden: run with --update"; exit 1; }
if diff <(LC_ALL=C sort -k2 "$golden") "$tmp/now" > "$tmp/diff"; then
  echo "$(wc -l < "$tmp/now") default-variant sources print as pinned"
  exit 0
fi
echo "default-variant prints differ from $golden (< pinned, > now):"
cat "$tmp/diff"
exit 1
