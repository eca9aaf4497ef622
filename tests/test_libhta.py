"""hta_mpi.libhta: a real trace analysed in this process through the build's
libhta.so (ctypes, no MPI) gives the tables of the results file that
`hta-mpi` writes for the same trace, with the same names, columns and
values (timings and thread counts of /ranks aside), and the columns
table_specs() declares for each; options given as a
command line or as a dict mean what they mean to hta-mpi; a bad option or
a bad trace raises an error naming it."""
import gzip
import os
import sys

import numpy as np

from common import BUILD, VARYING, analyse, libhta_env, main, tmpdir, trace_dir

# This process loads libhta: in a sanitized build, it restarts itself with
# the sanitizers' runtimes preloaded (common.libhta_env).
if libhta_env(os.environ) is not os.environ and "LD_PRELOAD" not in os.environ:
    os.execve(sys.executable, [sys.executable] + sys.argv, libhta_env(os.environ))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
os.environ["HTA_LIBHTA"] = os.path.join(BUILD, "libhta.so")
from hta_mpi import libhta, results  # noqa: E402


def one_trace(folder):
    d = trace_dir(folder)
    return os.path.join(d, sorted(os.listdir(d))[0])


def assert_same_as_results_file(tables, path):
    names = results.tables(path)
    assert sorted(tables) == names, (sorted(set(tables) ^ set(names)))
    for name in names:
        want, got = results.load(path, name), tables[name]
        assert list(got.columns) == list(want.columns), name
        assert len(got) == len(want), (name, len(got), len(want))
        for c in want.columns:
            if c in VARYING:
                continue
            a, b = want[c].to_numpy(), got[c].to_numpy()
            same = (np.array_equal(a, b, equal_nan=True) if a.dtype.kind == "f"
                    else list(a) == list(b))
            assert same, f"{name}.{c}: {b[:5]} != results file's {a[:5]}"


def test_default_options_give_the_results_file():
    trace = one_trace("alexnet")
    path, _ = analyse(trace, extra=["-q"])
    tables = libhta.analyse_trace(trace)
    assert_same_as_results_file(tables, path)
    assert tables["ranks"].status[0] == "ok"
    assert len(tables["kernels"]) > 10 and tables["kernels"].name.map(type).eq(str).all()


def test_options_as_command_line_and_as_dict():
    trace = one_trace("nccl_data")
    args = ["--round-like-hta", "--detail", "--critical-path", "--bins", "7"]
    path, _ = analyse(trace, extra=["-q"] + args)
    assert_same_as_results_file(libhta.analyse_trace(trace, args), path)
    as_dict = libhta.analyse_trace(trace, {"round-like-hta": True, "detail": True,
                                           "critical-path": True, "bins": 7})
    assert_same_as_results_file(as_dict, path)
    assert len(as_dict["collectives"]) > 0 and "critical_path_events" in as_dict


def test_table_specs_declare_the_analysed_tables():
    specs = libhta.table_specs()
    assert "kernels" in specs and "diff/kernels" in specs and "timeline" not in specs
    assert specs["kernels"][:2] == [("rank", "int64"), ("name", "str")], specs["kernels"]
    kinds = {"int64": "i", "float64": "f", "str": "O"}
    tables = libhta.analyse_trace(one_trace("nccl_data"), ["--detail", "--critical-path"])
    for name, df in tables.items():
        assert name in specs, name
        declared = specs[name]
        if name in results._NAMES_OF:         # the joined name column of load()
            df = df.drop(columns="name")
        if declared:
            assert [(c, kinds[k]) for c, k in declared] == \
                [(c, df[c].dtype.kind) for c in df.columns], name


def test_bad_option_and_bad_trace_are_named():
    for options, word in ((["--bins", "zero"], "--bins"), ({"no-such-option": 1}, "no-such")):
        try:
            libhta.analyse_trace(one_trace("alexnet"), options)
            raise AssertionError(f"{options} accepted")
        except libhta.LibhtaError as e:
            assert word in str(e), str(e)
    bad = os.path.join(tmpdir(), "rank-0.json.gz")
    with gzip.open(bad, "wt") as f:
        f.write('{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1')
    try:
        libhta.analyse_trace(bad)
        raise AssertionError("a truncated trace analysed")
    except libhta.LibhtaError as e:
        assert bad in str(e) and "byte" in str(e), str(e)


def test_version_is_the_programs():
    p = analyse(one_trace("alexnet"), extra=["-q"])[0]
    assert libhta.version() == results.attributes(p)["tool_version"]


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_") and
          callable(v)])
