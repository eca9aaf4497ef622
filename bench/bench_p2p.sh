#!/bin/bash
# Point-to-point pairing benchmark (not a test): a generated pipeline x
# data parallel job (hta-tracegen --pp 8 --dp RANKS/8, 1F1B over
# MICROBATCHES microbatches for STEPS steps: a middle stage runs 4 sends
# and recvs per microbatch, 2000 per rank by default) on PROCESSES MPI
# processes.  Reports what hta-mpi -v prints for the phase after the last
# trace is done (gather; rank resolution, the matching by process group
# that pairs every send with its recv spread over the processes, and the
# root's cross-rank statistics; the HDF5 write), the rows of /p2p, and the
# peak resident size of the root and of the busiest process.
#
#   bench/bench_p2p.sh [BUILD_DIR] [RANKS] [MICROBATCHES] [STEPS] [PROCESSES] [WORK_DIR]
set -euo pipefail
BUILD=$(realpath "${1:-build}")
RANKS=${2:-1024}
MICROBATCHES=${3:-250}
STEPS=${4:-2}
PROCESSES=${5:-4}
WORK=${6:-/tmp/hta-bench-p2p}
RUNS=${RUNS:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
. "$(dirname "$0")/measured_mpi_run.sh"
PP=8
DP=$((RANKS / PP))
TRACES="$WORK/job-$RANKS-$MICROBATCHES-$STEPS"
mkdir -p "$WORK"
generated_job "$TRACES" "$RANKS" "$BUILD" --pp "$PP" --dp "$DP" --microbatches "$MICROBATCHES" \
  --steps "$STEPS" --slow-stage 5:1.2
echo "$RANKS ranks (PP $PP x DP $DP) x $((4 * MICROBATCHES * STEPS)) sends and recvs per middle" \
     "stage, $(du -sh "$TRACES" | cut -f1) of JSON, $PROCESSES processes, $(nproc) cores," \
     "$(date -u +%F)"
echo
echo "| gather s | resolve + matching + cross-rank s | HDF5 write s | whole run s | peak RSS root MB | peak RSS busiest process MB | load (1 min) |"
echo "|---|---|---|---|---|---|---|"
for _ in $(seq "$RUNS"); do
  read -r cross gather write whole root busiest _ < <(measured_mpi_run "$WORK" "$PROCESSES" \
                                                     "$BUILD" "$TRACES" --include-last-step)
  printf "| %.3f | %.3f | %.3f | %.2f | %d | %d | %s |\n" "$gather" "$cross" "$write" "$whole" \
    "$root" "$busiest" "$(cut -d' ' -f1 /proc/loadavg)"
done
/usr/bin/python3 - "$WORK/results.h5" <<'EOS'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
p = f["p2p"]
print(f"\n/p2p: {p.shape[0]} pairs, chunks {p.chunks}, {p.id.get_storage_size() / 1e6:.1f} MB stored;"
      f" /pipeline_steps: {f['pipeline_steps'].shape[0]} rows")
EOS
