#!/bin/bash
# Scaling benchmark (not a test), two parts, best of 3 wall times each:
#  (a) strong scaling: 64 generated 50 MB traces (.json) analysed with
#      mpirun -n 1 and mpirun -n 2; baseline is the 1-process run in the same
#      script; target speedup >= 1.8 on 2 processes.
#  (b) many small traces: 1024 generated 1 MB traces on mpirun -n 2; baseline
#      is the work itself, the sum over traces of parse_seconds +
#      analysis_seconds from that run's /ranks, divided by 2 processes;
#      target: wall time within 20% of it.  Also shows the costs that make
#      up the difference, in the best run itself: the busiest process's work
#      (traces are assigned statically, largest first), gather, cross-rank
#      and HDF5 write (hta-mpi -v), and what lies outside hta-mpi's own
#      clock (attribute wall_seconds): mpirun, MPI_Init and exit; and, as a
#      separate fixed cost, mpirun -n 2 on one 10 kB trace.
#  (c) how (b) grows with the number of traces: the first 128, 256, 512 and
#      1024 of its traces (symbolic links in a directory each), best of 3;
#      a least-squares line through the wall times splits them into a fixed
#      part and a part per trace, set beside the work per trace.
# The script prints the Open MPI point-to-point layer it used.
# In (a), "wall minus busiest" is the same non-parallel part: start-up, the
# HDF5 write and the rest outside parse + analysis.  Every process parses
# with one thread (--threads 1): a lone process would otherwise split each
# plain trace over both cores, and the speedup would not be MPI's.
# Each measurement is printed with the 1-minute load average (shared machine).
# The traces live in a temporary directory under WORK_DIR, removed on exit.
#
#   bench/bench_scaling.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
BUILD=$(realpath "${1:-build}")
WORK=$(mktemp -d "${2:-/tmp}/hta-scaling.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One node: Open MPI's ob1 point-to-point layer, as docs/performance.md
# advises for single-node jobs (choosing among network transports costs 0.2 s of
# start-up); set OMPI_MCA_pml to measure another.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}

"$BUILD/hta-tracegen" -o "$WORK/big" --ranks 64 --size-mb 50 >/dev/null
"$BUILD/hta-tracegen" -o "$WORK/small" --ranks 1024 --size-mb 1 >/dev/null
"$BUILD/hta-tracegen" -o "$WORK/tiny" --ranks 1 --size-mb 0.01 >/dev/null

load() { cut -d' ' -f1 /proc/loadavg; }

# Runs mpirun -n N hta-mpi -v on a trace directory; prints the wall time and
# the seconds of gather, cross-rank and HDF5 write after the last trace.
run() {
  local n=$1 dir=$2 t0 t1 line
  t0=$(date +%s.%N)
  line=$(mpirun -n "$n" --oversubscribe "$BUILD/hta-mpi" -q -v --force --threads 1 \
           -o "$WORK/r.h5" "$dir" 2>&1 |
           grep 'after the last trace')
  t1=$(date +%s.%N)
  echo "$(echo "$t1 - $t0" | bc) $(echo "$line" |
    sed -E 's/.*gather ([0-9.]+) s, cross-rank ([0-9.]+) s, HDF5 write ([0-9.]+) s/\1 \2 \3/')"
}

# From the last results file: the sum of parse + analysis over all traces,
# the largest such sum of one process, and the root's time from the start of
# the run (after MPI_Init) to the HDF5 write (attribute wall_seconds).
work() {
  /usr/bin/python3 - "$WORK/r.h5" <<'EOF'
import sys
import h5py
import numpy as np
f = h5py.File(sys.argv[1], "r")
r = f["ranks"][()]
t = r["parse_seconds"] + r["analysis_seconds"]
busiest = max(t[r["process"] == p].sum() for p in np.unique(r["process"]))
print(f"{t.sum():.3f} {busiest:.3f} {f.attrs['wall_seconds']:.3f}")
EOF
}

min() { awk -v a="$1" -v b="$2" 'BEGIN{print (a == "" || b < a) ? b : a}'; }

echo "OMPI_MCA_pml=$OMPI_MCA_pml"
echo "(a) 64 generated traces of $(stat -c %s "$WORK/big/rank-0.json" | awk '{printf "%.0f", $1/1e6}') MB" \
     "(.json, $(du -sh "$WORK/big" | cut -f1) in all); $(nproc) cores; $(date -u +%F)"
echo
echo "| processes | run 1 s | run 2 s | run 3 s | best s | load (1 min) per run | best run: sum(parse + analysis) s | busiest process's parse + analysis s | wall minus busiest s | speedup |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for n in 1 2; do
  times="" loads="" best=""
  for _ in 1 2 3; do
    read -r t _ _ w < <(run "$n" "$WORK/big")
    times="$times | $(printf %.2f "$t")"
    loads="$loads $(load)"
    if [ -z "$best" ] || [ "$(min "$best" "$t")" = "$t" ]; then
      best=$t
      read -r sum busiest inside < <(work)
      outside=$(echo "$t - $inside - $w" | bc -l)
    fi
  done
  [ "$n" = 1 ] && best1=$best sum1=$sum outside1=$outside
  awk -v n="$n" -v r="$times" -v t="$best" -v l="$loads" -v s="$sum" -v b="$busiest" -v t1="$best1" \
    'BEGIN{printf "| %d%s | %.2f |%s | %.2f | %.2f | %.2f | %.2fx |\n", n, r, t, l, s, b, t - b, t1/t}'
