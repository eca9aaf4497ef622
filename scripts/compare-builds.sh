#!/bin/bash
# Diffs the results files of two builds of hta-mpi: a refactoring must not
# change any output.  Both builds analyse every real trace folder under
# TRACES (each folder, at any depth, that holds a file hta-mpi reads:
# Kineto or rocprofv3 JSON, Nsight Systems SQLite, CUPTI CSV; HTA's
# expected values in TRACES/expected are not inputs), the shipped
# examples and a small generated job (with a straggler, gzip and plain
# JSON), with default options and with --round-like-hta --detail
# --critical-path, each on one and on three processes (about 360 runs,
# 6-7 minutes on two cores).  Every dataset (type,
# shape, chunking, filters, values, NaN = NaN) and every attribute must be
# identical, except what records times and the command line: the file
# attributes created_utc, wall_seconds, gather_seconds, crossrank_seconds
# and command_line, and the columns parse_seconds and analysis_seconds of
# "ranks".  The generated job is written by each build's hta-tracegen, and
# the two jobs must be byte-identical too.
#
# With --fuzz, both builds read instead every input of the readers' fuzz
# corpus: the seeds fuzz/run.sh makes from TRACES (fuzz/make_corpus.sh,
# fuzz/make_input_corpus.py) and the saved reproducers in fuzz/regressions,
# for the Kineto JSON reader and the Nsight Systems SQLite, rocpd, CUPTI
# CSV, rocprofv3 JSON and rocprofv3 CSV readers.  Each input is written as
# the file or folder its harness writes (fuzz/input_targets.c), without
# the leading options byte; where the harness reads bit 0 of that byte as
# --step-regex '^step', so does the run.  The reader's byte is a refill
# size, which no option sets, so reader inputs differing only in it are
# read once.  One process per run, without mpirun and without the head
# start (HTA_MPI_NO_HEAD_START), so that an older build, whose head-start
# thread let SQLite call getenv while MPI_Init set variables, cannot fail
# the comparison by chance.  Exit statuses, error lines
# and results files must be identical.
#
#   scripts/compare-builds.sh [--fuzz] OLD_BUILD_DIR NEW_BUILD_DIR [TRACES]
#
# TRACES defaults to ../shared/traces beside the repository.  Exit 0 when
# every output is identical, 1 with the differences listed otherwise.
set -euo pipefail
fuzz=0
if [ "${1:-}" = --fuzz ]; then
  fuzz=1
  shift
