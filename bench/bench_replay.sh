#!/bin/bash
# The replay of the job (--replay, --what-if) at scale, a bench, not a
# test: a 1F1B pipeline of PP 8 x DP 128 = 1024 ranks x 5 steps (8
# microbatches, stage 3 at 1.3x) and a tensor x data parallel job of TP 8
# x DP 32 = 256 ranks x 50 steps (rank 5's compute 1.3x), both with the
# CPU launching ahead (hta-tracegen --cpu-ahead), on PROCESSES MPI
# processes.  Each job is analysed with --critical-path (the baseline: the
# per-rank paths and the job's path the replay builds on) and with
# --replay and three scenarios, and with --replay alone (the default
# scenarios), alternating RUNS times.  Reports the whole
# wall time, the cross-rank phase (hta-mpi -v), the largest CPU time of
# one process, the peak resident size of the root and of the busiest
# process, and the replay's rounds.
#
#   bench/bench_replay.sh [BUILD_DIR] [PROCESSES] [WORK_DIR]
set -euo pipefail
BUILD=$(realpath "${1:-build}")
PROCESSES=${2:-4}
WORK=${3:-/tmp/hta-bench-replay}
RUNS=${RUNS:-2}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
. "$(dirname "$0")/measured_mpi_run.sh"
mkdir -p "$WORK"
PP="$WORK/pp8-dp128"
TP="$WORK/tp8-dp32"
generated_job "$PP" 1024 "$BUILD" --pp 8 --dp 128 --microbatches 8 --steps 6 \
  --slow-stage 3:1.3 --cpu-ahead
generated_job "$TP" 256 "$BUILD" --tp 8 --dp 32 --steps 50 --slow 5:1.3 --profiler-steps \
  --cpu-ahead

echo "$PROCESSES processes, $(nproc) cores, $(date -u '+%F %H:%M') UTC," \
     "$(git -C "$(dirname "$0")" describe --always --dirty 2>/dev/null)"
echo
echo "| job | run | whole run s | CPU s of the busiest process | cross-rank s | peak RSS root MB | peak RSS busiest process MB | load (1 min) |"
echo "|---|---|---|---|---|---|---|---|"

row() {
  local job=$1 name=$2 traces=$3 cross gather write whole root busiest cpu
  shift 3
  read -r cross gather write whole root busiest cpu < <(measured_mpi_run "$WORK" "$PROCESSES" \
                                                         "$BUILD" "$traces" "$@")
  printf "| %s | %s | %.2f | %.2f | %.3f | %d | %d | %s |\n" "$job" "$name" "$whole" "$cpu" \
    "$cross" "$root" "$busiest" "$(cut -d' ' -f1 /proc/loadavg)"
}

rounds() {
  /usr/bin/python3 - "$WORK/results.h5" <<'EOS'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
r = f["what_if"][()]
print(f"  /what_if: {len(r)} rows")
EOS
}

for _ in $(seq "$RUNS"); do
  for job in PP TP; do
    traces=${!job}
    row "$(basename "$traces")" --critical-path "$traces" --critical-path
    row "$(basename "$traces")" "--replay, 3 scenarios" "$traces" --replay \
      --what-if median:all --what-if compute:0-7:1.3 --what-if network:2
    row "$(basename "$traces")" "--replay, default scenarios" "$traces" --replay
  done
done
rounds
