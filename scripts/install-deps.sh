#!/usr/bin/env bash
# Installs what ingot needs to build and test on Debian 12, from Debian's packages only.
# Skips the install when everything is already present (set INGOT_FORCE_APT=1 to force).
set -euo pipefail
pkgs=(cmake ninja-build g++ make git libgtest-dev libcli11-dev nlohmann-json3-dev
      ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo clang hipcc
      pybind11-dev python3-dev python3-numpy python3-pytest python3-torch
      libvulkan-dev libvulkan1 mesa-vulkan-drivers libshaderc-dev glslang-dev spirv-tools glslang-tools vulkan-tools
      libz3-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 && -z ${INGOT_FORCE_APT:-} ]]; then
  echo "install-deps: all packages present"
  exit 0
fi
SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${pkgs[@]}"
