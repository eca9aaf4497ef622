"""hta_mpi.TraceAnalysis, HTA's notebook interface over hta-mpi: every
method's DataFrame against HTA 0.6.1's own output stored in
../shared/traces/expected (same columns, index and order, values within the
README's tolerances; fractional traces with round_like_hta=True, as HTA
rounds), an answer where HTA failed (expected/*/extra/hta_calls.json), the
kept runs (reused, invalidated by a changed trace, never served for other
options), TraceDiff, and the example script.

One analyzer per folder, sharing one cache directory: each folder is run
once per option set (default, --detail, --critical-path, --sequence-op)."""
import json
import os
import shutil
import signal
import subprocess
import sys

import numpy as np
import pandas as pd

from common import (
    BUILD, FRACTIONAL_FOLDERS, INTEGER_FOLDERS, MPI_ENV, TRACES, assert_close, libhta_env,
    main, require_traces, tmpdir, trace_dir)

# A single trace is analysed in this process through libhta: in a sanitized
# build, the test restarts itself with the sanitizers' runtimes preloaded.
if libhta_env(os.environ) is not os.environ and "LD_PRELOAD" not in os.environ:
    os.execve(sys.executable, [sys.executable] + sys.argv, libhta_env(os.environ))

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))
os.environ.update(MPI_ENV)                      # root in CI, as the other tests
os.environ["HTA_MPI"] = os.path.join(BUILD, "hta-mpi")
os.environ["HTA_LIBHTA"] = os.path.join(BUILD, "libhta.so")

from hta_mpi import TraceAnalysis, TraceDiff, runs  # noqa: E402

FOLDERS = INTEGER_FOLDERS + FRACTIONAL_FOLDERS
T_ABS, P_ABS = 1.0, 0.01
ROUNDED = 0.0051                                # HTA rounds to 2 or 3 decimals
CACHE = None
_analyzers = {}


def setup():
    global CACHE
    require_traces()
    CACHE = tmpdir()


def analyzer(folder):
    if folder not in _analyzers:
        # trace_filter's two traces under mpirun -n 2: rows come back through
        # the gather (by default so little input runs in one process).
        _analyzers[folder] = TraceAnalysis(trace_dir=trace_dir(folder), cache_dir=CACHE,
                                           round_like_hta=folder in FRACTIONAL_FOLDERS,
                                           processes=2 if folder == "trace_filter" else None)
    return _analyzers[folder]


def expected_path(folder, name, extra=False):
    return os.path.join(TRACES, "expected", folder, *(["extra"] if extra else []), name)


def hta_calls(folder):
    path = expected_path(folder, "hta_calls.json", extra=True)
    with open(path) as f:
        return json.load(f)


def expect_csv(folder, name, extra=False, **kw):
    return pd.read_csv(expected_path(folder, name, extra), **kw)


def all_ranks(folder):
    return sorted(expect_csv(folder, "temporal_breakdown.csv")["rank"])


def assert_frame(got, want, what, time_cols=(), pct_cols=(), exact_cols=(), rounded_cols=(),
                 rel_cols=(), check_index=True):
    """Same columns in the same order, the same index (when check_index),
    the same rows in order, values within tolerance per column kind."""
    assert list(got.columns) == list(want.columns), f"{what}: columns {list(got.columns)} " \
                                                    f"vs HTA {list(want.columns)}"
    assert len(got) == len(want), f"{what}: {len(got)} rows, HTA {len(want)}"
    if check_index:
        assert list(got.index) == list(want.index), f"{what}: index {list(got.index)[:5]} " \
                                                    f"vs HTA {list(want.index)[:5]}"
    for col in exact_cols:
        assert list(got[col]) == list(want[col]), f"{what} {col}: {list(got[col])[:5]} vs " \
                                                  f"HTA {list(want[col])[:5]}"
    for cols, tol in ((time_cols, (T_ABS, 0.0)), (pct_cols, (P_ABS, 0.0)),
                      (rounded_cols, (ROUNDED, 0.0)), (rel_cols, (1e-6, 1e-9))):
        for col in cols:
            for i, (g, w) in enumerate(zip(got[col], want[col])):
                assert_close(g, w, f"{what} row {i} {col}", *tol)


# -- HTA's breakdowns: expected/<folder>/*.csv ------------------------------

