#!/bin/sh
# Installs the dependencies, builds, and runs every check; the README's
# second command and what CI runs:
#   1. the test suite under AddressSanitizer + UndefinedBehaviorSanitizer,
#   2. the fuzz step: saved reproducers and seeds replayed, then a fixed
#      number of fixed-seed executions per libFuzzer harness (fuzz/run.sh),
#   3. the quick performance regression check (bench/quick_regression.sh),
#   4. the test suite (ctest, two cases at a time), last, so that its
#      summary ends the output.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --test
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON >/dev/null
cmake --build build -j "$(nproc)"
./scripts/test-sanitized.sh
./fuzz/run.sh
bench/quick_regression.sh build
cd build
ctest -j2 --output-on-failure
