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
#   scripts/compare-builds.sh OLD_BUILD_DIR NEW_BUILD_DIR [TRACES]
#
# TRACES defaults to ../shared/traces beside the repository.  Exit 0 when
# every output is identical, 1 with the differences listed otherwise.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 OLD_BUILD_DIR NEW_BUILD_DIR [TRACES]" >&2
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

inputs=("${real[@]}" "$REPO/examples/traces" "$WORK/gen-old")

run() { # build processes output options... ; exit status recorded beside the file
  local bin=$1 procs=$2 out=$3
  shift 3
  local rc=0
  mpirun -n "$procs" "$bin/hta-mpi" -q --force -o "$out" "$@" >/dev/null 2>"$out.err" || rc=$?
  echo "$rc" >"$out.rc"
}

n=0
for input in "${inputs[@]}"; do
  for variant in default-1 default-3 hta-1 hta-3; do
    procs=${variant#*-}
    opts=()
    [ "${variant%-*}" = hta ] && opts=(--round-like-hta --detail --critical-path)
    n=$((n + 1))
    run "$OLD" "$procs" "$WORK/$n-old.h5" "${opts[@]}" "$input"
    run "$NEW" "$procs" "$WORK/$n-new.h5" "${opts[@]}" "$input"
    label="${input#"$TRACES"/} ($variant)"
    compared=$((compared + 1))
    if ! cmp -s "$WORK/$n-old.h5.rc" "$WORK/$n-new.h5.rc"; then
      echo "DIFFERENT: $label: exit status $(cat "$WORK/$n-old.h5.rc") vs $(cat "$WORK/$n-new.h5.rc")"
      failures=$((failures + 1))
      continue
    fi
    if [ ! -e "$WORK/$n-old.h5" ] && [ ! -e "$WORK/$n-new.h5" ]; then
      continue # both refused the input the same way
    fi
    if ! "$PYTHON" - "$WORK/$n-old.h5" "$WORK/$n-new.h5" <<'EOF'
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


problems = []
with h5py.File(sys.argv[1], "r") as old, h5py.File(sys.argv[2], "r") as new:
    compare(old, new, problems)
for p in problems:
    print("   ", p)
sys.exit(1 if problems else 0)
EOF
    then
      echo "DIFFERENT: $label"
      failures=$((failures + 1))
    fi
  done
done

echo "compare-builds: $compared runs compared, $failures different"
[ "$failures" = 0 ]
