"""hta_mpi.libhta: one trace analysed in this process through libhta, no MPI.

    from hta_mpi.libhta import analyse_trace
    tables = analyse_trace("rank-0.json.gz", ["--round-like-hta", "--bins", "10"])
    tables = analyse_trace("rank-0.json.gz", {"round-like-hta": True, "bins": 10})
    tables["kernels"]                  # a DataFrame

analyse_trace() returns what a one-trace run of `hta-mpi PATH` writes into
its results file, without starting MPI or writing a file: a dict from the
results file's table names ("kernels", "cross_rank/kernels", as
results.tables() lists them) to DataFrames with the file's columns and
values, strings decoded and /critical_path_events given its event names,
as results.load() gives them.  The /timeline array is not a table and is
not among them.  PATH is any input hta-mpi reads: a Kineto .json or
.json.gz, an Nsight Systems SQLite export (several GPUs: a rank each), a
CUPTI CSV folder.  table_specs() lists every table a results file can
hold with its columns, as libhta declares them.

Options are hta-mpi's long options (docs/hta-mpi.1): as a command line
(list of str, "--name value" or "--name=value"), or as a dict from the name
(dashes optional) to its value, True for a flag.  Options of the MPI run
only (output, progress) are accepted and ignored.

The analysis runs in libhta.so (ctypes), found in this order: the
HTA_LIBHTA environment variable (the library's path), beside this package
where `cmake --install` put both (PREFIX/lib...), the build tree of a source
checkout (build/), then the system's library path."""
import ctypes
import ctypes.util
import glob
import os

import numpy as np
import pandas as pd

SOVERSION = 0                          # include/hta/version.h's HTA_SOVERSION
_NAMES = (f"libhta.so.{SOVERSION}", "libhta.so")
_COL_I64, _COL_F64, _COL_STR = 0, 1, 2


class LibhtaError(RuntimeError):
    """A trace libhta could not read or analyse, or a bad option: the
    message names the file or the option."""


class _Error(ctypes.Structure):
    _fields_ = [("text", ctypes.c_char * 512)]


def _candidates():
    env = os.environ.get("HTA_LIBHTA")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    # installed: PREFIX/lib/python3/dist-packages/hta_mpi -> PREFIX/lib[/triplet];
    # source tree: python/hta_mpi -> build/
    for up in (3, 4, 2):
        base = os.path.normpath(os.path.join(here, *[".."] * up))
        for folder in (base, os.path.join(base, "lib"), os.path.join(base, "build")):
            for name in _NAMES:
                yield os.path.join(folder, name)
                yield from sorted(glob.glob(os.path.join(folder, "*", name)))
    found = ctypes.util.find_library("hta")
    if found:
        yield found


def _declare(lib):
    p, s, i64, f64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64, ctypes.c_double
    size, err = ctypes.c_size_t, ctypes.POINTER(_Error)
    for name, restype, argtypes in (
            ("hta_version", s, []),
            ("hta_settings_new", p, []),
            ("hta_settings_destroy", None, [p]),
            ("hta_settings_set", ctypes.c_int, [p, s, s, err]),
            ("hta_settings_takes_value", ctypes.c_int, [s]),
            ("hta_analyse_trace", p, [s, p, err]),
            ("hta_tableset_destroy", None, [p]),
            ("hta_tableset_count", size, [p]),
            ("hta_tableset_at", p, [p, size]),
            ("hta_table_name", s, [p]),
            ("hta_table_row_count", size, [p]),
            ("hta_table_column_count", size, [p]),
            ("hta_table_column_name", s, [p, size]),
            ("hta_table_column_type", ctypes.c_int, [p, size]),
            ("hta_table_copy_i64", ctypes.c_int, [p, size, ctypes.POINTER(i64)]),
            ("hta_table_copy_f64", ctypes.c_int, [p, size, ctypes.POINTER(f64)]),
            ("hta_table_copy_str", ctypes.c_int, [p, size, ctypes.POINTER(s)]),
            ("hta_table_spec_count", size, []),
            ("hta_table_spec_at", p, [size]),
            ("hta_table_spec_name", s, [p]),
            ("hta_table_spec_column_count", size, [p]),
            ("hta_table_spec_column_name", s, [p, size]),
            ("hta_table_spec_column_type", ctypes.c_int, [p, size]),
            ("hta_table_spec_is_written", ctypes.c_int, [p])):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


_LIB = None


