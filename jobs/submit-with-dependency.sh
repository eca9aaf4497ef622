#!/bin/sh
# submit-with-dependency.sh: analyse a training job's traces as soon as the
# training job has finished successfully.
#
#   jobs/submit-with-dependency.sh TRAIN_SCRIPT TRACE_DIR [hta-mpi options...]
#   jobs/submit-with-dependency.sh JOBID        TRACE_DIR [hta-mpi options...]
#
# Submits TRAIN_SCRIPT (or takes the already submitted job JOBID), then
# hta-mpi.sbatch (next to this script) on TRACE_DIR with
# --dependency=afterok:<training job>: the analysis starts only when the
# training job exits 0.  --kill-on-invalid-dep=yes cancels the analysis if
# the training job fails, instead of leaving it pending forever.  Extra
# sbatch options for the analysis (e.g. --ntasks=64) go in HTA_SBATCH_ARGS.
# Prints the two job IDs.
set -eu

if [ $# -lt 2 ]; then
  echo "usage: $0 TRAIN_SCRIPT|JOBID TRACE_DIR [hta-mpi options...]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
train=$1
trace_dir=$2
shift 2

case $train in
  *[!0-9]*|'') train_id=$(sbatch --parsable "$train") ;;
  *) train_id=$train ;;
esac
train_id=${train_id%%;*} # --parsable prints "id" or "id;cluster"

# shellcheck disable=SC2086 # HTA_SBATCH_ARGS is a list of options
analysis_id=$(sbatch --parsable ${HTA_SBATCH_ARGS:-} --dependency="afterok:$train_id" \
  --kill-on-invalid-dep=yes "$here/hta-mpi.sbatch" "$trace_dir" "$@")
analysis_id=${analysis_id%%;*}

echo "training job $train_id"
echo "analysis job $analysis_id (starts after job $train_id succeeds)"
