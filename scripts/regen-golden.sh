#!/usr/bin/env bash
# Regenerates tests/golden/* from the current printer and library. Review the diff before committing.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
cmake --build build --target ingot_unit_tests ingot-cli
INGOT_UPDATE_GOLDEN=1 ./build/tests/ingot_unit_tests --gtest_filter='Codegen.Golden*'
bash tests/golden/check-library-prints.sh build/ingot --update   # the library's default variants
git status --short tests/golden
