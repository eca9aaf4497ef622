#!/bin/bash
# Quick performance regression check, run by CI after the tests (not a test:
# it compares ratios, never absolute times).  A 100 MB generated trace is
# analysed by one hta-mpi process as .json.gz and as .json; the work spent
# on the trace (parse + every analysis, /ranks parse_seconds +
# analysis_seconds) is divided by the time of `gzip -dc` on the same file in
# the same run.  The check fails when a ratio is more than twice the
# reference (bench/baseline.env), i.e. when throughput has dropped below
# half.  The per-trace work rather than the wall time is compared because
# at this size MPI start-up, which varies from 0.35 s to over 1 s on a
# loaded machine, would otherwise decide the outcome; the wall-time ratios
# are printed too.  One parse thread (--threads 1), so that the ratio does
# not depend on how busy the machine's other core is, and no head start
# (HTA_MPI_NO_HEAD_START), whose parse would share the cores with MPI_Init.
#
#   bench/quick_regression.sh [BUILD_DIR]
set -euo pipefail
BUILD=$(realpath "${1:-build}")
HERE=$(dirname "$(realpath "$0")")
. "$HERE/baseline.env"
WORK=$(mktemp -d /tmp/hta-quick.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HTA_MPI_NO_HEAD_START=1

"$BUILD/hta-tracegen" -o "$WORK" --ranks 1 --size-mb 100 >/dev/null
gzip -k "$WORK/rank-0.json"

seconds() { # wall time of one run of a command
  local t0 t1
  t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN{print b - a}'
}

work() { # parse + analysis seconds of the one trace in a results file
  /usr/bin/python3 -c 'import sys, h5py
r = h5py.File(sys.argv[1], "r")["ranks"][0]
print(r["parse_seconds"] + r["analysis_seconds"])' "$1"
}

min() { awk -v a="$1" -v b="$2" 'BEGIN{print (a == "" || b < a) ? b : a}'; }

t_gzip="" t_gz="" t_json="" w_gz="" w_json=""
for _ in 1 2 3; do
  t_gzip=$(min "$t_gzip" "$(seconds sh -c "gzip -dc '$WORK/rank-0.json.gz' > /dev/null")")
  t_gz=$(min "$t_gz" "$(seconds "$BUILD/hta-mpi" -q --force --threads 1 -o "$WORK/a.h5" "$WORK/rank-0.json.gz")")
  w_gz=$(min "$w_gz" "$(work "$WORK/a.h5")")
  t_json=$(min "$t_json" "$(seconds "$BUILD/hta-mpi" -q --force --threads 1 -o "$WORK/b.h5" "$WORK/rank-0.json")")
  w_json=$(min "$w_json" "$(work "$WORK/b.h5")")
done

awk -v g="$t_gzip" -v z="$t_gz" -v j="$t_json" -v wz="$w_gz" -v wj="$w_json" \
    -v rz="$WORK_GZ_OVER_GZIP" -v rj="$WORK_JSON_OVER_GZIP" 'BEGIN {
  printf "quick benchmark: gzip -dc %.3f s; hta-mpi .gz wall %.3f s (%.2fx), work %.3f s (%.2fx gzip, reference %.2fx); .json wall %.3f s (%.2fx), work %.3f s (%.2fx gzip, reference %.2fx)\n", g, z, z/g, wz, wz/g, rz, j, j/g, wj, wj/g, rj
  bad = 0
  if (wz/g > 2*rz) { print "REGRESSION: .json.gz throughput fell below half of the reference"; bad = 1 }
  if (wj/g > 2*rj) { print "REGRESSION: .json throughput fell below half of the reference"; bad = 1 }
  if (!bad) print "quick benchmark: within bounds"
  exit bad
}'