def check_temporal(folder):
    got = analyzer(folder).get_temporal_breakdown(visualize=False)
    want = expect_csv(folder, "temporal_breakdown.csv")
    assert_frame(got, want, f"{folder} temporal", exact_cols=["rank"],
                 time_cols=[c for c in want.columns if c.endswith("(us)")],
                 pct_cols=[c for c in want.columns if c.endswith("pctg")])


def check_overlap(folder):
    got = analyzer(folder).get_comm_comp_overlap(visualize=False)
    want = expect_csv(folder, "comm_comp_overlap.csv")
    assert_frame(got, want, f"{folder} overlap", exact_cols=["rank"],
                 pct_cols=["comp_comm_overlap_pctg"])


KERNEL_TIMES = ["sum (us)", "max (us)", "min (us)", "mean (us)"]


def check_kernels(folder):
    a = analyzer(folder)
    types, kernels = a.get_gpu_kernel_breakdown(visualize=False)
    assert_frame(types, expect_csv(folder, "kernel_type_breakdown.csv"), f"{folder} kernel types",
                 exact_cols=["kernel_type"], time_cols=["sum"], pct_cols=["percentage"])
    for name, kw in (("kernel_breakdown.csv", {}),
                     ("kernel_breakdown_all.csv", {"num_kernels": 10**9, "duration_ratio": 1.0})):
        _, kernels = a.get_gpu_kernel_breakdown(visualize=False, **kw)
        assert_frame(kernels, expect_csv(folder, name), f"{folder} {name}",
                     exact_cols=["name", "kernel_type", "rank"], time_cols=KERNEL_TIMES,
                     rel_cols=["stddev"])


IDLE_STATS = ["mean", "std", "min", "25%", "50%", "75%", "max"]


def check_idle(folder):
    df, stats = analyzer(folder).get_idle_time_breakdown(
        ranks=all_ranks(folder), visualize=False, show_idle_interval_stats=True)
    want = expect_csv(folder, "idle_time_breakdown.csv")
    # HTA lists a rank's streams in the order their first event comes in
    # the trace: the rows are compared in HTA's order.
    key = ["rank", "stream", "idle_category"]
    assert_frame(df.reset_index(drop=True), want, f"{folder} idle time",
                 exact_cols=key, time_cols=["idle_time"], rounded_cols=["idle_time_ratio"])
    # HTA's index: 0.. per rank (its per-rank frames concatenated).
    per_rank = [list(range(n)) for n in want.groupby("rank", sort=False).size()]
    assert list(df.index) == sum(per_rank, []), f"{folder}: index {list(df.index)}"
    want = expect_csv(folder, "idle_time_interval_stats.csv", index_col=0)
    assert_frame(stats, want, f"{folder} idle intervals",
                 exact_cols=["rank", "stream", "count"], rounded_cols=IDLE_STATS)
    assert stats.index.name == "idle_category"


def check_launches(folder):
    got = analyzer(folder).get_cuda_kernel_launch_stats(ranks=all_ranks(folder), visualize=False,
                                                        launch_apis_like_hta=True)
    want = expect_csv(folder, "cuda_kernel_launch_stats.csv")
    assert sorted(got) == all_ranks(folder), sorted(got)
    for rank, df in got.items():
        w = want[want["rank"] == rank].set_index("i").drop(columns="rank")
        w.index.name = None
        # HTA's rows follow the CPU events' trace order; compare by correlation.
        g = df.sort_values("correlation", kind="stable").reset_index(drop=True)
        w = w.sort_values("correlation", kind="stable").reset_index(drop=True)
        assert_frame(g, w, f"{folder} rank {rank} launches", exact_cols=["correlation"],
                     time_cols=["cpu_duration", "gpu_duration", "launch_delay"])


def check_summary(folder, got, name, what, rel):
    path = expected_path(folder, name)
    with open(path) as f:
        if len(f.readlines()) <= 2:
            # HTA's describe() of no point: an empty frame.
            assert got is None or got.empty, f"{folder} {what}: HTA has no row, got {got}"
            return
    want = pd.read_csv(path, header=[0, 1], index_col=[0, 1])
    assert got is not None, f"{folder} {what}: None, HTA has {len(want)} rows"
    want.index.names = got.index.names
    assert list(got.columns) == list(want.columns), f"{what}: {list(got.columns)}"
    assert list(got.index) == list(want.index), f"{folder} {what}: {list(got.index)} vs " \
                                                f"{list(want.index)}"
    for col in want.columns:
        for i, (g, w) in enumerate(zip(got[col], want[col])):
            assert_close(g, w, f"{folder} {what} row {i} {col}", rel_tol=rel)


