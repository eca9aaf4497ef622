"""Memory bandwidth per copy kind against HTA 0.6.1's own numbers
(memory_bw_summary.csv) on every real trace folder that has them, plus a
hand-built trace whose concurrent bandwidth is known by construction."""
import json
import os

import pandas as pd

from common import (TRACES, analyse, assert_close, hta_args, main, table, tmpdir, trace_dir)

STATS = [("count", "count"), ("mean", "mean_gbps"), ("std", "std_gbps"), ("min", "min_gbps"),
         ("25%", "p25_gbps"), ("50%", "p50_gbps"), ("75%", "p75_gbps"), ("max", "max_gbps")]
FOLDERS = ["trace_filter", "negative_queue", "ns_resolution", "nccl_data", "amd_mi250"]


def hta_summary(folder):
    """HTA's describe() output: two header rows, then rank, kind, stats."""
    path = os.path.join(TRACES, "expected", folder, "memory_bw_summary.csv")
    if len(open(path).read().splitlines()) <= 2:   # only the header rows
        return pd.DataFrame(columns=["rank", "name"]).set_index(["rank", "name"])
    df = pd.read_csv(path, skiprows=3, header=None)
    df.columns = ["rank", "name"] + [hta for hta, _ in STATS]
    return df.set_index(["rank", "name"])


def check_folder(folder):
    out, _ = analyse(trace_dir(folder), extra=hta_args(folder))
    got = table(out, "/memory_bw")
    want = hta_summary(folder)
    # HTA has a row for each kind with bandwidth; hta-mpi also keeps kinds
    # without it (count 0) for their bytes and busy time.
    measured = got[got["count"] > 0].set_index(["rank", "kind"])
    assert sorted(measured.index) == sorted(want.index), \
        f"{folder}: {list(measured.index)} vs HTA {list(want.index)}"
    # Steps in HTA's order and sums in HTA's order: equal but for the
    # summation order of mean and std.
    for key in want.index:
        for hta_col, col in STATS:
            assert_close(measured.loc[key, col], want.loc[key, hta_col], f"{folder} {key} {col}",
                         1e-12, 1e-9)
    assert (got["busy_us"] > 0).all(), folder
    metrics = table(out, "/rank_metrics").set_index(["rank", "metric"])["value"]
    for (rank, kind), row in measured.iterrows():
        name = "memory_bw_" + kind.lower().replace(" ", "_") + "_mean_gbps"
        assert_close(metrics[(rank, name)], row["mean_gbps"], f"{folder} metric {name}", 0, 1e-15)
    return got


def make_test(folder):
    def test():
        check_folder(folder)
    test.__name__ = f"test_memory_bw_{folder}"
    return test


def test_rocm_copies_without_bandwidth():
    # The MI250 trace's two HtoD copies carry no bandwidth: HTA shows nothing,
    # hta-mpi a row with count 0 and the copies' busy time.
    got = check_folder("amd_mi250")
    assert list(got["kind"]) == ["Memcpy HtoD"] and got["count"].iloc[0] == 0, got
    assert got["bytes"].iloc[0] == 0


def copy(name, ts, dur, bw, nbytes, stream=7):
    return {"ph": "X", "cat": "gpu_memcpy", "name": name, "pid": 0, "tid": stream, "ts": ts,
            "dur": dur, "args": {"stream": stream, "correlation": ts + 1, "bytes": nbytes,
                                 "memory bandwidth (GB/s)": bw}}


def test_hand_built_bandwidth():
    # HtoD: A [0, 10) at 2 GB/s and B [5, 15) at 3 GB/s on two streams:
    #   steps +2 (2), +3 (5), -2 (3), -3 (0): positive points 2, 5, 3.
    # Memset of 0 us at 4 GB/s counts as 1 us: points 4, 0.
    # DtoH C [20, 30) at 1 GB/s and D [30, 40) at 5 GB/s back to back: HTA's
    #   order at t=30 (ties: the start of D, laid out before the end of C)
    #   gives points 1, 6, 5, 0 -> positive 1, 6, 5.
    events = [copy("Memcpy HtoD (Pageable -> Device)", 0, 10, 2.0, 20),
              copy("Memcpy HtoD (Pinned -> Device)", 5, 10, 3.0, 30, stream=8),
              copy("Memset (Device)", 100, 0, 4.0, 8),
              copy("Memcpy DtoH (Device -> Pinned)", 20, 10, 1.0, 10),
              copy("Memcpy DtoH (Device -> Pinned)", 30, 10, 5.0, 50)]
    d = tmpdir()
    with open(os.path.join(d, "rank0.json"), "w") as f:
        json.dump({"distributedInfo": {"rank": 0}, "traceEvents": events}, f)
    out, _ = analyse(d)
    got = table(out, "/memory_bw").set_index("kind")
    assert list(got.index) == ["Memcpy DtoH", "Memcpy HtoD", "Memset"], list(got.index)
    want = {"Memcpy HtoD": ([2, 5, 3], 50, 15.0), "Memset": ([4], 8, 0.0),
            "Memcpy DtoH": ([1, 6, 5], 60, 20.0)}
    for kind, (points, nbytes, busy) in want.items():
        row = got.loc[kind]
        s = pd.Series(points, dtype=float)
        assert row["count"] == len(points), f"{kind} count {row['count']}"
        for col, value in [("mean_gbps", s.mean()), ("min_gbps", s.min()), ("max_gbps", s.max()),
                           ("p50_gbps", s.median()), ("p25_gbps", s.quantile(0.25))]:
            assert_close(row[col], value, f"{kind} {col}", 1e-12)
        assert row["bytes"] == nbytes, f"{kind} bytes {row['bytes']}"
        assert_close(row["busy_us"], busy, f"{kind} busy", 1e-9)


if __name__ == "__main__":
    main([make_test(f) for f in FOLDERS] + [test_rocm_copies_without_bandwidth,
                                            test_hand_built_bandwidth])
