"""Kernel launch statistics against HTA 0.6.1's per-correlation values
(cuda_kernel_launch_stats.csv) on every real trace folder that has them,
the launches HTA does not count (Triton's cuLaunchKernel, ROCm's
hipLaunchKernel) against the trace itself, and the launch pipelining
(which HTA lacks) on a hand-built trace whose answer is known by
construction."""
import gzip
import json
import os
from decimal import Decimal

import pandas as pd

from common import (analyse, assert_close, expected, hta_args, main, table, tmpdir, trace_dir)

QUANTITIES = ["cpu_duration", "gpu_duration", "launch_delay"]
PERCENTILES = [("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("max", 1.0)]
HTA_FOLDERS = ["trace_filter", "negative_queue", "ns_resolution", "nccl_data"]


def expected_row(per_launch, runtime_cutoff=50, launch_delay_cutoff=100):
    """The launch_stats row implied by HTA's per-launch values."""
    row = {"launches": len(per_launch)}
    for q in QUANTITIES:
        for name, p in PERCENTILES:
            row[f"{q}_{name}_us"] = per_launch[q].quantile(p)
    cpu, gpu, delay = (per_launch[q] for q in QUANTITIES)
    row["short_kernels"] = int(((cpu <= runtime_cutoff) & (gpu < cpu)).sum())
    row["runtime_outliers"] = int((cpu > runtime_cutoff).sum())
    row["launch_delay_outliers"] = int((delay > launch_delay_cutoff).sum())
    return row


def assert_row(got, want, what):
    for col, value in want.items():
        if isinstance(value, int):
            assert got[col] == value, f"{what} {col}: got {got[col]}, expected {value}"
        else:
            assert_close(got[col], value, f"{what} {col}", 1e-9, 1e-12)


def check_folder(folder, extra=(), **cutoffs):
    out, _ = analyse(trace_dir(folder), extra=hta_args(folder) + list(extra))
    got = table(out, "/launch_stats").set_index("rank")
    hta = expected(folder, "cuda_kernel_launch_stats.csv")
    assert sorted(got.index) == sorted(hta["rank"].unique()), f"{folder}: ranks {list(got.index)}"
    metrics = table(out, "/rank_metrics").set_index(["rank", "metric"])["value"]
    for rank, per_launch in hta.groupby("rank"):
        assert_row(got.loc[rank], expected_row(per_launch, **cutoffs), f"{folder} rank {rank}")
        for p in ["p50", "p99"]:
            assert_close(metrics[(rank, f"launch_delay_{p}_us")], got.loc[rank, f"launch_delay_{p}_us"],
                         f"{folder} metric {p}", 0)


def make_test(folder):
    def test():
        check_folder(folder)
    test.__name__ = f"test_launch_stats_{folder}"
    return test


def test_cutoff_options():
    check_folder("negative_queue", ["--runtime-cutoff", "10", "--launch-delay-cutoff", "170000"],
                 runtime_cutoff=10, launch_delay_cutoff=170000)


def trace_launches(folder, api):
    """Per-launch values of one launch API, read from the trace itself (us,
    exact decimals: at 1e15 us a float64 resolves only 0.25 us)."""
    path = [os.path.join(trace_dir(folder), f) for f in os.listdir(trace_dir(folder))][0]
    with gzip.open(path, "rt") as f:
        trace = json.load(f, parse_float=Decimal, parse_int=Decimal)
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    cpu = {e["args"]["correlation"]: e for e in events if e["name"] == api}
    rows = []
    for g in events:
        c = cpu.get(g.get("args", {}).get("correlation"))
        # A GPU event has a numeric stream (ROCm's launch calls carry "0x0").
        if isinstance(g.get("args", {}).get("stream"), Decimal) and c is not None:
            rows.append((c["dur"], g["dur"], max(Decimal(0), g["ts"] - (c["ts"] + c["dur"]))))
    return pd.DataFrame(rows, columns=QUANTITIES, dtype=float)


def test_launch_apis_beyond_hta():
    # HTA counts neither; kept at nanosecond resolution (no HTA rounding).
    for folder, api, n in [("triton", "cuLaunchKernel", 1), ("amd_mi250", "hipLaunchKernel", 12)]:
        assert len(expected(folder, "cuda_kernel_launch_stats.csv")) == 0
        per_launch = trace_launches(folder, api)
        assert len(per_launch) == n, f"{folder}: {len(per_launch)} launches in the trace"
        out, _ = analyse(trace_dir(folder))
        got = table(out, "/launch_stats").iloc[0]
        want = expected_row(per_launch)
        for col, value in want.items():
            assert_close(got[col], value, f"{folder} {col}", 1e-6)


def runtime(ts, correlation, name="cudaLaunchKernel", dur=2):
    return {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1, "tid": 1, "ts": ts,
            "dur": dur, "args": {"correlation": correlation}}


def kernel(name, ts, dur, correlation, stream=7):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts,
            "dur": dur, "args": {"stream": stream, "correlation": correlation}}


def test_hand_built_pipelining():
    # Stream 7 (launch call start -> kernel interval):
    #   L1 0   -> a [10, 110)       first on the stream: not judged
    #   L2 20  -> b [112, 122)      a still runs at 20: busy
    #   L3 200 -> w [210, 220)      b ended at 122: idle, "w" waited
    #   L4 300 -> w [310, 320)      idle, "w" waited
    #   L5 305 -> c [320, 325)      the previous w runs until 320: busy
    #   L6 325 -> c2 [330, 331)     c ended exactly at 325: busy (HTA's host_wait is strict)
    #   L7 400 -> z [410, 411)      idle, "z" waited
    #   cudaMemcpy (not a launch API) -> Memcpy [500, 510): not counted
    # Stream 8: L8 401 -> y [405, 406): first on its stream.
    events = [runtime(0, 1), kernel("a", 10, 100, 1), runtime(20, 2), kernel("b", 112, 10, 2),
              runtime(200, 3), kernel("w", 210, 10, 3), runtime(300, 4), kernel("w", 310, 10, 4),
              runtime(305, 5), kernel("c", 320, 5, 5), runtime(325, 6), kernel("c2", 330, 1, 6),
              runtime(400, 7), kernel("z", 410, 1, 7), runtime(401, 8), kernel("y", 405, 1, 8, stream=8),
              runtime(450, 9, name="cudaMemcpy"), kernel("Memcpy HtoD", 500, 10, 9)]
    d = tmpdir()
    with open(os.path.join(d, "rank0.json"), "w") as f:
        json.dump({"distributedInfo": {"rank": 0}, "traceEvents": events}, f)
    out, _ = analyse(d)
    got = table(out, "/launch_pipelining").iloc[0]
    assert got["launches"] == 8, got["launches"]
    assert got["gpu_busy_at_launch"] == 3 and got["gpu_idle_at_launch"] == 3, dict(got)
    assert_close(got["busy_share"], 0.5, "busy share", 1e-12)
    assert got["top_waited_kernels"] == "w (2); z (1)", got["top_waited_kernels"]
    assert table(out, "/launch_stats").iloc[0]["launches"] == 8


def test_pipelining_matches_host_wait():
    # Idle at launch is HTA's host_wait test: on traces whose GPU work is
    # all launched by the launch APIs the counts agree exactly.
    for folder in ["trace_filter", "negative_queue", "ns_resolution", "nccl_data"]:
        out, _ = analyse(trace_dir(folder), extra=hta_args(folder))
        pipe = table(out, "/launch_pipelining").set_index("rank")
        idle = table(out, "/idle_time")
        stats = table(out, "/launch_stats").set_index("rank")
        for rank, row in pipe.iterrows():
            host_wait = idle[(idle["rank"] == rank) & (idle["idle_category"] == "host_wait")]["count"].sum()
            assert row["gpu_idle_at_launch"] == host_wait, f"{folder} rank {rank}: {dict(row)}"
            assert row["launches"] == stats.loc[rank, "launches"]
            assert row["gpu_busy_at_launch"] + row["gpu_idle_at_launch"] <= row["launches"]


if __name__ == "__main__":
    main([make_test(f) for f in HTA_FOLDERS] +
         [test_cutoff_options, test_launch_apis_beyond_hta, test_hand_built_pipelining,
          test_pipelining_matches_host_wait])