def check_queue(folder):
    a = analyzer(folder)
    check_summary(folder, a.get_queue_length_summary(ranks=all_ranks(folder)),
                  "queue_length_summary.csv", "queue length", 1e-9)
    series = a.get_queue_length_time_series(ranks=all_ranks(folder))
    check_summary(folder, a.get_queue_length_summary_from_time_series(series),
                  "queue_length_summary.csv", "queue length from series", 1e-9)
    blocked = a.get_time_spent_blocked_on_full_queue(series)
    want = expect_csv(folder, "blocked_on_full_queue.csv")
    assert_frame(blocked, want, f"{folder} blocked", check_index=False)


def check_memory_bw(folder):
    a = analyzer(folder)
    check_summary(folder, a.get_memory_bw_summary(ranks=all_ranks(folder)),
                  "memory_bw_summary.csv", "memory bandwidth", 1e-9)
    series = a.get_memory_bw_time_series(ranks=all_ranks(folder))
    for rank, df in series.items():
        assert list(df.columns) == ["ts", "name", "memory_bw_gbps"]
        assert (df.memory_bw_gbps >= -1e-9).all(), f"{folder} rank {rank}"


FIRST_ROUND = {
    "temporal_breakdown.csv": check_temporal, "comm_comp_overlap.csv": check_overlap,
    "kernel_breakdown_all.csv": check_kernels, "idle_time_breakdown.csv": check_idle,
    "cuda_kernel_launch_stats.csv": check_launches, "queue_length_summary.csv": check_queue,
    "memory_bw_summary.csv": check_memory_bw,
}


def make_first_round_test(folder):
    def test():
        checked = [f for f in FIRST_ROUND if os.path.exists(expected_path(folder, f))]
        for f in checked:
            FIRST_ROUND[f](folder)
        assert len(checked) >= 4, (folder, checked)
    test.__name__ = f"test_hta_calls_{folder}"
    return test


def test_potential_stragglers():
    with open(expected_path("trace_filter", "potential_stragglers.json")) as f:
        want = json.load(f)
    got = analyzer("trace_filter").get_potential_stragglers()
    # HTA's metric differs (see the docstring); with 2 ranks and 2
    # candidates both name every rank.
    assert sorted(got) == sorted(want), (got, want)
    assert analyzer("trace_filter").get_potential_stragglers(num_candidates=1) == [got[0]]
    assert analyzer("trace_filter").get_profiler_steps() == [551]


# -- the calls run_hta_extra.py makes: expected/<folder>/extra ---------------

EXTRA_FOLDERS = sorted(f for f in os.listdir(os.path.join(TRACES, "expected"))
                       if os.path.isdir(os.path.join(TRACES, "expected", f, "extra"))) \
    if os.path.isdir(os.path.join(TRACES, "expected")) else []


def extra_analyzer(folder):
    # Folders beyond FOLDERS have integer times; rounding changes nothing.
    return analyzer(folder)


def check_annotations(folder, calls):
    a = extra_analyzer(folder)
    for use_gpu, name, call in ((True, "gpu_user_annotation_breakdown.csv",
                                 "get_gpu_user_annotation_breakdown"),
                                (False, "cpu_user_annotation_breakdown.csv",
                                 "get_gpu_user_annotation_breakdown(use_gpu_annotation=False)")):
        got = a.get_gpu_user_annotation_breakdown(use_gpu_annotation=use_gpu, visualize=False,
                                                  num_kernels=10**9, duration_ratio=1.0)
        if not calls[call].startswith("ok"):
            # HTA returned None (no annotation of that kind): so does this.
            assert got is None or got.empty, f"{folder} {call}: HTA said {calls[call]}, got {got}"
            continue
        want = expect_csv(folder, name, extra=True)
        if use_gpu:
            # HTA's GPU annotations have the steps' GPU ranges; hta-mpi does not.
            want = want[~want.name.str.startswith("ProfilerStep#")].reset_index(drop=True)
        if got is None:
            assert want.empty, f"{folder} {call}: None"
            continue
        assert_frame(got, want, f"{folder} {call}", exact_cols=["name", "rank"],
                     time_cols=KERNEL_TIMES, rel_cols=["stddev"])


