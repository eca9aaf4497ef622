"""Shared helpers for hta-mpi's tests: run the real binary under mpirun and
read the real HDF5 file back with h5py.

Every test is a script run by ctest as
    python3 tests/test_X.py BUILD_DIR TRACES_DIR
and exits non-zero (with an assertion message) on failure."""
import atexit
import contextlib
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np
import pandas as pd

BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.abspath("build")
TRACES = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else os.path.abspath("../shared/traces")
HTA_MPI = os.path.join(BUILD, "hta-mpi")
TRACEGEN = os.path.join(BUILD, "hta-tracegen")

# Open MPI refuses root without these; --oversubscribe lets tests start more
# processes than this machine has cores.
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")

# Folders with integer-microsecond timestamps, and those with fractional ones
# (which HTA rounds: compared with --round-like-hta, see docs/definitions.md).
INTEGER_FOLDERS = ["trace_filter", "negative_queue", "alexnet"]
FRACTIONAL_FOLDERS = ["ns_resolution", "nccl_data", "amd_mi250", "triton"]


def _cache_value(name):
    """A variable of BUILD's CMakeCache.txt, or None."""
    try:
        with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith(name + ":"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


def libhta_env(env):
    """env for a program that loads the build's libhta.so without being
    built with the sanitizers (Python, a program built against the
    installed library).  In a sanitized build (scripts/test-sanitized.sh)
    their runtimes must come first, so they are preloaded, and leaks are
    not checked: the host program's own memory at exit is none of
    libhta's (the C tests check libhta's)."""
    if _cache_value("HTA_SANITIZE") != "ON" and _cache_value("HTA_FUZZ") != "ON":
        return env
    cc = _cache_value("CMAKE_C_COMPILER") or "cc"
    runtimes = [subprocess.run([cc, f"-print-file-name={lib}"], capture_output=True,
                               text=True, check=True).stdout.strip()
                for lib in ("libasan.so", "libubsan.so")]
    options = env.get("ASAN_OPTIONS", "")
    return dict(env, LD_PRELOAD=" ".join(runtimes),
                ASAN_OPTIONS=(options + ":" if options else "") + "detect_leaks=0")


class Skip(Exception):
    """A test that cannot run here, with the reason (main reports it)."""


def require_traces():
    """Raises Skip, naming the folder, when the real traces are absent."""
    if not os.path.isdir(os.path.join(TRACES, "hta")):
        raise Skip(f"the real traces are absent: no {TRACES}/hta "
                   "(../shared/traces beside the repository)")


_TEMPORARY = []


def _remove_temporary():
    for d in _TEMPORARY:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_remove_temporary)


def tmpdir():
    """A fresh directory, removed when the test script exits."""
    d = tempfile.mkdtemp(prefix="hta-test-")
    _TEMPORARY.append(d)
    return d


