#!/bin/bash
# Memory benchmark (not a test): peak RSS (/usr/bin/time -f %M) of one
# hta-mpi process (no mpirun) analysing 1, 4 and 16 generated traces of
# SIZE_MB MB (.json) each, as a share of the uncompressed size of ONE trace.
# Target: at most 15%, and flat across 1, 4 and 16 traces (a process keeps
# only one trace's events at a time).  Baseline, measured in the same run:
# the same process on one 10 kB trace, i.e. the fixed Open MPI + HDF5 floor,
# so that the table also shows the per-trace part.  Three runs each: the
# largest peak RSS and the fastest time are shown.  Everything is measured
# twice: with glibc malloc's defaults, and with its mmap threshold fixed at
# its initial 128 KiB (MALLOC_MMAP_THRESHOLD_), under which every large
# buffer is returned to the system when freed; the difference is memory the
# allocator keeps from one trace to the next.
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

# Runs hta-mpi 3 times on the given files with the malloc setting $ALLOC;
# prints the fastest wall time, the largest peak RSS in kB and the 1-minute
# load average after the last run.
measure() {
  local best="" rss=0 t m
  for _ in 1 2 3; do
    env ${ALLOC:+"$ALLOC"} /usr/bin/time -f "%e %M" -o "$WORK/time.txt" "$BUILD/hta-mpi" -q --force -o "$WORK/r.h5" "$@"
    read -r t m < "$WORK/time.txt"
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
    if [ "$m" -gt "$rss" ]; then rss=$m; fi
  done
  echo "$best $rss $(cut -d' ' -f1 /proc/loadavg)"
}

echo "Traces of $(awk -v b="$BYTES" 'BEGIN{printf "%.0f", b/1e6}') MB each (.json), one process;" \
     "$(nproc) cores; $(date -u +%F)"
echo
echo "| malloc | traces | seconds | peak RSS MB | RSS / one trace | RSS minus floor MB | (RSS - floor) / one trace | load (1 min) |"
echo "|---|---|---|---|---|---|---|---|"
row() {
  awk -v a="${ALLOC:-default}" -v n="$1" -v t="$2" -v m="$3" -v f="$floor" -v b="$BYTES" -v l="$4" 'BEGIN{
    printf "| %s | %s | %.2f | %.0f | %.1f%% | %.0f | %.1f%% | %s |\n",
      a, n, t, m/1024, 100*m*1024/b, (m-f)/1024, 100*(m-f)*1024/b, l}'
}
for ALLOC in "" "MALLOC_MMAP_THRESHOLD_=131072"; do
  read -r t floor l < <(measure "$WORK/tiny/rank-0.json")
  row "floor: one 10 kB trace" "$t" "$floor" "$l"
  for n in 1 4 16; do
    files=()
    for r in $(seq 0 $((n - 1))); do files+=("$WORK/big/rank-$r.json"); done
    read -r t m l < <(measure "${files[@]}")
    row "$n" "$t" "$m" "$l"
  done
done
echo
echo "target: RSS / one trace <= 15%, flat across 1, 4 and 16 traces"