def check_kernels_with_annotations(folder, calls):
    got = extra_analyzer(folder).get_gpu_kernels_with_user_annotations(rank=0)
    if not calls["get_gpu_kernels_with_user_annotations"].startswith("ok"):
        assert got is None, f"{folder}: HTA found no GPU annotation, got {got}"
        return
    want = expect_csv(folder, "gpu_kernels_with_user_annotations_rank0.csv", extra=True)
    # HTA's ts count from the first event it kept; these are the trace's.
    offset = got.ts.iloc[0] - want.ts.iloc[0]
    got = got.assign(ts=got.ts - offset)
    # HTA's GPU ProfilerStep ranges are not annotations here.
    steps = want.s_user_annotation.astype(str).str.startswith("ProfilerStep#")
    want.loc[steps, "s_user_annotation"] = np.nan
    assert_frame(got, want, f"{folder} kernels with annotations",
                 exact_cols=["stream", "correlation", "s_name"], time_cols=["ts", "dur"])
    assert list(got.s_user_annotation.fillna("")) == list(want.s_user_annotation.fillna("")), folder


# Where no two aten:: ops enclosing a launch start at the same microsecond
# (HTA then picks one arbitrarily, on any thread): HTA's rows exactly.
OP_EXACT = ["alexnet", "critical_path_simple_add", "critical_path_event_sync",
            "critical_path_event_sync_multi_stream", "nccl_data", "ns_resolution"]
ATEN_DELAYS = ["avg_aten_op_launch_delay", "avg_runtime_delay"]


def check_aten_ops(folder, calls):
    got = extra_analyzer(folder).get_aten_op_kernels_and_delay()
    status = calls["get_aten_op_kernels_and_delay"]
    assert list(got) == [0], got
    df = got[0]
    assert list(df.columns) == ["aten_op_name", "kernel_sequence", "occurrence_count"] + \
        ATEN_DELAYS, list(df.columns)
    if not status.startswith("ok"):
        print(f"     {folder}: HTA raised {status[7:]}; hta-mpi: {len(df)} (op, kernels) rows")
        return
    want = expect_csv(folder, "aten_op_kernels_and_delay_rank0.csv", extra=True)
    assert df.occurrence_count.sum() == want.occurrence_count.sum(), folder
    if folder in OP_EXACT:
        # HTA rounds its means to 3 decimals.
        assert_frame(df.reset_index(drop=True), want, f"{folder} aten ops",
                     exact_cols=["aten_op_name", "kernel_sequence", "occurrence_count"],
                     rounded_cols=ATEN_DELAYS)
        return
    key = ["aten_op_name", "kernel_sequence", "occurrence_count"]
    same = df.merge(want, on=key)
    assert len(same) >= 0.85 * len(want), (folder, len(same), len(want))
    for col in ATEN_DELAYS:
        worst = (same[col + "_x"] - same[col + "_y"]).abs().max()
        assert worst <= 0.0011, (folder, col, worst)


def check_sequences(folder, calls):
    for call, status in calls.items():
        if not call.startswith("get_frequent_cuda_kernel_sequences("):
            continue
        op = call[len("get_frequent_cuda_kernel_sequences("):-1]
        got = extra_analyzer(folder).get_frequent_cuda_kernel_sequences(op, tmpdir())
        assert list(got.columns) == ["pattern", "count", "GPU kernel duration (us)",
                                     "CPU op duration (us)"]
        if not status.startswith("ok"):
            print(f"     {folder} {op}: HTA raised {status[7:60]}...; hta-mpi: {len(got)} patterns")
            continue
        path = expected_path(folder, f"frequent_cuda_kernel_sequences_{op}.csv", extra=True)
        if os.path.getsize(path) <= 1:
            assert got.empty, (folder, op, got)
            continue
        assert_frame(got, pd.read_csv(path), f"{folder} {op} sequences",
                     exact_cols=["pattern", "count"],
                     time_cols=["GPU kernel duration (us)", "CPU op duration (us)"])


