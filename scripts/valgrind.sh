#!/bin/sh
# Valgrind memcheck of hta-mpi on every real trace folder (docs/robustness.md):
# one process, started directly (no mpirun), with --detail so that every
# table is built and written, and again with --round-like-hta.  Fails on any
# memory error or definite leak; tests/valgrind.supp excuses Open MPI's own
# allocations only.
# usage: scripts/valgrind.sh [BUILD_DIR (build)] [TRACES_DIR (../shared/traces)]
set -eu
cd "$(dirname "$0")/.."
build="${1:-build}"
traces="${2:-$(pwd)/../shared/traces}/hta"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's plugins stay loaded, so the suppressions see their frames.
export OMPI_MCA_mca_base_component_disable_dlclose=1
status=0
for folder in "$traces"/*/; do
  name=$(basename "$folder")
  for mode in --detail --round-like-hta; do
    log="$work/$name$mode.log"
    if valgrind --error-exitcode=99 --num-callers=50 --leak-check=full \
         --errors-for-leak-kinds=definite \
         --suppressions=/usr/share/openmpi/openmpi-valgrind.supp \
         --suppressions=tests/valgrind.supp \
         "$build/hta-mpi" -q --force "$mode" -o "$work/out.h5" "$folder" >"$log" 2>&1; then
      echo "valgrind: $name $mode: $(grep -o 'ERROR SUMMARY: [0-9]* errors' "$log")"
    else
      echo "valgrind: $name $mode FAILED:"
      cat "$log"
      status=1
    fi
  done
done
exit $status
