"""Per-event tables under /detail/ (--detail): every launch HTA's
get_cuda_kernel_launch_stats reports, with the same durations and delay;
queue-length and memory-bandwidth change points that summarise exactly to
HTA's own summaries; chunked + compressed storage, and nothing without
--detail.  A hand-built trace pins the rules (tie order, 0-duration
copies, clipped launch delay)."""
import json
import os

import h5py
import pandas as pd

from common import (
    TRACES, analyse, assert_close, expected, hta_args, main, table, tmpdir, trace_dir)

# HTA's per-correlation launch rows; ns_resolution and nccl_data are
# fractional and match exactly under --round-like-hta.
LAUNCH_FOLDERS = ["negative_queue", "trace_filter", "ns_resolution", "nccl_data"]
QUEUE_FOLDERS = ["negative_queue", "trace_filter", "ns_resolution", "nccl_data", "amd_mi250", "triton"]
BANDWIDTH_FOLDERS = ["negative_queue", "trace_filter", "ns_resolution", "nccl_data", "amd_mi250"]
STATS = ["count", "mean", "std", "min", "p25", "p50", "p75", "max"]

_results = {}


def detail_run(folder):
    """One --detail run per folder, shared by the tests."""
    if folder not in _results:
        _results[folder], _ = analyse(trace_dir(folder), extra=["--detail"] + hta_args(folder))
    return _results[folder]


def hta_summary(folder, name, key):
    """HTA's describe() CSVs: three header lines, then rank, key, 8 stats."""
    path = os.path.join(TRACES, "expected", folder, name)
    return pd.read_csv(path, skiprows=3, names=["rank", key] + STATS).set_index(["rank", key])


def describe(values):
    d = values.describe()
    return [d["count"], d["mean"], d["std"], d["min"], d["25%"], d["50%"], d["75%"], d["max"]]


def check_launches(folder):
    got = table(detail_run(folder), "/detail/launches")
    want = expected(folder, "cuda_kernel_launch_stats.csv")
    m = want.merge(got, on=["rank", "correlation"], how="left", indicator=True)
    missing = m[m._merge != "both"]
    assert missing.empty, f"{folder}: {len(missing)} HTA launches missing, e.g. {missing.head(3)}"
    assert len(got) == len(want), f"{folder}: {len(got)} rows, HTA {len(want)}"
    for hta_col, col in (("cpu_duration", "cpu_duration_us"), ("gpu_duration", "gpu_duration_us"),
                         ("launch_delay", "launch_delay_us")):
        worst = (m[hta_col] - m[col]).abs().max()
        assert worst == 0, f"{folder} {col}: differs from HTA by up to {worst} us"
    cpu_end = got.cpu_start_us + got.cpu_duration_us
    delay = (got.gpu_start_us - cpu_end).clip(lower=0)
    assert ((delay - got.launch_delay_us).abs() <= 0.5).all(), f"{folder}: delay != max(0, gpu - cpu end)"


def check_queue_length(folder):
    """The change points summarise to HTA's own summary, to the last bit:
    simultaneous steps come in HTA's (unstable sort) order."""
    q = table(detail_run(folder), "/detail/queue_length")
    want = hta_summary(folder, "queue_length_summary.csv", "stream")
    groups = dict(list(q.groupby(["rank", "stream"])))
    assert sorted(groups) == sorted(want.index), f"{folder}: streams {sorted(groups)}"
    for key, g in groups.items():
        for s, v in zip(STATS, describe(g.queue_length)):
            assert_close(v, want.loc[key, s], f"{folder} {key} queue {s}", rel_tol=1e-12)


def check_memory_bw(folder):
    """As HTA's summary: the points with a positive bandwidth."""
    bw = table(detail_run(folder), "/detail/memory_bw")
    want = hta_summary(folder, "memory_bw_summary.csv", "kind")
    groups = dict(list(bw[bw.bandwidth_gbps > 0].groupby(["rank", "kind"])))
    assert sorted(groups) == sorted(want.index), f"{folder}: kinds {sorted(groups)}"
    for key, g in groups.items():
        for s, v in zip(STATS, describe(g.bandwidth_gbps)):
            assert_close(v, want.loc[key, s], f"{folder} {key} bandwidth {s}", rel_tol=1e-9)


def make_tests(check, folders):
    def make(folder):
        def test():
            check(folder)
        test.__name__ = f"{check.__name__.replace('check', 'test')}_{folder}"
        return test
    return [make(f) for f in folders]


def test_detail_agrees_with_summaries():
    # The per-rank tables describe exactly these rows.
    out = detail_run("trace_filter")
    launches = table(out, "/detail/launches").groupby("rank")
    for _, r in table(out, "/launch_stats").iterrows():
        mine = launches.get_group(r["rank"])
        assert len(mine) == r.launches, f"rank {r['rank']}: {len(mine)} launches, summary {r.launches}"
        for col in ("cpu_duration", "gpu_duration", "launch_delay"):
            assert_close(mine[f"{col}_us"].quantile(0.99), r[f"{col}_p99_us"], f"{col} p99", rel_tol=1e-12)
    for name, key, value, suffix in (("queue_length", "stream", "queue_length", ""),
                                     ("memory_bw", "kind", "bandwidth_gbps", "_gbps")):
        detail = table(out, f"/detail/{name}")
        if name == "memory_bw":
            detail = detail[detail.bandwidth_gbps > 0]
        groups = detail.groupby(["rank", key])[value]
        summary = table(out, f"/{name}").set_index(["rank", key])
        assert len(summary) == groups.ngroups, f"/{name}: {len(summary)} rows, detail {groups.ngroups}"
        for k, g in groups:
            assert g.count() == summary.loc[k, "count"], f"/{name} {k} count"
            assert_close(g.mean(), summary.loc[k, "mean" + suffix], f"/{name} {k} mean", rel_tol=1e-12)
            assert_close(g.max(), summary.loc[k, "max" + suffix], f"/{name} {k} max", rel_tol=1e-12)


