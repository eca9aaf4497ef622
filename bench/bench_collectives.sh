#!/bin/bash
# Collectives-by-process-group benchmark (not a test): a generated tensor x
# data parallel job (hta-tracegen --tp 8 --dp RANKS/8, 16 layers: 19
# collectives per step, STEPS steps) on PROCESSES MPI processes.  Reports
# what hta-mpi -v prints for the phase after the last trace is done
# (gather to the root, rank resolution + cross-rank statistics, which hold
# the matching of every collective by process group, and the HDF5 write),
# the rows of /collectives, and the peak resident size of every process
# (the root holds every rank's collectives for the matching).
#
#   bench/bench_collectives.sh [BUILD_DIR] [RANKS] [STEPS] [PROCESSES] [WORK_DIR]
set -euo pipefail
BUILD=$(realpath "${1:-build}")
RANKS=${2:-1024}
STEPS=${3:-105}
PROCESSES=${4:-4}
WORK=${5:-/tmp/hta-bench-collectives}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
TP=8
DP=$((RANKS / TP))
TRACES="$WORK/job-$RANKS-$STEPS"
mkdir -p "$WORK"

if [ "$(find "$TRACES" -name 'rank-*.json' 2>/dev/null | wc -l)" != "$RANKS" ]; then
  rm -rf "$TRACES"
  "$BUILD/hta-tracegen" --tp "$TP" --dp "$DP" --layers 16 --steps "$STEPS" --slow 5:1.2 \
    -o "$TRACES"
fi
PER_RANK=$((STEPS * 19))
echo "$RANKS ranks (TP $TP x DP $DP) x $PER_RANK collectives, $(du -sh "$TRACES" | cut -f1)" \
     "of JSON, $PROCESSES processes, $(nproc) cores, $(date -u +%F)"
echo
echo "| gather s | resolve + cross-rank s | HDF5 write s | whole run s | peak RSS root MB | peak RSS largest other MB | load (1 min) |"
echo "|---|---|---|---|---|---|---|"
cat > "$WORK/rss.sh" <<EOS
#!/bin/sh
exec /usr/bin/time -f "%M" -o "$WORK/rss.\$OMPI_COMM_WORLD_RANK" "\$@"
EOS
chmod +x "$WORK/rss.sh"
start=$(date +%s.%N)
line=$(mpirun -n "$PROCESSES" --oversubscribe "$WORK/rss.sh" "$BUILD/hta-mpi" -q -v --force \
         -o "$WORK/results.h5" "$TRACES" 2>&1 | grep 'after the last trace')
whole=$(echo "$(date +%s.%N) - $start" | bc)
read -r gather cross write < <(echo "$line" | sed -E 's/.*gather ([0-9.]+) s, cross-rank ([0-9.]+) s, HDF5 write ([0-9.]+) s/\1 \2 \3/')
root=$(cat "$WORK/rss.0")
other=0
for p in $(seq 1 $((PROCESSES - 1))); do
  r=$(cat "$WORK/rss.$p"); [ "$r" -gt "$other" ] && other=$r
done
printf "| %.3f | %.3f | %.3f | %.2f | %d | %d | %s |\n" "$gather" "$cross" "$write" "$whole" \
  $((root / 1024)) $((other / 1024)) "$(cut -d' ' -f1 /proc/loadavg)"
/usr/bin/python3 - "$WORK/results.h5" <<'EOS'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
c = f["collectives"]
print(f"\n/collectives: {c.shape[0]} instances, chunks {c.chunks}, "
      f"{c.id.get_storage_size() / 1e6:.1f} MB stored")
EOS
