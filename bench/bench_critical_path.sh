#!/bin/bash
# Critical-path benchmark (not a test): the cost of --critical-path and
# of --replay (which implies it, and replays the default scenarios) on one
# large generated rank trace, against the same run without them, measured
# in the same run on the same file (best of N wall times each,
# alternating, so that the machine's load weighs on every side alike).
# Prints a markdown table: seconds, CPU seconds (user + system, best of
# N: less sensitive to other processes than the wall time), peak RSS, and
# the share each adds.
#
#   bench/bench_critical_path.sh [BUILD_DIR] [SIZE_MB] [WORK_DIR] [N]
set -euo pipefail
BUILD=$(realpath "${1:-build}")
SIZE_MB=${2:-1000}
WORK=${3:-$(mktemp -d /tmp/hta-bench.XXXXXX)}
N=${4:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$WORK/plain"
[ -f "$WORK/plain/rank-0.json" ] || "$BUILD/hta-tracegen" -o "$WORK/plain" --ranks 1 --size-mb "$SIZE_MB"
JSON="$WORK/plain/rank-0.json"
BYTES=$(stat -c %s "$JSON")

best_without="" best_with="" best_replay="" rss_without="" rss_with="" rss_replay=""
cpu_without="" cpu_with="" cpu_replay=""
for _ in $(seq "$N"); do
  for mode in without with replay; do
    flag=(); [ "$mode" = with ] && flag=(--critical-path); [ "$mode" = replay ] && flag=(--replay)
    /usr/bin/time -f "%e %M %U %S" -o "$WORK/time.txt" \
      "$BUILD/hta-mpi" -q --force "${flag[@]}" -o "$WORK/$mode.h5" "$JSON" > /dev/null 2>&1
    read -r t m u s < "$WORK/time.txt"
    c=$(awk "BEGIN{print $u + $s}")
    b="best_$mode"; r="rss_$mode"; p="cpu_$mode"
    if [ -z "${!b}" ] || awk "BEGIN{exit !($t < ${!b})}"; then printf -v "$b" %s "$t"; printf -v "$r" %s "$m"; fi
    if [ -z "${!p}" ] || awk "BEGIN{exit !($c < ${!p})}"; then printf -v "$p" %s "$c"; fi
  done
done
STEPS=$(/usr/bin/python3 -c "import h5py; print(len(h5py.File('$WORK/with.h5')['critical_path']))")

echo "Trace: $(awk -v b="$BYTES" 'BEGIN{printf "%.0f", b/1e6}') MB, $STEPS ProfilerSteps; $(nproc) cores; best of $N; $(date -u +%F)"
echo
echo "| run | seconds | MB/s | CPU seconds | peak RSS MB |"
echo "|---|---|---|---|---|"
awk -v t="$best_without" -v b="$BYTES" -v r="$rss_without" -v c="$cpu_without" 'BEGIN{printf "| hta-mpi FILE.json | %.2f | %.0f | %.2f | %.0f |\n", t, b/1e6/t, c, r/1024}'
awk -v t="$best_with" -v b="$BYTES" -v r="$rss_with" -v c="$cpu_with" 'BEGIN{printf "| hta-mpi --critical-path FILE.json | %.2f | %.0f | %.2f | %.0f |\n", t, b/1e6/t, c, r/1024}'
awk -v t="$best_replay" -v b="$BYTES" -v r="$rss_replay" -v c="$cpu_replay" 'BEGIN{printf "| hta-mpi --replay FILE.json | %.2f | %.0f | %.2f | %.0f |\n", t, b/1e6/t, c, r/1024}'
echo
awk -v a="$best_with" -v b="$best_without" -v x="$cpu_with" -v y="$cpu_without" 'BEGIN{printf "--critical-path adds %.0f%% to the run (%.0f%% to its CPU time)\n", 100*(a/b-1), 100*(x/y-1)}'
awk -v a="$best_replay" -v b="$best_without" -v x="$cpu_replay" -v y="$cpu_without" 'BEGIN{printf "--replay adds %.0f%% to the run (%.0f%% to its CPU time)\n", 100*(a/b-1), 100*(x/y-1)}'