def run(args, processes=1, expect=0, timeout=600, mpirun_options=()):
    """Runs hta-mpi under mpirun; returns the CompletedProcess."""
    cmd = ["mpirun"] + list(mpirun_options) + ["-n", str(processes), HTA_MPI] + list(args)
    p = subprocess.run(cmd, env=MPI_ENV, capture_output=True, text=True, timeout=timeout)
    if expect is not None and p.returncode != expect:
        raise AssertionError(f"{' '.join(cmd)} exited {p.returncode}, expected {expect}\n"
                             f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def analyse(inputs, processes=1, extra=(), expect=0, mpirun_options=()):
    """Runs hta-mpi on inputs into a fresh file; returns (path, process)."""
    out = os.path.join(tmpdir(), "results.h5")
    if isinstance(inputs, str):
        inputs = [inputs]
    p = run(["-o", out] + list(extra) + list(inputs), processes=processes, expect=expect,
            mpirun_options=mpirun_options)
    return out, p


@contextlib.contextmanager
def locked_database(path):
    """path's SQLite database held locked by another process (a writer in
    an exclusive transaction) while the block runs."""
    locker = subprocess.Popen(
        [sys.executable, "-c",
         "import sqlite3,time\n"
         f"db=sqlite3.connect({path!r}, isolation_level=None)\n"
         "db.execute('BEGIN EXCLUSIVE')\n"
         "print('locked', flush=True)\n"
         "time.sleep(120)\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout.readline().strip() == "locked"
        yield
    finally:
        locker.kill()
        locker.wait()


def trace_rows(path):
    """The rows of /ranks that are traces: without those of the ranks of
    the recorded world size that no trace holds (status "missing")."""
    ranks = table(path, "/ranks")
    return ranks[ranks.status != "missing"].reset_index(drop=True)


def table(path, name):
    """A dataset of the results file as a DataFrame with str columns."""
    with h5py.File(path, "r") as f:
        df = pd.DataFrame(f[name][()])
    for c in df.columns:
        if df[c].dtype == object:
            df[c] = df[c].map(lambda v: v.decode() if isinstance(v, bytes) else v)
    return df


def critical_path_segments(path):
    """/critical_path_events with each segment's event name joined from
    /critical_path_names ("" for time put down to no event), after checking
    that the names table lists each rank's names once, numbered 0.. in
    order, and every one of them is used."""
    seg = table(path, "critical_path_events")
    names = table(path, "critical_path_names")
    assert not names.duplicated(["rank", "name"]).any(), names
    for rank, g in names.groupby("rank"):
        assert list(g.name_id) == list(range(len(g))), (rank, g)
    used = seg[seg.name_id >= 0]
    assert set(zip(used["rank"], used.name_id)) == set(zip(names["rank"], names.name_id))
    assert (seg.name_id >= -1).all()
    named = seg.merge(names, on=["rank", "name_id"], how="left", validate="many_to_one")
    named["name"] = named["name"].fillna("")
    return named


def expected(folder, name):
    require_traces()
    return pd.read_csv(os.path.join(TRACES, "expected", folder, name))


def trace_dir(folder):
    require_traces()
    return os.path.join(TRACES, "hta", folder)


def close(actual, want, abs_tol=0.0, rel_tol=0.0):
    if isinstance(want, float) and math.isnan(want):
        return isinstance(actual, float) and math.isnan(actual)
    return abs(actual - want) <= max(abs_tol, rel_tol * abs(want))


def assert_close(actual, want, what, abs_tol=0.0, rel_tol=0.0):
    if not close(float(actual), float(want), abs_tol, rel_tol):
        raise AssertionError(f"{what}: got {actual}, HTA/expected {want} "
                             f"(abs_tol {abs_tol}, rel_tol {rel_tol})")


def tolerances(folder):
    """(time_abs_us, pct_abs) from ../shared/traces/README.md; fractional
    traces are run with --round-like-hta, which reproduces HTA exactly."""
    return 1.0, 0.01


def hta_args(folder):
    return ["--round-like-hta"] if folder in FRACTIONAL_FOLDERS else []


# Columns that may differ between runs of the same traces: timings, and
# which process analysed a trace.
VARYING = {"parse_seconds", "analysis_seconds", "process", "threads"}


def generated(ranks=6, straggler=None, size_mb=0.3, extra=()):
    """A fresh directory of generated .json.gz rank traces."""
    d = tmpdir()
    args = [TRACEGEN, "-o", d, "--ranks", str(ranks), "--size-mb", str(size_mb), "--gzip"] + list(extra)
    if straggler is not None:
        args += ["--straggler", f"{straggler}:1.3"]
    subprocess.run(args, check=True)
    return d


def all_tables(path):
    """Every dataset of a results file, by path, as numpy arrays."""
    with h5py.File(path, "r") as f:
        names = []
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        return {n: f[n][()] for n in names}


def comparable(name, data):
    if data.dtype.names:
        return {c: data[c] for c in data.dtype.names if c not in VARYING}
    return {"": data}


def assert_same_tables(base, tables, what):
    """The same datasets with the same values, VARYING columns aside."""
    assert sorted(tables) == sorted(base), (what, sorted(tables), sorted(base))
    for name in base:
        a, b = comparable(name, base[name]), comparable(name, tables[name])
        assert a.keys() == b.keys(), name
        for c in a:
            same = np.array_equal(a[c], b[c], equal_nan=a[c].dtype.kind == "f")
            assert same, f"{name}.{c} differs with {what}"


class _Cost:
    """Wall and CPU seconds (this process and the processes it waited for)
    since it was made, for the report of each test: where a suite's time
    goes."""

    def __init__(self):
        self.wall, self.cpu = time.monotonic(), self._cpu()

    @staticmethod
    def _cpu():
        usage = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
        return sum(u.ru_utime + u.ru_stime for u in usage)

    def __str__(self):
        return f"{time.monotonic() - self.wall:.1f} s, {self._cpu() - self.cpu:.1f} s CPU"


def main(tests, setup=None):
    """Runs setup (the work the tests share), then each test function;
    reports each with its wall and CPU seconds, exits 1 if any failed, 77
    (ctest SKIP) if every test was skipped.  A setup that raises Skip skips
    them all."""
    failed = skipped = 0
    try:
        if setup:
            cost = _Cost()
            setup()
            print(f"setup ({cost})")
    except Skip as e:
        print(f"SKIP: {e}")
        sys.exit(77)
    for t in tests:
        try:
            cost = _Cost()
            t()
            print(f"ok   {t.__name__} ({cost})")
        except Skip as e:
            skipped += 1
            print(f"skip {t.__name__}: {e}")
        except Exception as e:  # noqa: BLE001 - report every failure
            failed += 1
            print(f"FAIL {t.__name__}: {e}")
    print(f"{len(tests) - failed - skipped} passed, {failed} failed, {skipped} skipped")
    if failed:
        sys.exit(1)
    sys.exit(77 if skipped == len(tests) else 0)