def check_cupti(folder, calls):
    got = extra_analyzer(folder).get_cupti_counter_data_with_operators()
    assert len(got) == 1
    path = expected_path(folder, "cupti_counter_data_rank0.csv", extra=True)
    if not os.path.exists(path) or os.path.getsize(path) <= 1:
        assert got[0].empty, (folder, got[0])
        return
    want = pd.read_csv(path)
    df = got[0]
    assert len(df) == len(want) and list(df.name) == list(want.name), folder
    for col in ("op_stack", "top_level_op", "bottom_level_op"):
        assert list(df[col]) == list(want[col]), (folder, col)
    counters = [c for c in want.columns if c.startswith("smsp__")]
    assert counters and set(counters) <= set(df.columns), (counters, list(df.columns))
    for c in counters:
        assert np.array_equal(df[c].values, want[c].values.astype(float)), (folder, c)


def check_critical_path(folder, calls):
    a = extra_analyzer(folder)
    status = calls["critical_path_analysis(ProfilerStep, each step)"]
    steps = a.get_profiler_steps()
    result = a.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=0)
    assert result is not None, folder
    cp, ok = result
    summary = cp.summary()
    assert abs(summary.sum() - 100.0) < 1e-6, (folder, summary)
    if not status.startswith("ok"):
        print(f"     {folder}: HTA {status}; hta-mpi: path bound by {summary.idxmax()}")
        return
    want = expect_csv(folder, "critical_path_summary.csv", extra=True)
    want = want[want["rank"] == 0]
    first = want.step.iloc[0]
    want = want[want.step == first] if not pd.isna(first) else want
    w = want.set_index(want.bound_by.fillna("")).value
    assert ok == bool(want.graph_ok.iloc[0]), folder
    assert (steps[0] if steps else None) == (None if pd.isna(first) else first), (steps, first)
    # hta-mpi's path matches HTA's to within a percentage point per category.
    assert summary.idxmax() == w.idxmax(), (folder, summary, w)
    for cat in set(w.index) | set(summary.index):
        assert abs(summary.get(cat, 0.0) - w.get(cat, 0.0)) < 1.0, (folder, cat, summary, w)
    events = cp.get_critical_path_breakdown()
    assert 1 <= len(events) <= 10 and (events.duration > 0).all(), events


def make_extra_test(folder):
    def test():
        if not os.path.isdir(trace_dir(folder)):
            return
        calls = hta_calls(folder)
        for check in (check_annotations, check_kernels_with_annotations, check_aten_ops,
                      check_sequences, check_cupti, check_critical_path):
            check(folder, calls)
    test.__name__ = f"test_extra_calls_{folder}"
    return test


def test_single_trace_in_process_equals_the_run():
    """A single trace is analysed through libhta, several under mpirun;
    libhta's kept tables give the frames hta-mpi's own file gives."""
    import h5py
    inside = analyzer("nccl_data")
    with h5py.File(inside.results_file(), "r") as f:
        assert f.attrs.get("written_by") == "libhta", dict(f.attrs)
    with h5py.File(analyzer("trace_filter").results_file(), "r") as f:
        assert f.attrs["n_processes"] == 2, dict(f.attrs)
    # Less input than mpirun's start-up is worth: one process, same results.
    alone = TraceAnalysis(trace_dir=trace_dir("trace_filter"), cache_dir=tmpdir())
    with h5py.File(alone.results_file(), "r") as f:
        assert f.attrs["n_processes"] == 1, dict(f.attrs)
    pd.testing.assert_frame_equal(alone.get_idle_time_breakdown(ranks=[0, 1], visualize=False)[0],
                                  analyzer("trace_filter").get_idle_time_breakdown(
                                      ranks=[0, 1], visualize=False)[0])
    run = TraceAnalysis(trace_dir=trace_dir("nccl_data"), cache_dir=CACHE, round_like_hta=True,
                        in_process=False)
    with h5py.File(run.results_file(), "r") as f:
        assert "written_by" not in f.attrs
    for call, kw in (("get_temporal_breakdown", {}), ("get_gpu_kernel_breakdown", {}),
                     ("get_idle_time_breakdown", {"show_idle_interval_stats": True}),
                     ("get_gpu_user_annotation_breakdown", {}),
                     ("get_queue_length_summary", {})):
        a = getattr(inside, call)(visualize=False, **kw) if "queue" not in call else \
            getattr(inside, call)(**kw)
        b = getattr(run, call)(visualize=False, **kw) if "queue" not in call else \
            getattr(run, call)(**kw)
        for x, y in zip(a if isinstance(a, tuple) else [a], b if isinstance(b, tuple) else [b]):
            pd.testing.assert_frame_equal(x, y, check_dtype=False, obj=call)
    cp, _ = inside.critical_path_analysis(rank=0)
    cp2, _ = run.critical_path_analysis(rank=0)
    pd.testing.assert_frame_equal(cp.get_critical_path_breakdown(),
                                  cp2.get_critical_path_breakdown())