def test_storage_chunked_and_compressed():
    with h5py.File(detail_run("negative_queue"), "r") as f:
        for name in ("detail/launches", "detail/queue_length", "detail/memory_bw"):
            ds = f[name]
            assert ds.chunks is not None and ds.chunks[0] <= 65536, f"{name}: chunks {ds.chunks}"
            assert ds.compression == "gzip" and 1 <= ds.compression_opts <= 4, \
                f"{name}: {ds.compression} {ds.compression_opts}"
        assert f["temporal_breakdown"].chunks is None, "summary tables stay contiguous"


def test_absent_without_detail():
    out, _ = analyse(trace_dir("negative_queue"))
    with h5py.File(out, "r") as f:
        assert "detail" not in f, list(f.keys())


# --- hand-built trace: answers known by construction ---------------------

def x(cat, name, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 1, "ts": ts, "dur": dur, "args": args}


def copy(name, ts, dur, bw, corr):
    return x("gpu_memcpy", name, ts, dur, stream=9, correlation=corr, bytes=100,
             **{"memory bandwidth (GB/s)": bw})


def built_trace():
    """Stream 7: launches at 0 (10 us) and 1 (2 us), kernels at 5 and 7.
    Stream 9 copies: HtoD bw 10 on [10, 20), bw 5 on [15, 25), bw 7 on
    [25, 26) (starts as the previous ends: HTA lists every start before
    every end, and its sort keeps that order in a series this short, so the
    two bandwidths add up for an instant); a 0-duration Memset bw 3 at 30
    (counts as [30, 31)); a DtoH without a bandwidth (no rows)."""
    ev = [x("cuda_runtime", "cudaLaunchKernel", 0, 10, correlation=1),
          x("cuda_runtime", "cudaLaunchKernel", 1, 2, correlation=2),
          x("kernel", "gemm", 5, 2, stream=7, correlation=1),
          x("kernel", "gemm", 7, 3, stream=7, correlation=2),
          x("cuda_runtime", "cudaEventQuery", 2, 1, correlation=3),
          copy("Memcpy HtoD (Pinned -> Device)", 10, 10, 10.0, 10),
          copy("Memcpy HtoD (Pinned -> Device)", 15, 10, 5.0, 11),
          copy("Memcpy HtoD (Pinned -> Device)", 25, 1, 7.0, 12),
          copy("Memset (Device)", 30, 0, 3.0, 13),
          x("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 40, 5, stream=9, correlation=14)]
    d = tmpdir()
    with open(os.path.join(d, "rank-3.json"), "w") as f:
        json.dump({"traceEvents": ev}, f)
    out, _ = analyse(d, extra=["--detail"])
    return out


def rows(df, cols):
    return [tuple(r) for r in df[cols].itertuples(index=False)]


def test_built_trace():
    out = built_trace()
    launches = table(out, "/detail/launches")
    assert rows(launches, ["rank", "correlation", "launch_name", "cpu_start_us", "cpu_duration_us",
                           "gpu_start_us", "gpu_duration_us", "launch_delay_us", "stream"]) == [
        (3, 1, "cudaLaunchKernel", 0.0, 10.0, 5.0, 2.0, 0.0, 7),   # GPU before CPU end: 0
        (3, 2, "cudaLaunchKernel", 1.0, 2.0, 7.0, 3.0, 4.0, 7)], launches
    queue = table(out, "/detail/queue_length")
    assert rows(queue, ["rank", "stream", "ts_us", "queue_length"]) == [
        (3, 7, 0.0, 1), (3, 7, 1.0, 2), (3, 7, 5.0, 1), (3, 7, 7.0, 0)], queue
    bw = table(out, "/detail/memory_bw")
    assert rows(bw, ["rank", "kind", "ts_us", "bandwidth_gbps"]) == [
        (3, "Memcpy HtoD", 10.0, 10.0), (3, "Memcpy HtoD", 15.0, 15.0),
        (3, "Memcpy HtoD", 20.0, 5.0), (3, "Memcpy HtoD", 25.0, 12.0),
        (3, "Memcpy HtoD", 25.0, 7.0), (3, "Memcpy HtoD", 26.0, 0.0),
        (3, "Memset", 30.0, 3.0), (3, "Memset", 31.0, 0.0)], bw


if __name__ == "__main__":
    main(make_tests(check_launches, LAUNCH_FOLDERS) +
         make_tests(check_queue_length, QUEUE_FOLDERS) +
         make_tests(check_memory_bw, BANDWIDTH_FOLDERS) +
         [test_detail_agrees_with_summaries, test_storage_chunked_and_compressed, test_absent_without_detail, test_built_trace])
