#!/usr/bin/env bash
# Compiles every emitted kernel source under DIR with the compiler its dialect needs, where
# that compiler exists on this machine:
#   .cu     nvcc -arch=sm_90 -cubin            (CUDA toolkit)      -> compiled to SASS for sm_90
#   .hip    hipcc --offload-arch=gfx90a -c      (Debian's hipcc)    -> compiled for AMD gfx90a
#   .cl     clang -x cl -cl-std=CL1.2 -fsyntax-only (and -DINGOT_PORTABLE_F16 where used) -> checked (PoCL runs them)
#   .metal  clang++ against tests/compile/metal_shim                -> syntax/type check only;
#           Apple's Metal compiler did NOT check these files.
#   .comp   glslangValidator -V --target-env vulkan1.2 (or the .spv beside it), then spirv-val -> SPIR-V validated
# A missing compiler is a counted skip with its reason, never a pass.
# Usage: scripts/check-sources.sh DIR
set -uo pipefail
dir=${1:?usage: check-sources.sh DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
pass=0; fail=0; skip=0
declare -A skip_reason
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

have() { command -v "$1" >/dev/null 2>&1; }
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}

check() {  # file
  local f=$1 log=$tmp/log
  case "$f" in
    *.cu)
      [[ -x $NVCC ]] || { skip=$((skip+1)); skip_reason[cuda]="nvcc not found"; return; }
      "$NVCC" -arch=sm_90 -cubin -Werror all-warnings -o "$tmp/out.cubin" "$f" >"$log" 2>&1 ;;
    *.hip)
      have hipcc || { skip=$((skip+1)); skip_reason[hip]="hipcc not installed (apt-get install hipcc)"; return; }
      hipcc --offload-arch=gfx90a -c -o "$tmp/out.o" "$f" >"$log" 2>&1 ;;
    *.cl)
      have clang || { skip=$((skip+1)); skip_reason[opencl]="clang not found"; return; }
      # both builds of the f16 conversions (the runtime defines INGOT_PORTABLE_F16 on PoCL)
      clang -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -fsyntax-only -Werror "$f" >"$log" 2>&1 &&
        { ! grep -q INGOT_PORTABLE_F16 "$f" ||
          clang -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -fsyntax-only -Werror -DINGOT_PORTABLE_F16 \
            "$f" >>"$log" 2>&1; } ;;
    *.metal)
      have clang++ || { skip=$((skip+1)); skip_reason[msl]="clang++ not found"; return; }
      clang++ -std=c++17 -fsyntax-only -x c++ -I"$here/tests/compile/metal_shim" -Wno-unknown-attributes \
        -Wno-unused-function "$f" >"$log" 2>&1 ;;
    *.comp)
      { have glslangValidator && have spirv-val; } ||
        { skip=$((skip+1)); skip_reason[glsl]="glslangValidator/spirv-val not installed (glslang-tools, spirv-tools)"; return; }
      # the SPIR-V `ingot build` wrote beside it (shaderc, glslang's front end) where present, else glslangValidator's
      spv=${f%.comp}.spv
      if [[ ! -f $spv ]]; then
        spv=$tmp/out.spv
        glslangValidator -V --target-env vulkan1.2 -S comp -o "$spv" "$f" >"$log" 2>&1
      fi &&
        spirv-val --target-env vulkan1.2 "$spv" >>"$log" 2>&1 ;;
    *) return ;;
  esac
  if [[ $? -eq 0 ]]; then
    pass=$((pass+1)); echo "PASS $f"
  else
    fail=$((fail+1)); echo "FAIL $f"; sed 's/^/    /' "$log" | head -40
  fi
}

shopt -s nullglob
files=("$dir"/*.cu "$dir"/*.hip "$dir"/*.cl "$dir"/*.metal "$dir"/*.comp)
[[ ${#files[@]} -gt 0 ]] || { echo "no kernel sources under $dir"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
for f in "${files[@]}"; do check "$f"; done
for k in "${!skip_reason[@]}"; do echo "skipped $k: ${skip_reason[$k]}"; done
echo "note: .metal files were checked with clang against a shim header, not by Apple's Metal compiler"
echo "$pass passed, $fail failed, $skip skipped"
[[ $fail -eq 0 && $pass -gt 0 ]]