def test_hta_crashes_get_answers():
    """cupti_profiler: HTA 0.6.1 raises IndexError loading it (no
    expected/cupti_profiler/*.csv exists); every method answers here."""
    a = analyzer("cupti_profiler")
    tb = a.get_temporal_breakdown(visualize=False)
    assert list(tb.columns)[:2] == ["rank", "idle_time(us)"]
    types, kernels = a.get_gpu_kernel_breakdown(visualize=False)
    assert list(kernels.columns) == ["name", "sum (us)", "max (us)", "min (us)", "stddev",
                                     "mean (us)", "kernel_type", "rank"]
    idle, stats = a.get_idle_time_breakdown(visualize=False, show_idle_interval_stats=True)
    assert list(idle.columns) == ["rank", "stream", "idle_category", "idle_time",
                                  "idle_time_ratio"]
    assert isinstance(a.get_cuda_kernel_launch_stats(visualize=False), dict)


# -- the kept runs -------------------------------------------------------------

def small_copy():
    """A trace directory of one real trace (negative_queue's rank 0)."""
    d = tmpdir()
    src = trace_dir("nccl_data")
    for f in os.listdir(src):
        shutil.copy2(os.path.join(src, f), d)
    return d


def kept_files(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".h5"))


def test_cache_reused_invalidated_and_keyed_on_options():
    d = small_copy()
    a = TraceAnalysis(trace_dir=d)
    first = a.get_temporal_breakdown(visualize=False)
    kept = os.path.join(d, runs.CACHE_FOLDER)
    assert len(kept_files(kept)) == 1, kept_files(kept)
    path = a.results_file()
    mtime = os.stat(path).st_mtime_ns
    a.get_comm_comp_overlap(visualize=False)
    TraceAnalysis(trace_dir=d).get_temporal_breakdown(visualize=False)
    assert os.stat(path).st_mtime_ns == mtime and len(kept_files(kept)) == 1, "not reused"

    # Other options: a run of their own, with their own answers.
    rounded = a.get_temporal_breakdown(visualize=False, round_like_hta=True)
    assert len(kept_files(kept)) == 2
    assert first["compute_time(us)"][0] != rounded["compute_time(us)"][0], (first, rounded)
    idle30, _ = a.get_idle_time_breakdown(visualize=False)
    idle5, _ = a.get_idle_time_breakdown(visualize=False, consecutive_kernel_delay=5)
    assert len(kept_files(kept)) == 3
    kw30 = idle30[idle30.idle_category == "kernel_wait"].idle_time.sum()
    kw5 = idle5[idle5.idle_category == "kernel_wait"].idle_time.sum()
    assert kw5 < kw30, (kw5, kw30)
    # A --detail run serves the tables of a run without it too.
    a.get_cuda_kernel_launch_stats(visualize=False)
    n = len(kept_files(kept))
    shutil.rmtree(kept)
    a.get_cuda_kernel_launch_stats(visualize=False)
    assert len(kept_files(kept)) == 1
    a.get_temporal_breakdown(visualize=False)
    assert len(kept_files(kept)) == 1 and n == 4, "the --detail run was not reused"

    # A changed trace: a new run, the stale file never read.
    trace = [os.path.join(d, f) for f in os.listdir(d) if f.endswith(".gz")][0]
    st = os.stat(trace)
    os.utime(trace, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    again = a.get_temporal_breakdown(visualize=False)
    assert len(kept_files(kept)) == 2, kept_files(kept)
    assert again.equals(first)


def test_read_only_directory_uses_cache_home():
    d = small_copy()
    home = tmpdir()
    os.chmod(d, 0o555)
    try:
        env = dict(os.environ, XDG_CACHE_HOME=home)
        code = ("from hta_mpi import TraceAnalysis; import sys; "
                "print(TraceAnalysis(trace_dir=sys.argv[1]).results_file())")
        p = subprocess.run([sys.executable, "-c", code, d], capture_output=True, text=True,
                           env=dict(env, PYTHONPATH=os.path.join(HERE, os.pardir, "python")))
        # Read-only by its mode, for root too.
        assert p.returncode == 0 and p.stdout.startswith(home), p
        assert p.stdout.strip().endswith(".h5") and not os.path.exists(
            os.path.join(d, runs.CACHE_FOLDER)), p
    finally:
        os.chmod(d, 0o755)


def test_progress_lines_outside_a_notebook():
    """Without IPython's display the run's progress is plain lines on
    stderr, from hta-mpi's own reports (2 traces) or libhta (1 trace)."""
    code = ("from hta_mpi import TraceAnalysis; import sys; "
            "TraceAnalysis(trace_dir=sys.argv[1], cache_dir=sys.argv[2]).get_steps()")
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, os.pardir, "python"))
    for folder, n in (("trace_filter", 2), ("nccl_data", 1)):
        p = subprocess.run([sys.executable, "-c", code, trace_dir(folder), tmpdir()],
                           capture_output=True, text=True, env=env)
        assert p.returncode == 0, p.stderr
        assert f"hta-mpi: analysed {n}/{n} traces" in p.stderr, (folder, p.stderr)


