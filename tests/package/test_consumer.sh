#!/usr/bin/env bash
# The installed package from another project's side: installs this build into a fresh prefix, checks that no
# installed CMake file or header names this build's or source tree's path, then configures, builds and runs
# examples/consumer against the prefix alone (find_package(ingot CONFIG REQUIRED)); a request for a version this
# package is not compatible with must fail to configure.
# Where the build has the Python module, `import ingot` must work from the installed tree alone and run a kernel.
# Usage: test_consumer.sh BUILD_DIR SOURCE_DIR WORK_DIR [CXX_COMPILER [PYTHON]]
set -euo pipefail
build=$(realpath "$1") src=$(realpath "$2") work=$(realpath -m "$3") cxx=${4:-c++} python=${5:-}
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
test -f "$prefix/lib/cmake/ingot/ingotConfig.cmake"
test -f "$prefix/lib/cmake/ingot/ingotConfigVersion.cmake"
test -f "$prefix/include/ingot/library.hpp"
test -f "$prefix/include/ingot.h"
if grep -rlF -e "$build" -e "$src" "$prefix/lib/cmake" "$prefix/include"; then
  echo "FAIL: installed files above name the build or source directory" >&2
  exit 1
fi
cmake -S "$src/examples/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=Release > "$work/configure.log"
cmake --build "$work/consumer" -j 2
"$work/consumer/consumer"
# The version file: ingot 0.x does not satisfy a request for 1.0.
mkdir -p "$work/too_new"
cat > "$work/too_new/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(too_new LANGUAGES CXX)
find_package(ingot 1.0 CONFIG REQUIRED)
CMAKE
if cmake -S "$work/too_new" -B "$work/too_new/build" -DCMAKE_PREFIX_PATH="$prefix" > "$work/too_new.log" 2>&1; then
  echo "FAIL: find_package(ingot 1.0) succeeded against ingot $(grep -o 'PACKAGE_VERSION "[^"]*"' \
    "$prefix/lib/cmake/ingot/ingotConfigVersion.cmake")" >&2
  exit 1
fi
if [[ -n $python ]]; then
  site=$(echo "$prefix"/lib/python3/dist-packages)
  test -f "$site/ingot/__init__.py"
  (cd "$work" && PYTHONPATH="$site" "$python" -c '
import numpy, ingot
assert ingot.__file__.startswith("'"$site"'"), ingot.__file__
x = numpy.linspace(-4, 4, 301, dtype=numpy.float32)
y = ingot.activation.silu(x)
assert abs(y - x / (1 + numpy.exp(-x))).max() < 1e-5
print("package: import ingot from the installed tree ran silu")')
fi
echo "package: installed, consumer built and ran, version check refused 1.0"
