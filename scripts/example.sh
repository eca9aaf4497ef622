#!/bin/sh
# Installs the dependencies, builds, and analyses the example traces that
# ship in examples/traces (8 generated ranks; rank 5 computes 30% slower)
# with 2 MPI processes.  This is the README's first command.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target hta-mpi
# Open MPI refuses to run as root unless told it is intended.
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mpirun -n 2 --oversubscribe build/hta-mpi --force -o example-results.h5 examples/traces
