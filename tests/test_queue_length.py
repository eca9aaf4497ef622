"""Queue length per stream against HTA 0.6.1's own numbers
(queue_length_summary.csv, blocked_on_full_queue.csv) on every real trace
folder that has them, plus a hand-built trace that fills the launch queue
for a time known by construction."""
import json
import os

import pandas as pd

from common import (
    FRACTIONAL_FOLDERS, INTEGER_FOLDERS, TRACES, analyse, assert_close, expected, hta_args,
    main, table, tmpdir, trace_dir)

STATS = [("count", "count"), ("mean", "mean"), ("std", "std"), ("min", "min"),
         ("25%", "p25"), ("50%", "p50"), ("75%", "p75"), ("max", "max")]
FOLDERS = [f for f in INTEGER_FOLDERS + FRACTIONAL_FOLDERS if f != "alexnet"]  # HTA fails on alexnet


def hta_summary(folder):
    """HTA's describe() output: two header rows, then rank, stream, stats."""
    df = pd.read_csv(os.path.join(TRACES, "expected", folder, "queue_length_summary.csv"),
                     skiprows=3, header=None)
    df.columns = ["rank", "stream"] + [hta for hta, _ in STATS]
    return df.set_index(["rank", "stream"])


def check_folder(folder):
    out, _ = analyse(trace_dir(folder), extra=hta_args(folder))
    got = table(out, "/queue_length").set_index(["rank", "stream"])
    want = hta_summary(folder)
    assert sorted(got.index) == sorted(want.index), f"{folder}: {list(got.index)} vs {list(want.index)}"
    # The steps are ordered as HTA's unstable sort orders them, so every
    # statistic is HTA's up to float summation order.
    for key in want.index:
        for hta_col, col in STATS:
            assert_close(got.loc[key, col], want.loc[key, hta_col], f"{folder} {key} {col}",
                         1e-9, 1e-12)
    # HTA reports no stream at a full queue (1024) in any folder.
    assert len(expected(folder, "blocked_on_full_queue.csv")) == 0
    assert (got["time_at_max_us"] == 0).all() and (got["time_at_max_ratio"] == 0).all(), folder
    metrics = table(out, "/rank_metrics")
    at_max = metrics[metrics["metric"] == "queue_time_at_max_us"]
    assert len(at_max) == len(set(k[0] for k in want.index)) and (at_max["value"] == 0).all()


def make_test(folder):
    def test():
        check_folder(folder)
    test.__name__ = f"test_queue_length_{folder}"
    return test


N = 1030          # launches, all queued before the first kernel starts


def full_queue_trace():
    """Launch i at 10 i us; kernel i at 20000 + 10 i us on stream 7."""
    events = []
    for i in range(N):
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                       "tid": 1, "ts": 10 * i, "dur": 1, "args": {"correlation": i + 1}})
        events.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
                       "ts": 20000 + 10 * i, "dur": 5, "args": {"stream": 7, "correlation": i + 1}})
    d = tmpdir()
    with open(os.path.join(d, "rank0.json"), "w") as f:
        json.dump({"distributedInfo": {"rank": 0}, "traceEvents": events}, f)
    return d


def test_hand_built_full_queue():
    out, _ = analyse(full_queue_trace())
    got = table(out, "/queue_length").iloc[0]
    assert got["stream"] == 7 and got["count"] == 2 * N and got["max"] == N, dict(got)
    # Up to 1030 after the last launch (10290 us); the queue reaches 1024 at
    # the 1024th launch (10230 us) and falls to 1023 at the 7th kernel start
    # (20060 us).  HTA's trace duration spans event starts: 0 to 30290 us.
    assert_close(got["time_at_max_us"], 20060 - 10230, "time at full queue", 1e-9)
    assert_close(got["time_at_max_ratio"], (20060 - 10230) / 30290, "ratio", 1e-12)
    # Time-weighted mean: rises by 1 every 10 us to N, holds until 20000,
    # then falls by 1 every 10 us: the area is a trapezoid of steps.
    ts = [10 * i for i in range(N)] + [20000 + 10 * i for i in range(N)]
    values = list(range(1, N + 1)) + list(range(N - 1, -1, -1))
    area = sum(v * (t1 - t0) for v, t0, t1 in zip(values, ts, ts[1:]))
    assert_close(got["time_weighted_mean"], area / (ts[-1] - ts[0]), "time-weighted mean", 0, 1e-12)
    metrics = table(out, "/rank_metrics").set_index("metric")["value"]
    assert_close(metrics["queue_time_at_max_us"], 9830, "metric", 1e-9)


if __name__ == "__main__":
    main([make_test(f) for f in FOLDERS] + [test_hand_built_full_queue])
