"""hta_mpi.runs: one hta-mpi run per trace directory and option set, kept.

TraceAnalysis (trace_analysis.py) asks for a results file with the options
a call needs; results_for() returns the path of one, running hta-mpi only
when no kept file fits.  A kept file is named by a key hashed from the
inputs (each trace's name, size and modification time), the options and
the analyser (its path, size and time): a changed trace or a rebuilt
binary or library gives a new key, so a stale file is never read, and a file made with
other options is never served for these.  Files live in `.hta-mpi/` beside
the traces, or, where that directory cannot be written, under
$XDG_CACHE_HOME/hta-mpi (~/.cache/hta-mpi).

Flags that only add tables (--detail, --critical-path) do not change any
other table, so a kept run made with more of them serves a call needing
fewer: the second call of a notebook rarely runs anything.

The run: `mpirun -n N hta-mpi` with N = min(traces, CPUs this process may
use); one CPU, or less input than mpirun's start-up is worth
(MPIRUN_MIN_BYTES), runs the binary directly (a lone process is a valid
MPI run).  The environment is passed on unchanged.  Progress comes from
hta-mpi's own lines on stderr ("analysed 3/8 traces"), shown as a bar in a
notebook (IPython's display, when present) and as plain lines otherwise.

A single trace is analysed in this process through libhta (libhta.py) when
the library loads: no MPI start-up.  Its tables are kept the same way,
written with h5py as the compound datasets results.load() reads, without
what only a run writes (the /timeline array, root attributes); callers
needing a complete file (the report, `hta-mpi diff`) ask for a run."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Flags that add tables without changing the others.
ADDITIVE_FLAGS = ("--detail", "--critical-path")
CACHE_FOLDER = ".hta-mpi"
_TRACE_SUFFIXES = (".json", ".json.gz", ".sqlite")


class RunError(RuntimeError):
    """hta-mpi could not produce a results file (its stderr included)."""


def find_binary():
    """The hta-mpi to run: $HTA_MPI, else hta-mpi on PATH, else the build
    tree beside this package's source (build/hta-mpi)."""
    named = os.environ.get("HTA_MPI")
    if named:
        if not os.access(named, os.X_OK):
            raise RunError(f"HTA_MPI={named} is not an executable")
        return os.path.abspath(named)
    found = shutil.which("hta-mpi")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(here, os.pardir, os.pardir, "build", "hta-mpi")
    if os.access(built, os.X_OK):
        return os.path.normpath(built)
    raise RunError("hta-mpi not found: install it (cmake --install), put it on PATH "
                   "or name it in the HTA_MPI environment variable")


def _is_trace(path):
    if os.path.isdir(path):
        return any(os.path.exists(os.path.join(path, f)) for f in ("kernel.csv", "conc_kernel.csv"))
    return path.endswith(_TRACE_SUFFIXES)


def list_traces(trace_dir, trace_files=None):
    """The inputs hta-mpi is given: trace_files' paths when given (a dict
    rank -> path, as HTA takes, or a list; as HTA, not joined to
    trace_dir), else every trace in trace_dir (Kineto .json/.json.gz,
    Nsight .sqlite, CUPTI CSV folders)."""
    if trace_files:
        paths = trace_files.values() if isinstance(trace_files, dict) else trace_files
        return sorted(os.path.abspath(p) for p in paths)
    entries = sorted(os.listdir(trace_dir))
    paths = [os.path.join(trace_dir, e) for e in entries if not e.startswith(".")]
    return [os.path.abspath(p) for p in paths if _is_trace(p)]


def _stat_entry(path):
    if os.path.isdir(path):
        return [path, [_stat_entry(os.path.join(path, f)) for f in sorted(os.listdir(path))]]
    st = os.stat(path)
    return [path, st.st_size, st.st_mtime_ns]


def run_key(inputs, options, analyser):
    """The hash naming a results file: inputs' names, sizes and times, the
    options (a canonical list of arguments) and the analyser (the hta-mpi
    binary or libhta, by its path, size and time)."""
    what = {"inputs": [_stat_entry(p) for p in inputs], "options": list(options),
            "analyser": _stat_entry(analyser)}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:20]


