#!/bin/sh
# Installs the dependencies, builds, and runs the whole test suite (ctest).
# This is the README's second command and what CI runs.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON >/dev/null
cmake --build build -j "$(nproc)"
(cd build && ctest --output-on-failure --timeout 1200)
# Reliability (docs/robustness.md): the suite again under ASan + UBSan, then
# 60 s of fuzzing per harness.
./scripts/test-sanitized.sh
./fuzz/run.sh 60