def test_interrupted_call_ends_its_run():
    """A notebook's stop button (SIGINT) during the run: hta-mpi is ended,
    nothing is kept.  The second trace is a FIFO nobody writes, so the run
    waits there after reporting the first, for as long as it takes."""
    d, kept = tmpdir(), tmpdir()
    shutil.copy(os.path.join(trace_dir("negative_queue"), "rank0.json.gz"),
                os.path.join(d, "a.json.gz"))
    os.mkfifo(os.path.join(d, "b.json"))
    code = ("from hta_mpi import TraceAnalysis; import sys; "
            "TraceAnalysis(trace_dir=sys.argv[1], cache_dir=sys.argv[2]).get_steps()")
    child = subprocess.Popen([sys.executable, "-c", code, d, kept], stderr=subprocess.PIPE,
                             text=True, env=dict(os.environ, PYTHONPATH=os.path.join(
                                 HERE, os.pardir, "python")))
    for line in child.stderr:
        if "analysed 1/2 traces" in line:
            break
    child.send_signal(signal.SIGINT)
    rest = child.stderr.read()
    assert child.wait() != 0 and "KeyboardInterrupt" in rest, rest
    assert os.listdir(kept) == [], os.listdir(kept)
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if d.encode() in f.read():
                    left.append(pid)
        except OSError:
            pass
    assert not left, f"hta-mpi still running: {left}"


def test_trace_diff():
    diff = TraceDiff(analyzer("trace_filter"), analyzer("negative_queue"))
    kernels = diff.get_kernels_diff()
    assert len(kernels) > 0 and "rank" in kernels.columns, kernels
    assert len(diff.get_kernel_set_diff()) > 0
    # HTA's class methods: rank 0 against rank 1 of trace_filter, GPU side,
    # against the kernels' own counts and sums.
    a = analyzer("trace_filter")
    comp = TraceDiff.compare_traces(a, a, control_rank=0, test_rank=1, device_type="GPU")
    assert list(comp.columns) == ["Control_counts", "Control_total_duration", "Test_counts",
                                  "Test_total_duration", "diff_counts", "diff_duration",
                                  "counts_change_categories"], list(comp.columns)
    _, k = a.get_gpu_kernel_breakdown(visualize=False, num_kernels=10**9, duration_ratio=1.0)
    nccl = k[k.kernel_type == "COMMUNICATION"].set_index("rank")
    name = nccl.name.iloc[0]
    assert_close(comp.loc[name, "Control_total_duration"], nccl.loc[0, "sum (us)"], name, 1e-6)
    assert_close(comp.loc[name, "diff_duration"],
                 nccl.loc[1, "sum (us)"] - nccl.loc[0, "sum (us)"], name, 1e-6)
    ops = TraceDiff.ops_diff(a, a, control_rank=0, test_rank=1)
    assert sorted(ops) == ["added", "decreased", "deleted", "increased", "unchanged"]
    same = TraceDiff.ops_diff(a, a)
    assert not same["added"] and not same["deleted"] and len(same["unchanged"]) > 100