def _writable_dir(path):
    """Whether results may be kept in path (created if need be).  A folder
    whose mode lets nobody write (dr-xr-xr-x) is read-only for root too,
    which os.access would not say: shared traces stay untouched."""
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(path) and not _mode_writable(parent):
        return False
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return False
    return _mode_writable(path)


def _mode_writable(path):
    return os.access(path, os.W_OK) and bool(os.stat(path).st_mode & 0o222)


def cache_dir_for(trace_dir, inputs, cache_dir=None):
    """Where results are kept: cache_dir when given, else .hta-mpi beside
    the traces, else the user's cache directory."""
    if cache_dir:
        os.makedirs(cache_dir, exist_ok=True)
        return cache_dir
    base = trace_dir or os.path.dirname(inputs[0])
    beside = os.path.join(base, CACHE_FOLDER)
    if _writable_dir(beside):
        return beside
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    kept = os.path.join(home, "hta-mpi",
                        hashlib.sha256(os.path.abspath(base).encode()).hexdigest()[:16])
    os.makedirs(kept, exist_ok=True)
    return kept


# Below this much input one process beats mpirun, whose start costs about
# 0.6 s on the project's 2-core machine (trace_filter's two traces, 0.24
# MB: 0.2 s alone, 0.8 s under mpirun -n 2); a process reads about
# 100 MB/s of gzip traces, so 64 MB take well under a second alone.
MPIRUN_MIN_BYTES = 64 << 20


def _size(path):
    if os.path.isdir(path):
        return sum(_size(os.path.join(path, f)) for f in os.listdir(path))
    return os.path.getsize(path)


def processes_for(inputs, processes=None):
    """processes when given, else one for less than MPIRUN_MIN_BYTES of
    input, else min(traces, CPUs this process may use)."""
    if processes:
        return processes
    if sum(_size(p) for p in inputs) < MPIRUN_MIN_BYTES:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return max(1, min(len(inputs), cpus))


class _Progress:
    """A bar in a notebook, else one plain line per report on stderr."""

    def __init__(self, label, total):
        self.label, self.total, self.handle = label, total, None
        try:
            from IPython import get_ipython
            from IPython.display import display
            if get_ipython() is not None and "IPKernelApp" in get_ipython().config:
                self.handle = display(self._html(0), display_id=True)
        except ImportError:
            pass

    def _html(self, done):
        from IPython.display import HTML
        return HTML(f"<progress value='{done}' max='{max(self.total, 1)}'></progress> "
                    f"{self.label}: {done}/{self.total} traces")

    def update(self, done, total):
        self.total = total
        if self.handle is not None:
            self.handle.update(self._html(done))
        else:
            print(f"{self.label}: analysed {done}/{total} traces", file=sys.stderr, flush=True)


_ANALYSED = re.compile(r"analysed (\d+)/(\d+) traces")


def _run(cmd, n_traces, label):
    """Runs cmd showing its progress; (exit status, its other stderr
    lines).  An interrupted call (a notebook's stop button) ends the run
    rather than leaving it behind."""
    progress = _Progress(label, n_traces)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         errors="replace")
    lines = []
    try:
        for line in p.stderr:
            m = _ANALYSED.search(line)
            if m:
                progress.update(int(m.group(1)), int(m.group(2)))
            else:
                lines.append(line)
        return p.wait(), "".join(lines)
    except BaseException:
        p.terminate()       # mpirun passes it on to its processes
        p.wait()
        raise


def _kept(directory, inputs, options, analyser):
    """A kept file that serves options: made with them, or with them and
    more of the ADDITIVE_FLAGS."""
    wanted = set(o for o in options if o in ADDITIVE_FLAGS)
    rest = [o for o in options if o not in ADDITIVE_FLAGS]
    for extra in _supersets(sorted(set(ADDITIVE_FLAGS) - wanted)):
        flags = canonical(rest + sorted(wanted | set(extra)))
        path = os.path.join(directory, run_key(inputs, flags, analyser) + ".h5")
        if os.path.exists(path):
            return path
    return None


def _supersets(flags):
    subsets = [[]]
    for f in flags:
        subsets += [s + [f] for s in subsets]
    return subsets


