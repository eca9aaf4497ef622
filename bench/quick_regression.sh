#!/bin/bash
# Quick performance regression check, run by CI after the tests (not a test:
# it compares ratios, never absolute times).  A 100 MB generated trace is
# analysed by one hta-mpi process as .json.gz and as .json; each time is
# divided by `gzip -dc` on the same file in the same run.  The check fails
# when a ratio is more than twice the README figure (bench/baseline.env),
# i.e. when throughput has dropped below half of what the README reports.
#
#   bench/quick_regression.sh [BUILD_DIR]
set -euo pipefail
BUILD=$(realpath "${1:-build}")
HERE=$(dirname "$(realpath "$0")")
. "$HERE/baseline.env"
WORK=$(mktemp -d /tmp/hta-quick.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

"$BUILD/hta-tracegen" -o "$WORK" --ranks 1 --size-mb 100 >/dev/null
gzip -k "$WORK/rank-0.json"

best() { # best wall time of 3 runs of a command
  local best=""
  for _ in 1 2 3; do
    local t0 t1
    t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
    best=$(awk -v a="$t0" -v b="$t1" -v c="$best" 'BEGIN{d=b-a; if (c=="" || d<c) print d; else print c}')
  done
  echo "$best"
}

t_gzip=$(best sh -c "gzip -dc '$WORK/rank-0.json.gz' > /dev/null")
t_gz=$(best "$BUILD/hta-mpi" -q --force -o "$WORK/a.h5" "$WORK/rank-0.json.gz")
t_json=$(best "$BUILD/hta-mpi" -q --force -o "$WORK/b.h5" "$WORK/rank-0.json")

awk -v g="$t_gzip" -v z="$t_gz" -v j="$t_json" -v rz="$GZ_OVER_GZIP" -v rj="$JSON_OVER_GZIP" 'BEGIN {
  printf "quick benchmark: gzip -dc %.3f s; hta-mpi .gz %.3f s (%.2fx gzip, README %.2fx); .json %.3f s (%.2fx gzip, README %.2fx)\n", g, z, z/g, rz, j, j/g, rj
  bad = 0
  if (z/g > 2*rz) { print "REGRESSION: .json.gz throughput fell below half of the README figure"; bad = 1 }
  if (j/g > 2*rj) { print "REGRESSION: .json throughput fell below half of the README figure"; bad = 1 }
  if (!bad) print "quick benchmark: within bounds"
  exit bad
}'