done
echo
# What no change to hta-mpi can remove: mpirun, MPI_Init, MPI_Finalize and
# exit (outside hta-mpi's clock, as in (b)), with the work as measured.
awk -v s="$sum1" -v o1="$outside1" -v b="$busiest" -v o2="$outside" 'BEGIN{
  printf "outside hta-mpi (mpirun, MPI_Init, MPI_Finalize, exit): %.2f s (1 process), %.2f s (2);\n", o1, o2
  printf "ceiling with every other non-parallel cost at zero: (%.2f + %.2f) / (%.2f + %.2f) = %.2fx\n", s, o1, b, o2, (s + o1) / (b + o2)
}'
echo "target: speedup >= 1.8 on 2 processes"
echo

echo "(b) 1024 generated traces of 1 MB (.json), mpirun -n 2; $(date -u +%F)"
echo
echo "| run | wall s | sum(parse + analysis) / 2 s | wall / that | busiest process's parse + analysis s | gather s | cross-rank s | HDF5 write s | load (1 min) |"
echo "|---|---|---|---|---|---|---|---|---|"
best="" best_row=""
for i in 1 2 3; do
  read -r t g c w < <(run 2 "$WORK/small")
  read -r sum busiest inside < <(work)
  l=$(load)
  awk -v i="$i" -v t="$t" -v s="$sum" -v b="$busiest" -v g="$g" -v c="$c" -v w="$w" -v l="$l" \
    'BEGIN{printf "| %d | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f | %.3f | %s |\n", i, t, s/2, t/(s/2), b, g, c, w, l}'
  if [ -z "$best" ] || [ "$(min "$best" "$t")" = "$t" ]; then best=$t; best_row="$t $sum $busiest $inside $g $c $w"; fi
done
startup=""
for _ in 1 2 3; do
  read -r t _ < <(run 2 "$WORK/tiny")
  startup=$(min "$startup" "$t")
done
echo
echo "Where the best run's wall time goes (in that run: outside hta-mpi's own run = wall minus"
echo "its wall_seconds attribute and HDF5 write; the rest from /ranks and hta-mpi -v):"
echo
echo "| part | seconds | share of wall |"
echo "|---|---|---|"
read -r t sum busiest inside g c w <<< "$best_row"
awk -v t="$t" -v s="$sum" -v b="$busiest" -v h="$inside" -v g="$g" -v c="$c" -v w="$w" 'BEGIN{
  row("sum(parse + analysis) / 2 (the target baseline)", s/2)
  row("imbalance: busiest process minus that", b - s/2)
  row("busiest process outside parse + analysis (file list, opening, binning)", h - g - c - b)
  row("gather + cross-rank + HDF5 write after the last trace", g + c + w)
  row("mpirun launch, MPI_Init, MPI_Finalize and exit", t - h - w)
  row("wall, mpirun -n 2 (best of 3)", t)
}
function row(name, x) { printf "| %s | %.2f | %.0f%% |\n", name, x, 100*x/t }'
echo
awk -v t="$t" -v s="$sum" -v u="$startup" -v l="$(load)" 'BEGIN{
  printf "MPI start-up alone: mpirun -n 2 on one 10 kB trace, best of 3: %.2f s (load %s)\n", u, l
  printf "wall / (sum / 2) = %.2f; target <= 1.20\n", t/(s/2)
}'
echo

echo "(c) the first N of the 1 MB traces, mpirun -n 2, best of 3 each"
echo
echo "| traces | wall s | sum(parse + analysis) / 2 s | wall minus that s | load (1 min) |"
echo "|---|---|---|---|---|"
points=""
for n in 128 256 512 1024; do
  mkdir "$WORK/first$n"
  ls "$WORK/small" | sort | head -n "$n" | while read -r f; do ln -s "$WORK/small/$f" "$WORK/first$n/$f"; done
  best="" half=""
  for _ in 1 2 3; do
    read -r t _ < <(run 2 "$WORK/first$n")
    if [ -z "$best" ] || [ "$(min "$best" "$t")" = "$t" ]; then
      best=$t
      read -r sum _ < <(work)
      half=$(echo "$sum / 2" | bc -l)
    fi
  done
  printf "| %d | %.2f | %.2f | %.2f | %s |\n" "$n" "$best" "$half" "$(echo "$best - $half" | bc -l)" "$(load)"
  points="$points $n $best $half"
done
echo
echo "$points" | awk '{
  for (i = 1; i <= NF; i += 3) { n++; x = $i; y = $(i + 1); h = $(i + 2)
    sx += x; sy += y; sxx += x * x; sxy += x * y; sh += h / x }
  b = (n * sxy - sx * sy) / (n * sxx - sx * sx); a = (sy - b * sx) / n
  printf "least squares: wall = %.2f s + %.3f ms per trace; work / 2 = %.3f ms per trace;\n", a, 1000 * b, 1000 * sh / n
  printf "so %.3f ms per trace (%.0f%% of its work / 2) besides the work, and a fixed %.2f s\n", 1000 * (b - sh / n), 100 * (b - sh / n) / (sh / n), a
}'