def library():
    """The loaded libhta (ctypes.CDLL); LibhtaError when none is found."""
    global _LIB
    if _LIB is None:
        tried = []
        for path in _candidates():
            if os.path.sep in path and not os.path.exists(path):
                continue
            try:
                _LIB = _declare(ctypes.CDLL(path))
                break
            except OSError as e:
                tried.append(f"{path}: {e}")
        else:
            raise LibhtaError("libhta.so not found (set HTA_LIBHTA to its path)"
                              + "".join("\n  " + t for t in tried))
    return _LIB


def version():
    """The loaded libhta's version, "MAJOR.MINOR.PATCH"."""
    return library().hta_version().decode()


_KINDS = {_COL_I64: "int64", _COL_F64: "float64", _COL_STR: "str"}


def table_specs():
    """Every table a results or diff file holds, as libhta declares it:
    {name: [(column, "int64" | "float64" | "str"), ...]}, in the order of
    docs/results-format.md; [] for a table whose columns depend on the
    trace (the CUPTI counters')."""
    lib = library()
    specs = {}
    for i in range(lib.hta_table_spec_count()):
        spec = lib.hta_table_spec_at(i)
        if lib.hta_table_spec_is_written(spec):
            specs[lib.hta_table_spec_name(spec).decode()] = [
                (lib.hta_table_spec_column_name(spec, c).decode(),
                 _KINDS[lib.hta_table_spec_column_type(spec, c)])
                for c in range(lib.hta_table_spec_column_count(spec))]
    return specs


def _pairs(options):
    """(name, value or None) from a command line or a dict."""
    if isinstance(options, dict):
        for name, value in options.items():
            name = name.lstrip("-")
            if value is True:
                yield name, None
            elif value is not False and value is not None:
                yield name, str(value)
        return
    args = list(options)
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("--"):
            raise LibhtaError(f"{arg}: expected a long option (--name)")
        name, eq, value = arg[2:].partition("=")
        if not eq and library().hta_settings_takes_value(name.encode()) == 1:
            i += 1
            if i == len(args):
                raise LibhtaError(f"--{name}: missing value")
            value = args[i]
        yield name, value if (eq or value) else None
        i += 1


def _settings(lib, options):
    settings = lib.hta_settings_new()
    if not settings:
        raise MemoryError("libhta: out of memory")
    err = _Error()
    try:
        for name, value in _pairs(options or ()):
            if lib.hta_settings_set(settings, name.encode(),
                                    None if value is None else value.encode(),
                                    ctypes.byref(err)):
                raise LibhtaError(err.text.decode("utf-8", "replace"))
    except BaseException:
        lib.hta_settings_destroy(settings)
        raise
    return settings


def _column(lib, table, c, rows):
    kind = lib.hta_table_column_type(table, c)
    if kind == _COL_I64:
        out = np.empty(rows, dtype=np.int64)
        lib.hta_table_copy_i64(table, c, out.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)))
        return out
    if kind == _COL_F64:
        out = np.empty(rows, dtype=np.float64)
        lib.hta_table_copy_f64(table, c, out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        return out
    cells = (ctypes.c_char_p * rows)()
    lib.hta_table_copy_str(table, c, cells)
    return np.array([v.decode("utf-8") for v in cells], dtype=object)


def _frame(lib, table):
    rows = lib.hta_table_row_count(table)
    columns = {}
    for c in range(lib.hta_table_column_count(table)):
        columns[lib.hta_table_column_name(table, c).decode()] = _column(lib, table, c, rows)
    return pd.DataFrame(columns)


def _with_event_names(frames):
    """As results.load(): event names joined where a table names them by id."""
    from hta_mpi import results
    for table, names in results._NAMES_OF.items():
        if table in frames and names in frames:
            frames[table] = results._with_names(frames[table], frames[names])
    return frames


def analyse_trace(path, options=None):
    """Analyses the trace at path in this process (module docstring):
    {table name: DataFrame}.  LibhtaError naming the file when it cannot be
    read or analysed, or naming the option when one is wrong."""
    lib = library()
    settings = _settings(lib, options)
    err = _Error()
    try:
        tables = lib.hta_analyse_trace(os.fsencode(path), settings, ctypes.byref(err))
    finally:
        lib.hta_settings_destroy(settings)
    if not tables:
        raise LibhtaError(err.text.decode("utf-8", "replace"))
    try:
        frames = {}
        for i in range(lib.hta_tableset_count(tables)):
            table = lib.hta_tableset_at(tables, i)
            frames[lib.hta_table_name(table).decode()] = _frame(lib, table)
    finally:
        lib.hta_tableset_destroy(tables)
    return _with_event_names(frames)