def canonical(options):
    """options as groups (a flag and its values), sorted: the same
    options in any order name the same run."""
    groups = []
    for o in options:
        if o.startswith("--") or not groups:
            groups.append([o])
        else:
            groups[-1].append(o)
    return [a for g in sorted(groups) for a in g]


def _library():
    """libhta's path when it loads, else None (then the binary runs)."""
    try:
        from hta_mpi import libhta
        path = libhta.library()._name
    except (ImportError, OSError, RuntimeError):
        return None
    # Found on the system's path by name alone: no file to key the runs on.
    return path if os.path.exists(path) else None


# Tables whose event names results.load() joins back from another table.
_NAMED_BY_ID = ("critical_path_events",)


def write_tables(path, tables):
    """{table name: DataFrame} as 1-D compound datasets (strings as
    variable-length UTF-8), the layout results.load() reads."""
    import h5py
    import numpy as np
    with h5py.File(path, "w") as f:
        f.attrs["written_by"] = "libhta"
        for name, df in tables.items():
            if name in _NAMED_BY_ID:
                df = df.drop(columns="name")
            fields = [(col, h5py.string_dtype("utf-8") if df[col].dtype == object
                       else df[col].dtype) for col in df.columns]
            data = np.empty(len(df), dtype=fields)
            for col in df.columns:
                data[col] = df[col].to_numpy()
            f.create_dataset(name, data=data)


def _analyse_in_process(trace, options, path, label):
    from hta_mpi import libhta
    progress = _Progress(label, 1)
    write_tables(path, libhta.analyse_trace(trace, options))
    progress.update(1, 1)


def _run_binary(binary, inputs, options, path, label, processes=None):
    n = processes_for(inputs, processes)
    cmd = [binary, "-o", path, "--force"] + options + inputs
    if n > 1:
        cmd = ["mpirun", "-n", str(n)] + cmd
    status, stderr = _run(cmd, len(inputs), label)
    if status not in (0, 1) or not os.path.exists(path) or os.path.getsize(path) == 0:
        raise RunError(f"{' '.join(cmd)} exited {status}:\n{stderr.strip()}")


def write_traces(trace_dir, trace_files, out_dir, options, processes=None):
    """hta-mpi --write-traces out_dir on the traces (a run of its own,
    never kept); the path of its results file, in out_dir."""
    inputs = list_traces(trace_dir, trace_files)
    path = os.path.join(out_dir, "results.h5")
    _run_binary(find_binary(), inputs, ["--write-traces", out_dir] + list(options), path,
                "hta-mpi --write-traces", processes)
    return path


def results_for(trace_dir, options, trace_files=None, cache_dir=None, label="hta-mpi",
                in_process=None, processes=None):
    """Path of a results file for these traces and options (a list of
    hta-mpi arguments), analysing them if none is kept.  in_process: None
    analyses a single trace through libhta when it loads, False always
    runs the binary (a complete results file), True requires libhta.
    processes: the run's MPI processes (processes_for() when None; the
    results do not depend on it, so it is not part of the key).  Exit
    status 1 (some traces failed) still gives a file: /ranks says which."""
    inputs = list_traces(trace_dir, trace_files)
    if not inputs:
        raise RunError(f"{trace_dir}: no trace found (.json, .json.gz, .sqlite, CUPTI CSV folder)")
    library = _library() if in_process is not False and len(inputs) == 1 else None
    if in_process and library is None:
        raise RunError("in_process=True needs a single trace and libhta (HTA_LIBHTA)")
    analyser = library or find_binary()
    options = canonical(options)
    directory = cache_dir_for(trace_dir, inputs, cache_dir)
    kept = _kept(directory, inputs, options, analyser)
    if kept:
        return kept
    final = os.path.join(directory, run_key(inputs, options, analyser) + ".h5")
    fd, partial = tempfile.mkstemp(suffix=".h5.partial", dir=directory)
    os.close(fd)
    try:
        if library:
            _analyse_in_process(inputs[0], options, partial, label)
        else:
            _run_binary(analyser, inputs, options, partial, label, processes)
    except BaseException:
        os.unlink(partial)
        raise
    os.replace(partial, final)
    return final
