#!/bin/bash
# Collectives-by-process-group benchmark (not a test): a generated tensor x
# data parallel job (hta-tracegen --tp 8 --dp RANKS/8, 16 layers: 19
# collectives per step, STEPS steps) on PROCESSES MPI processes.  Reports
# what hta-mpi -v prints for the phase after the last trace is done
# (gather to the root; rank resolution, the matching of every collective
# by process group spread over the processes, and the root's cross-rank
# statistics; the HDF5 write), the rows of /collectives, and the peak
# resident size of the root and of the busiest process.
#
#   bench/bench_collectives.sh [BUILD_DIR] [RANKS] [STEPS] [PROCESSES] [WORK_DIR]
#
# With BASE_BUILD=DIR in the environment, that build runs on the same
# traces too, alternating with BUILD_DIR, best of RUNS (default 1) each.
set -euo pipefail
BUILD=$(realpath "${1:-build}")
RANKS=${2:-1024}
STEPS=${3:-105}
PROCESSES=${4:-4}
WORK=${5:-/tmp/hta-bench-collectives}
RUNS=${RUNS:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
. "$(dirname "$0")/measured_mpi_run.sh"
TP=8
DP=$((RANKS / TP))
TRACES="$WORK/job-$RANKS-$STEPS"
mkdir -p "$WORK"
generated_job "$TRACES" "$RANKS" "$BUILD" --tp "$TP" --dp "$DP" --layers 16 --steps "$STEPS" \
  --slow 5:1.2
PER_RANK=$((STEPS * 19))
echo "$RANKS ranks (TP $TP x DP $DP) x $PER_RANK collectives, $(du -sh "$TRACES" | cut -f1)" \
     "of JSON, $PROCESSES processes, $(nproc) cores, $(date -u +%F)"
echo
echo "| build | gather s | resolve + matching + cross-rank s | HDF5 write s | whole run s | peak RSS root MB | peak RSS busiest process MB | load (1 min) |"
echo "|---|---|---|---|---|---|---|---|"
declare -A best
builds=("$BUILD")
[ -n "${BASE_BUILD:-}" ] && builds=("$(realpath "$BASE_BUILD")" "$BUILD")
for _ in $(seq "$RUNS"); do
  for b in "${builds[@]}"; do
    got=$(measured_mpi_run "$WORK" "$PROCESSES" "$b" "$TRACES")
    if [ -z "${best[$b]:-}" ] || awk -v a="${got%% *}" -v b="${best[$b]%% *}" 'BEGIN{exit !(a < b)}'; then
      best[$b]=$got
    fi
  done
done
for b in "${builds[@]}"; do
  read -r cross gather write whole root busiest _ <<< "${best[$b]}"
  printf "| %s | %.3f | %.3f | %.3f | %.2f | %d | %d | %s |\n" "$(basename "$(dirname "$b")")" \
    "$gather" "$cross" "$write" "$whole" "$root" "$busiest" "$(cut -d' ' -f1 /proc/loadavg)"
done
/usr/bin/python3 - "$WORK/results.h5" <<'EOS'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
c = f["collectives"]
print(f"\n/collectives: {c.shape[0]} instances, chunks {c.chunks}, "
      f"{c.id.get_storage_size() / 1e6:.1f} MB stored")
EOS
