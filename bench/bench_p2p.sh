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
PP=8
DP=$((RANKS / PP))
TRACES="$WORK/job-$RANKS-$MICROBATCHES-$STEPS"
mkdir -p "$WORK"

if [ "$(find "$TRACES" -name 'rank-*.json' 2>/dev/null | wc -l)" != "$RANKS" ]; then
  rm -rf "$TRACES"
  "$BUILD/hta-tracegen" --pp "$PP" --dp "$DP" --microbatches "$MICROBATCHES" --steps "$STEPS" \
    --slow-stage 5:1.2 -o "$TRACES"
fi
echo "$RANKS ranks (PP $PP x DP $DP) x $((4 * MICROBATCHES * STEPS)) sends and recvs per middle" \
     "stage, $(du -sh "$TRACES" | cut -f1) of JSON, $PROCESSES processes, $(nproc) cores," \
     "$(date -u +%F)"
echo
echo "| gather s | resolve + matching + cross-rank s | HDF5 write s | whole run s | peak RSS root MB | peak RSS busiest process MB | load (1 min) |"
echo "|---|---|---|---|---|---|---|"
cat > "$WORK/rss.sh" <<EOS
#!/bin/sh
exec /usr/bin/time -f "%M" -o "$WORK/rss.\$OMPI_COMM_WORLD_RANK" "\$@"
EOS
chmod +x "$WORK/rss.sh"

for _ in $(seq "$RUNS"); do
  start=$(date +%s.%N)
  line=$(mpirun -n "$PROCESSES" --oversubscribe "$WORK/rss.sh" "$BUILD/hta-mpi" -q -v --force \
           --include-last-step -o "$WORK/results.h5" "$TRACES" 2>&1 | grep 'after the last trace')
  whole=$(echo "$(date +%s.%N) - $start" | bc)
  read -r gather cross write < <(echo "$line" | sed -E 's/.*gather ([0-9.]+) s, cross-rank ([0-9.]+) s, HDF5 write ([0-9.]+) s/\1 \2 \3/')
  root=$(cat "$WORK/rss.0")
  busiest=0
  for p in $(seq 0 $((PROCESSES - 1))); do
    r=$(cat "$WORK/rss.$p"); [ "$r" -gt "$busiest" ] && busiest=$r
  done
  printf "| %.3f | %.3f | %.3f | %.2f | %d | %d | %s |\n" "$gather" "$cross" "$write" "$whole" \
    "$((root / 1024))" "$((busiest / 1024))" "$(cut -d' ' -f1 /proc/loadavg)"
done
/usr/bin/python3 - "$WORK/results.h5" <<'EOS'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
p = f["p2p"]
print(f"\n/p2p: {p.shape[0]} pairs, chunks {p.chunks}, {p.id.get_storage_size() / 1e6:.1f} MB stored;"
      f" /pipeline_steps: {f['pipeline_steps'].shape[0]} rows")
EOS
