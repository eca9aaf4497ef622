#!/bin/bash
# The job-level analyses at scale (a bench, not a test): a
# generated tensor x data parallel job (hta-tracegen --tp 8 --dp RANKS/8
# --layers 16 --profiler-steps: 19 collectives per rank and step, STEPS
# steps, rank 5's compute 1.3x before its TP collectives, seeded jitter on
# every kernel) on PROCESSES MPI processes, analysed by the default run
# and by --critical-path (the per-rank paths, and the job's path where
# the build has it), alternating RUNS times.  Reports for
# each run the whole wall time, what hta-mpi -v prints for the phase after
# the last trace (gather; cross-rank; HDF5 write), the largest CPU time of
# one process (which the load of a shared machine moves less than the wall
# time), the peak resident size of the root and of the busiest process,
# and the load; `cat` of the traces to /dev/null in the same minutes as
# the floor of reading them.
#
#   bench/bench_jobpath.sh [BUILD_DIR] [RANKS] [STEPS] [PROCESSES] [WORK_DIR]
set -euo pipefail
BUILD=$(realpath "${1:-build}")
RANKS=${2:-256}
STEPS=${3:-50}
PROCESSES=${4:-4}
WORK=${5:-/tmp/hta-bench-jobpath}
RUNS=${RUNS:-2}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
. "$(dirname "$0")/measured_mpi_run.sh"
TP=8
DP=$((RANKS / TP))
TRACES="$WORK/job-$RANKS-$STEPS"
mkdir -p "$WORK"
generated_job "$TRACES" "$RANKS" "$BUILD" --tp "$TP" --dp "$DP" --layers 16 --steps "$STEPS" \
  --slow 5:1.3 --profiler-steps
echo "$RANKS ranks (TP $TP x DP $DP) x $STEPS steps x 19 collectives," \
     "$(du -sh "$TRACES" | cut -f1) of JSON, $PROCESSES processes, $(nproc) cores," \
     "$(date -u '+%F %H:%M') UTC, $(git -C "$(dirname "$0")" describe --always --dirty 2>/dev/null)"
echo
echo "| run | whole run s | CPU s of the busiest process | gather s | cross-rank s | HDF5 write s | peak RSS root MB | peak RSS busiest process MB | load (1 min) |"
echo "|---|---|---|---|---|---|---|---|---|"

row() {
  local name=$1 cross gather write whole root busiest cpu
  shift
  read -r cross gather write whole root busiest cpu < <(measured_mpi_run "$WORK" "$PROCESSES" \
                                                         "$BUILD" "$TRACES" "$@")
  printf "| %s | %.2f | %.2f | %.3f | %.3f | %.3f | %d | %d | %s |\n" "$name" "$whole" "$cpu" \
    "$gather" "$cross" "$write" "$root" "$busiest" "$(cut -d' ' -f1 /proc/loadavg)"
}

for _ in $(seq "$RUNS"); do
  start=$(date +%s.%N)
  cat "$TRACES"/rank-*.json > /dev/null
  printf "| cat of the traces | %.2f | | | | | | | %s |\n" \
    "$(echo "$(date +%s.%N) - $start" | bc)" "$(cut -d' ' -f1 /proc/loadavg)"
  row default
  row --critical-path --critical-path
done
/usr/bin/python3 - "$WORK/results.h5" <<'EOS'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
names = ["critical_path", "global_critical_path", "what_if", "delay_costs", "collectives"]
print("\nRows after --critical-path: " +
      ", ".join(f"/{n} {f[n].shape[0]}" for n in names if n in f))
EOS
