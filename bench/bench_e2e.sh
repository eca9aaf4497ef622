#!/bin/bash
# End-to-end benchmark (not a test): one large generated rank trace analysed
# by a single hta-mpi process, next to the baselines that bound it, measured
# in the same run on the same files:
#   gzip -dc FILE.json.gz > /dev/null   (inflating is the floor for .gz)
#   igzip -dc FILE.json.gz > /dev/null  (ISA-L's, which hta-mpi inflates
#                                        with; when on PATH: Debian's isal)
#   cat FILE.json > /dev/null           (reading is the floor for .json)
# The plain trace is analysed twice: with the automatic thread count (one
# process alone on the machine splits the parse over every core) and with
# --threads 1.  Prints a markdown table (time, throughput of uncompressed
# bytes, peak RSS).
#
#   bench/bench_e2e.sh [BUILD_DIR] [SIZE_MB] [WORK_DIR]
set -euo pipefail
BUILD=$(realpath "${1:-build}")
SIZE_MB=${2:-600}
WORK=${3:-$(mktemp -d /tmp/hta-bench.XXXXXX)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$WORK/plain" "$WORK/gz"

[ -f "$WORK/plain/rank-0.json" ] || "$BUILD/hta-tracegen" -o "$WORK/plain" --ranks 1 --size-mb "$SIZE_MB"
[ -f "$WORK/gz/rank-0.json.gz" ] || gzip -c "$WORK/plain/rank-0.json" > "$WORK/gz/rank-0.json.gz"
JSON="$WORK/plain/rank-0.json"
GZ="$WORK/gz/rank-0.json.gz"
BYTES=$(stat -c %s "$JSON")

# Runs a command 3 times and keeps the fastest wall time and its peak RSS.
measure() {
  local best="" rss=""
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$WORK/time.txt" "$@" > /dev/null 2>&1
    read -r t m < "$WORK/time.txt"
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; rss=$m; fi
  done
  echo "$best $rss"
}

row() {
  local name=$1 t=$2 rss_kb=$3
  awk -v n="$name" -v t="$t" -v b="$BYTES" -v r="$rss_kb" \
    'BEGIN{printf "| %s | %.2f | %.0f | %.0f | %.1f%% |\n", n, t, b/1e6/t, r/1024, 100*r*1024/b}'
}

read -r t_gzip m_gzip < <(measure sh -c "gzip -dc '$GZ'")
t_igzip=""
if command -v igzip >/dev/null; then
  read -r t_igzip m_igzip < <(measure sh -c "igzip -dc '$GZ'")
fi
read -r t_cat m_cat < <(measure sh -c "cat '$JSON'")
read -r t_hgz m_hgz < <(measure "$BUILD/hta-mpi" -q --force -o "$WORK/gz.h5" "$GZ")
read -r t_hjs m_hjs < <(measure "$BUILD/hta-mpi" -q --force -o "$WORK/json.h5" "$JSON")
read -r t_hj1 m_hj1 < <(measure "$BUILD/hta-mpi" -q --force --threads 1 -o "$WORK/json.h5" "$JSON")

echo "Trace: $(awk -v b="$BYTES" 'BEGIN{printf "%.0f", b/1e6}') MB uncompressed, $(stat -c %s "$GZ" | awk '{printf "%.0f", $1/1e6}') MB gzip; $(nproc) cores; $(date -u +%F)"
echo
echo "| command | seconds | MB/s (uncompressed) | peak RSS MB | RSS / uncompressed |"
echo "|---|---|---|---|---|"
row "gzip -dc FILE.json.gz > /dev/null" "$t_gzip" "$m_gzip"
[ -n "$t_igzip" ] && row "igzip -dc FILE.json.gz > /dev/null" "$t_igzip" "$m_igzip"
row "hta-mpi FILE.json.gz (1 process)" "$t_hgz" "$m_hgz"
row "cat FILE.json > /dev/null" "$t_cat" "$m_cat"
row "hta-mpi FILE.json (1 process, $(nproc) parse threads)" "$t_hjs" "$m_hjs"
row "hta-mpi --threads 1 FILE.json (1 process)" "$t_hj1" "$m_hj1"
echo
awk -v a="$t_hgz" -v b="$t_gzip" 'BEGIN{printf "hta-mpi .gz / gzip -dc = %.2fx\n", a/b}'
[ -n "$t_igzip" ] && awk -v a="$t_hgz" -v b="$t_igzip" 'BEGIN{printf "hta-mpi .gz / igzip -dc = %.2fx\n", a/b}'
awk -v a="$t_hgz" -v b="$t_hjs" 'BEGIN{printf "hta-mpi .gz / hta-mpi .json = %.2fx\n", a/b}'
