#!/bin/bash
# Memory benchmark (not a test): peak RSS (/usr/bin/time -f %M) of one
# hta-mpi process (no mpirun) analysing 1, 4 and 16 generated traces of
# SIZE_MB MB (.json) each, as a share of the uncompressed size of ONE trace.
# Target: at most 15%, and flat across 1, 4 and 16 traces (a process keeps
# only one trace's events at a time).  Baseline, measured in the same run:
# the same process on one 10 kB trace, i.e. the fixed Open MPI + HDF5 floor,
# so that the table also shows the per-trace part.  One run each: peak RSS
# barely varies between runs (hta-mpi fixes glibc's mmap and trim
# thresholds in main.c, so the allocator's behaviour does not drift), and
# the seconds are only for orientation.
# The 16 traces are generated once into a temporary directory under WORK_DIR
# (16 x SIZE_MB MB of disk) and reused by listing subsets; removed on exit.
#
#   bench/bench_memory.sh [BUILD_DIR] [SIZE_MB] [WORK_DIR]
set -euo pipefail
BUILD=$(realpath "${1:-build}")
SIZE_MB=${2:-1000}
WORK=$(mktemp -d "${3:-/tmp}/hta-memory.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

"$BUILD/hta-tracegen" -o "$WORK/big" --ranks 16 --size-mb "$SIZE_MB" >/dev/null
"$BUILD/hta-tracegen" -o "$WORK/tiny" --ranks 1 --size-mb 0.01 >/dev/null
BYTES=$(stat -c %s "$WORK/big/rank-0.json")

# Runs hta-mpi on the given files; prints its wall time, its peak RSS in kB
# and the 1-minute load average.
measure() {
  local t m
  /usr/bin/time -f "%e %M" -o "$WORK/time.txt" "$BUILD/hta-mpi" -q --force -o "$WORK/r.h5" "$@"
  read -r t m < "$WORK/time.txt"
  echo "$t $m $(cut -d' ' -f1 /proc/loadavg)"
}

echo "Traces of $(awk -v b="$BYTES" 'BEGIN{printf "%.0f", b/1e6}') MB each (.json), one process;" \
     "$(nproc) cores; $(date -u +%F)"
echo
echo "| traces | seconds | peak RSS MB | RSS / one trace | RSS minus floor MB | (RSS - floor) / one trace | load (1 min) |"
echo "|---|---|---|---|---|---|---|"
row() {
  awk -v n="$1" -v t="$2" -v m="$3" -v f="$floor" -v b="$BYTES" -v l="$4" 'BEGIN{
    printf "| %s | %.2f | %.0f | %.1f%% | %.0f | %.1f%% | %s |\n",
      n, t, m/1024, 100*m*1024/b, (m-f)/1024, 100*(m-f)*1024/b, l}'
}
read -r t floor l < <(measure "$WORK/tiny/rank-0.json")
row "floor: one 10 kB trace" "$t" "$floor" "$l"
for n in 1 4 16; do
  files=()
  for r in $(seq 0 $((n - 1))); do files+=("$WORK/big/rank-$r.json"); done
  read -r t m l < <(measure "${files[@]}")
  row "$n" "$t" "$m" "$l"
done
echo
echo "target: RSS / one trace <= 15%, flat across 1, 4 and 16 traces"