def test_trace_files_as_hta_takes_them():
    d = trace_dir("trace_filter")
    files = {r: os.path.join(d, f"sampled_rank-{r}.json.gz") for r in (0, 1)}
    a = TraceAnalysis(trace_files=files, cache_dir=CACHE)
    want = analyzer("trace_filter").get_temporal_breakdown(visualize=False)
    pd.testing.assert_frame_equal(a.get_temporal_breakdown(visualize=False), want)
    one = TraceAnalysis(trace_files=[files[1]], cache_dir=CACHE)
    assert list(one.get_temporal_breakdown(visualize=False)["rank"]) == [1]


def test_extras():
    a = analyzer("trace_filter")
    steps = a.get_steps()
    assert list(steps["rank"]) == [0, 1] and (steps.step == 551).all()
    assert set(a.get_stragglers()["rank"]) == {0, 1}
    assert len(a.get_rank_metrics()) > 0
    assert isinstance(a.get_outliers(), pd.DataFrame)
    assert isinstance(a.get_collectives(), pd.DataFrame)
    assert isinstance(a.get_collective_summary(), pd.DataFrame)
    assert isinstance(a.get_gpu_gaps(), pd.DataFrame)
    t = a.get_timeline()
    assert set(t["rank"]) == {0, 1} and set(t.category) == {"compute", "communicate", "overlap",
                                                            "empty"}
    page = a.report(os.path.join(tmpdir(), "r.html"))
    assert os.path.getsize(page) > 1000


def test_visualize_draws_with_matplotlib():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    a = analyzer("trace_filter")
    a.get_temporal_breakdown()
    a.get_gpu_kernel_breakdown()
    a.get_idle_time_breakdown()
    a.get_cuda_kernel_launch_stats()
    assert len(plt.get_fignums()) >= 4, plt.get_fignums()
    plt.close("all")


def test_generate_trace_with_counters():
    d = small_copy()
    written = TraceAnalysis(trace_dir=d).generate_trace_with_counters()
    assert len(written) == 1 and written[0].endswith("_with_counters.json.gz"), written
    import gzip
    with gzip.open(written[0], "rt") as f:
        trace = json.load(f)
    counters = {e["name"] for e in trace["traceEvents"] if e.get("ph") == "C"}
    assert any(n.startswith("queue length") for n in counters), counters
    out = tmpdir()
    a = TraceAnalysis(trace_dir=trace_dir("trace_filter"), cache_dir=CACHE)
    overlaid = a.overlay_critical_path_analysis(1, output_dir=out)
    assert overlaid == os.path.join(out, "overlaid_critical_path_sampled_rank-1.json.gz"), overlaid
    assert os.listdir(out) == [os.path.basename(overlaid)]
    with gzip.open(overlaid, "rt") as f:
        marked = [e for e in json.load(f)["traceEvents"] if e.get("args", {}).get("critical")]
    assert len(marked) > 10, len(marked)


def test_example_runs():
    example = os.path.join(HERE, os.pardir, "examples", "coming_from_hta.py")
    p = subprocess.run([sys.executable, example, trace_dir("trace_filter"), CACHE],
                       capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.path.join(HERE, os.pardir, "python")))
    assert p.returncode == 0, p.stderr
    assert "idle_time(us)" in p.stdout and "ncclKernel_SendRecv" in p.stdout, p.stdout


if __name__ == "__main__":
    main([make_first_round_test(f) for f in FOLDERS] + [test_potential_stragglers] +
         [make_extra_test(f) for f in EXTRA_FOLDERS] +
         [test_single_trace_in_process_equals_the_run, test_hta_crashes_get_answers,
          test_cache_reused_invalidated_and_keyed_on_options,
          test_read_only_directory_uses_cache_home, test_progress_lines_outside_a_notebook,
          test_interrupted_call_ends_its_run,
          test_trace_diff, test_trace_files_as_hta_takes_them, test_extras,
          test_visualize_draws_with_matplotlib, test_generate_trace_with_counters,
          test_example_runs], setup=setup)
