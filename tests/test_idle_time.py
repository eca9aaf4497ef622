"""Idle time breakdown against HTA 0.6.1's own numbers on every real trace
folder that has them (idle_time_breakdown.csv and
idle_time_interval_stats.csv), plus a hand-built trace whose categories are
known by construction."""
import json
import os

from common import (
    FRACTIONAL_FOLDERS, INTEGER_FOLDERS, analyse, assert_close, expected, hta_args, main,
    table, tmpdir, tolerances, trace_dir)

STATS = [("count", "count"), ("mean", "mean_us"), ("std", "std_us"), ("min", "min_us"),
         ("25%", "p25_us"), ("50%", "p50_us"), ("75%", "p75_us"), ("max", "max_us")]
KEY = ["rank", "stream", "idle_category"]
# HTA rounds its interval statistics and ratios to 2 decimals.
ROUNDED = 0.0051


def rows_by_key(df):
    return {tuple(r[k] for k in KEY): r for _, r in df.iterrows()}


def check_folder(folder):
    out, _ = analyse(trace_dir(folder), extra=hta_args(folder))
    got = rows_by_key(table(out, "/idle_time"))
    breakdown = rows_by_key(expected(folder, "idle_time_breakdown.csv"))
    stats = rows_by_key(expected(folder, "idle_time_interval_stats.csv"))
    # Same rows as HTA: "other" on every stream, the rest only when they occur.
    assert set(got) == set(breakdown) == set(stats), \
        f"{folder}: rows {sorted(got)} vs HTA {sorted(breakdown)}"
    t_abs, _ = tolerances(folder)
    for key, want in breakdown.items():
        what = f"{folder} {key}"
        assert_close(got[key]["idle_time_us"], want["idle_time"], f"{what} idle_time", t_abs)
        assert_close(got[key]["idle_time_ratio"], want["idle_time_ratio"], f"{what} ratio", ROUNDED)
    for key, want in stats.items():
        for hta_col, col in STATS:
            assert_close(got[key][col], want[hta_col], f"{folder} {key} {col}", ROUNDED)


def make_test(folder):
    def test():
        check_folder(folder)
    test.__name__ = f"test_idle_time_{folder}"
    return test


def test_fractional_default_keeps_nanoseconds():
    # HTA moves each start up and each end down to whole microseconds, which
    # widens every gap by [0, 2) us.  Without --round-like-hta the stream's
    # total idle time is therefore at most HTA's and at least HTA's minus
    # 2 us per gap.
    for folder in FRACTIONAL_FOLDERS:
        out, _ = analyse(trace_dir(folder))
        got = table(out, "/idle_time").groupby(["rank", "stream"])
        want = expected(folder, "idle_time_breakdown.csv").groupby(["rank", "stream"])
        stats = expected(folder, "idle_time_interval_stats.csv").groupby(["rank", "stream"])
        for key, hta_total in want["idle_time"].sum().items():
            total = got["idle_time_us"].sum()[key]
            gaps = stats["count"].sum()[key]
            assert hta_total - 2 * gaps <= total <= hta_total, \
                f"{folder} {key}: {total} outside [{hta_total - 2 * gaps}, {hta_total}]"


def kernel(name, ts, dur, correlation, stream=7):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts,
            "dur": dur, "args": {"stream": stream, "correlation": correlation}}


def launch(ts, correlation, dur=2):
    return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
            "ts": ts, "dur": dur, "args": {"correlation": correlation}}


def test_hand_built_categories():
    # Stream 7, gaps by construction:
    #   k1 [100, 110)  first event: no gap
    #   k2 [115, 125)  launched at 50 (before k1 ended), gap 5 < 30: kernel_wait
    #   k3 [200, 210)  launched at 150 (after k2 ended at 125): host_wait 75
    #   k4 [300, 310)  launched at 160, gap 90 >= 30: other
    #   k5 [305, 320)  launched at 170, overlaps k4: kernel_wait -5 (kept)
    #   k6 [400, 401)  no launch in the trace, gap 80: other
    # A Context Sync on the same stream is not work and must be ignored.
    events = [launch(10, 1), kernel("k1", 100, 10, 1), launch(50, 2), kernel("k2", 115, 10, 2),
              launch(150, 3), kernel("k3", 200, 10, 3), launch(160, 4), kernel("k4", 300, 10, 4),
              launch(170, 5), kernel("k5", 305, 15, 5), kernel("k6", 400, 1, 99),
              {"ph": "X", "cat": "cuda_sync", "name": "Context Sync", "pid": 0, "tid": 7,
               "ts": 330, "dur": 50, "args": {"stream": 7, "correlation": 6}}]
    d = tmpdir()
    with open(os.path.join(d, "rank0.json"), "w") as f:
        json.dump({"distributedInfo": {"rank": 0}, "traceEvents": events}, f)
    out, _ = analyse(d)
    got = table(out, "/idle_time").set_index("idle_category")
    assert list(got.index) == ["host_wait", "kernel_wait", "other"], list(got.index)
    assert list(got["stream"]) == [7, 7, 7]
    want = {"host_wait": (75.0, 1), "kernel_wait": (0.0, 2), "other": (170.0, 2)}
    for cat, (idle, count) in want.items():
        assert_close(got.loc[cat, "idle_time_us"], idle, f"{cat} idle", 1e-9)
        assert got.loc[cat, "count"] == count, f"{cat} count {got.loc[cat, 'count']}"
        assert_close(got.loc[cat, "idle_time_ratio"], idle / 245.0, f"{cat} ratio", 1e-12)
    assert_close(got.loc["kernel_wait", "min_us"], -5.0, "negative gap kept", 1e-9)
    metrics = table(out, "/rank_metrics").set_index("metric")["value"]
    assert_close(metrics["idle_host_wait_us"], 75.0, "metric host_wait", 1e-9)
    assert_close(metrics["idle_other_us"], 170.0, "metric other", 1e-9)
    # A larger consecutive-kernel delay turns the 80 and 90 us gaps into kernel_wait.
    out, _ = analyse(d, extra=["--consecutive-kernel-delay", "100"])
    got = table(out, "/idle_time").set_index("idle_category")
    assert_close(got.loc["kernel_wait", "idle_time_us"], 170.0, "delay 100 kernel_wait", 1e-9)
    assert got.loc["other", "count"] == 0


if __name__ == "__main__":
    main([make_test(f) for f in INTEGER_FOLDERS + FRACTIONAL_FOLDERS] +
         [test_fractional_default_keeps_nanoseconds, test_hand_built_categories])
