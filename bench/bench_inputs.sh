#!/bin/bash
# Nsight Systems SQLite reader benchmark (not a test): how fast hta-mpi
# reads an export into its event arrays, against the sqlite3 command-line
# shell dumping the same rows (the same columns of the same tables, names
# joined from StringIds, output to /dev/null) in the same run, on the same
# file, warm in the page cache.  Exports are synthetic
# (bench/gen_nsys_export.py: N kernels, N runtime calls, N/10 copies, N/1000
# NVTX steps), for N in KERNELS (default "1000000 4000000").  hta-mpi runs
# as one process without mpirun; "read s" is its parse_seconds from /ranks
# (the reader alone), "wall s" the whole run with the analyses and the
# HDF5 file, "peak RSS" from /usr/bin/time.  Best of REPEAT (default 3).
#
#   bench/bench_inputs.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
BUILD=$(realpath "${1:-build}")
HERE=$(dirname "$(realpath "$0")")
WORK=$(mktemp -d "${2:-/tmp}/hta-inputs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
REPEAT=${REPEAT:-3}
KERNELS=${KERNELS:-"1000000 4000000"}
PY=/usr/bin/python3

SAME_ROWS="SELECT k.start, k.end, k.streamId, k.correlationId, s.value, k.deviceId
  FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName;
SELECT r.start, r.end, r.correlationId, s.value
  FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId;
SELECT start, end, streamId, correlationId, bytes, copyKind, srcKind, dstKind
  FROM CUPTI_ACTIVITY_KIND_MEMCPY;
SELECT start, end, text, textId FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NOT NULL;"

best() { sort -g | head -1; }

echo "Nsight Systems export read, one process, $(nproc) cores, sqlite3 $(sqlite3 --version | cut -d' ' -f1); $(date -u +%F)"
echo
echo "| kernels | export MB | rows | sqlite3 dump s | hta-mpi read s | read / dump | rows/s (read) | hta-mpi wall s | peak RSS MB |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in $KERNELS; do
  db="$WORK/rank-0.sqlite"
  $PY "$HERE/gen_nsys_export.py" "$db" "$n"
  mb=$(awk -v b="$(stat -c %s "$db")" 'BEGIN{printf "%.0f", b/1e6}')
  cat "$db" > /dev/null                     # warm the page cache for both
  dump=$(for _ in $(seq "$REPEAT"); do
           /usr/bin/time -f %e -o "$WORK/t" sqlite3 -readonly "$db" "$SAME_ROWS" > /dev/null
           cat "$WORK/t"; done | best)
  rows=$(sqlite3 -readonly "$db" "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL) +
    (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY) +
    (SELECT count(*) FROM NVTX_EVENTS)")
  : > "$WORK/runs"
  for _ in $(seq "$REPEAT"); do
    /usr/bin/time -f "%e %M" -o "$WORK/t" "$BUILD/hta-mpi" -q --force -o "$WORK/r.h5" "$db"
    read -r wall rss < "$WORK/t"
    read_s=$($PY -c "import h5py; print(h5py.File('$WORK/r.h5')['ranks']['parse_seconds'][0])")
    echo "$read_s $wall $rss" >> "$WORK/runs"
  done
  read -r read_s wall rss < <(sort -g "$WORK/runs" | head -1)
  awk -v n="$n" -v mb="$mb" -v rows="$rows" -v d="$dump" -v r="$read_s" -v w="$wall" -v m="$rss" 'BEGIN{
    printf "| %d | %d | %d | %.2f | %.2f | %.2f | %.1f M | %.2f | %.0f |\n",
      n, mb, rows, d, r, r / d, rows / r / 1e6, w, m / 1024}'
  rm -f "$db"
done