fi
if [ $# -lt 2 ]; then
  echo "usage: $0 [--fuzz] OLD_BUILD_DIR NEW_BUILD_DIR [TRACES]" >&2
  exit 2
fi
OLD=$(realpath "$1")
NEW=$(realpath "$2")
REPO=$(realpath "$(dirname "$0")/..")
TRACES=${3:-$REPO/../shared/traces}
# The folders holding a trace, by the name endings hta-mpi's discovery
# lists (a CUPTI CSV folder by its kernel table).
mapfile -t real < <(find "$TRACES" -path "$TRACES/expected" -prune -o -type f \
  \( -name '*.json' -o -name '*.json.gz' -o -name '*.db' -o -name '*.sqlite' \
  -o -name kernel.csv -o -name '*kernel_trace.csv' \) -printf '%h\n' | sort -u)
if [ ${#real[@]} = 0 ]; then
  echo "$0: no real traces in $TRACES; give the traces folder as third argument" >&2
  exit 2
fi
PYTHON=/usr/bin/python3 # Debian's, with h5py
WORK=$(mktemp -d /tmp/hta-compare.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

failures=0
compared=0
n=0
sqlite=0
corrupt=0
# The results files to diff, one line each: OLD NEW LABEL, tab-separated,
# diffed in one Python process at the end.
pairs=$WORK/pairs
: >"$pairs"

run() { # build processes output options... ; exit status and errors beside the file
  local bin=$1 procs=$2 out=$3
  shift 3
  local rc=0
  if [ "$procs" = 0 ]; then # one process without mpirun
    "$bin/hta-mpi" -q --force -o "$out" "$@" </dev/null >/dev/null 2>"$out.err" || rc=$?
  else
    mpirun -n "$procs" "$bin/hta-mpi" -q --force -o "$out" "$@" </dev/null >/dev/null \
      2>"$out.err" || rc=$?
  fi
  echo "$rc" >"$out.rc"
}

# Runs both builds on one input and queues their results files for the
# diff, or reports a different exit status (with --fuzz, also different
# error lines: both runs see the same paths); an exit status past 3 (a
# signal, or mpirun's) is a crash, never an agreement.  SQLite finds some corrupt
# files corrupt on some opens only, even within one build, so where
# either run of an SQLite input says "malformed" the two may differ in
# their exit status and error line, as in the fuzz harnesses
# (fuzz/input_targets.c); such differences are counted apart.
run_both() { # label processes options... input
  local label=$1 procs=$2
  shift 2
  n=$((n + 1))
  run "$OLD" "$procs" "$WORK/$n-old.h5" "$@"
  run "$NEW" "$procs" "$WORK/$n-new.h5" "$@"
  compared=$((compared + 1))
  local rc_old rc_new
  rc_old=$(cat "$WORK/$n-old.h5.rc")
  rc_new=$(cat "$WORK/$n-new.h5.rc")
  if [ "$rc_old" -gt 3 ] || [ "$rc_new" -gt 3 ]; then
    echo "CRASHED: $label: exit status $rc_old vs $rc_new"
    failures=$((failures + 1))
    return
  fi
  if [ "$sqlite" = 1 ] && grep -qs malformed "$WORK/$n-old.h5.err" "$WORK/$n-new.h5.err" &&
    { [ "$rc_old" != "$rc_new" ] || ! cmp -s "$WORK/$n-old.h5.err" "$WORK/$n-new.h5.err"; }; then
    corrupt=$((corrupt + 1))
    return
  fi
  if [ "$rc_old" != "$rc_new" ]; then
    echo "DIFFERENT: $label: exit status $rc_old vs $rc_new"
    failures=$((failures + 1))
    return
  fi
  if [ "$fuzz" = 1 ] && ! cmp -s "$WORK/$n-old.h5.err" "$WORK/$n-new.h5.err"; then
    echo "DIFFERENT: $label: error lines"
    diff "$WORK/$n-old.h5.err" "$WORK/$n-new.h5.err" | head -n 6 | sed 's/^/    /' || true
    failures=$((failures + 1))
    return
  fi
  if [ -e "$WORK/$n-old.h5" ] || [ -e "$WORK/$n-new.h5" ]; then
    printf '%s\t%s\t%s\n' "$WORK/$n-old.h5" "$WORK/$n-new.h5" "$label" >>"$pairs"
  fi # else both refused the input the same way
}

if [ "$fuzz" = 1 ]; then
  # The corpus as fuzz/run.sh makes it, then every distinct input written
  # as its harness writes it, in a folder of its own.
  "$REPO/fuzz/make_corpus.sh" "$TRACES/hta" "$WORK/seeds" >/dev/null
  "$PYTHON" "$REPO/fuzz/make_input_corpus.py" "$TRACES" "$WORK/seeds" >/dev/null
  "$PYTHON" - "$WORK/seeds" "$REPO/fuzz/regressions" "$WORK/inputs" >"$WORK/list" <<'PY'
import hashlib, os, sys

seeds, regressions, out = sys.argv[1:4]
SEPARATOR = b"\n=====\n"  # HTA_FUZZ_CSV_SEPARATOR (fuzz/targets.h)
ONE_FILE = {"reader": "trace.json", "nsys_sqlite": "export.sqlite",
            "rocpd": "results.db", "rocprof_json": "results.json"}
CUPTI_CSV = ["kernel.csv", "cuda_runtime.csv", "gpu_memcpy.csv", "gpu_memset.csv",
             "cuda_sync.csv", "user_annotation.csv", "cuda_driver.csv"]
ROCPROF_CSV = ["9_" + name for name in ("kernel_trace.csv", "hip_api_trace.csv",
               "memory_copy_trace.csv", "marker_api_trace.csv", "rccl_api_trace.csv")]


def files(harness, lead, body):
    """The files the harness writes for an input: name -> contents."""
    if harness in ONE_FILE:
        return {ONE_FILE[harness]: body}
    names = list(CUPTI_CSV if harness == "cupti_csv" else ROCPROF_CSV)
    if harness == "cupti_csv" and lead & 2:
        names[0] = "conc_kernel.csv"
    return dict(zip(names, body.split(SEPARATOR)))


seen = set()
for harness in ("reader", "nsys_sqlite", "rocpd", "cupti_csv", "rocprof_json", "rocprof_csv"):
    for top in (os.path.join(regressions, harness), os.path.join(seeds, harness)):
        if not os.path.isdir(top):
            continue
        for name in sorted(os.listdir(top)):
            data = open(os.path.join(top, name), "rb").read()
            if not data:
                continue
            lead, body = data[0], data[1:]
            step = int(harness != "reader" and lead & 1 == 1)
            key = hashlib.sha1(f"{harness} {step} {lead & 2}".encode() + body).hexdigest()[:16]
            if key in seen:
                continue
            seen.add(key)
            folder = os.path.join(out, harness, key)
            os.makedirs(folder)
            for file_name, text in files(harness, lead, body).items():
                with open(os.path.join(folder, file_name), "wb") as f:
                    f.write(text)
            print(f"{folder}\t{step}\t{harness}/{name}")
PY
  export HTA_MPI_NO_HEAD_START=1
  while IFS=$'\t' read -r folder step label; do
    opts=()
    [ "$step" = 1 ] && opts=(--step-regex '^step')
    sqlite=0
    case $label in nsys_sqlite/* | rocpd/*) sqlite=1 ;; esac
    run_both "fuzz $label" 0 "${opts[@]}" "$folder"
  done <"$WORK/list"
else
  # The generated job, once per build's generator.
  for side in old new; do
    dir=$OLD
    [ $side = new ] && dir=$NEW
    mkdir -p "$WORK/gen-$side"
    "$dir/hta-tracegen" -o "$WORK/gen-$side" --ranks 4 --size-mb 0.3 \
      --straggler 2:1.5 --seed 7 >/dev/null
    "$dir/hta-tracegen" -o "$WORK/gen-$side" --ranks 2 --first-rank 4 --size-mb 0.3 \
      --straggler 2:1.5 --seed 7 --gzip --compact >/dev/null
  done
  if ! diff -r "$WORK/gen-old" "$WORK/gen-new" >/dev/null; then
    echo "DIFFERENT: hta-tracegen output"
    failures=$((failures + 1))
  fi
  for input in "${real[@]}" "$REPO/examples/traces" "$WORK/gen-old"; do
    for variant in default-1 default-3 hta-1 hta-3; do
      opts=()
      [ "${variant%-*}" = hta ] && opts=(--round-like-hta --detail --critical-path)
      run_both "${input#"$TRACES"/} ($variant)" "${variant#*-}" "${opts[@]}" "$input"
    done
  done
fi

# Every queued pair of results files must hold the same datasets and
# attributes; the last line printed is the number of pairs that differ.
report=$("$PYTHON" - "$pairs" <<'PY'
import sys
import h5py
import numpy as np

TIME_ATTRS = {"created_utc", "wall_seconds", "gather_seconds", "crossrank_seconds",
              "command_line"}
TIME_COLUMNS = {("ranks", "parse_seconds"), ("ranks", "analysis_seconds")}


def same_values(a, b):
    if a.dtype.kind in "fc":
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if a.dtype.kind == "O":
        return a.shape == b.shape and all(
            x == y for x, y in zip(a.ravel().tolist(), b.ravel().tolist()))
    return np.array_equal(a, b)


def same_attr(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and same_values(a, b)


def compare(old, new, problems):
    names = {}
    old.visititems(lambda n, o: names.setdefault(n, [None, None]).__setitem__(0, o))
    new.visititems(lambda n, o: names.setdefault(n, [None, None]).__setitem__(1, o))
    names[""] = [old, new]
    for name, (a, b) in sorted(names.items()):
        if a is None or b is None:
            problems.append(f"{name or '/'}: only in {'new' if a is None else 'old'}")
            continue
        if set(a.attrs) != set(b.attrs):
            problems.append(f"{name or '/'}: attributes {sorted(a.attrs)} vs {sorted(b.attrs)}")
        for key in set(a.attrs) & set(b.attrs):
            if name == "" and key in TIME_ATTRS:
                continue
            if not same_attr(a.attrs[key], b.attrs[key]):
                problems.append(f"{name or '/'}: attribute {key} differs")
        if not isinstance(a, h5py.Dataset):
            continue
        layout = lambda d: (d.dtype, d.shape, d.chunks, d.compression, d.shuffle)
        if layout(a) != layout(b):
            problems.append(f"{name}: {layout(a)} vs {layout(b)}")
            continue
        va, vb = a[()], b[()]
        if a.dtype.names:
            for field in a.dtype.names:
                if (name, field) in TIME_COLUMNS:
                    continue
                if not same_values(va[field], vb[field]):
                    problems.append(f"{name}: column {field} differs")
        elif not same_values(np.asarray(va), np.asarray(vb)):
            problems.append(f"{name}: values differ")

differing = 0
for line in open(sys.argv[1]):
    old_path, new_path, label = line.rstrip("\n").split("\t")
    problems = []
    try:
        with h5py.File(old_path, "r") as old, h5py.File(new_path, "r") as new:
            compare(old, new, problems)
    except OSError as e:
        problems.append(f"only one build wrote a readable file: {e}")
    if problems:
        differing += 1
        print(f"DIFFERENT: {label}")
        for p in problems:
            print("   ", p)
print(differing)
PY
)
printf '%s\n' "$report" | sed '$d'
failures=$((failures + $(printf '%s\n' "$report" | tail -n 1)))

if [ "$corrupt" -gt 0 ]; then
  echo "compare-builds: $corrupt corrupt SQLite inputs read differently, as SQLite may read them"
fi
echo "compare-builds: $compared runs compared, $failures different"
[ "$failures" = 0 ]
