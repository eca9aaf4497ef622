"""Kernel breakdown against HTA 0.6.1's own numbers (get_gpu_kernel_breakdown)
on every real trace folder: /kernels vs kernel_breakdown_all.csv, /kernels_top
vs kernel_breakdown.csv (and vs kernel_breakdown_all.csv with HTA's
untruncated options), /kernel_type_breakdown vs kernel_type_breakdown.csv;
HTA's own fold (its pandas code, run here) for other options; hand-built
traces for what the CSVs do not show (counts, OTHER kernels, three-way
overlaps, ties at the top-k cut, combinations HTA lists at 0)."""
import math

import numpy as np

import pandas as pd

from common import (
    FRACTIONAL_FOLDERS, INTEGER_FOLDERS, analyse, assert_close, expected, hta_args, main,
    table, tolerances, trace_dir)
from handbuilt import NO_STREAM, gpu_kernel, write_ranks

FOLDERS = INTEGER_FOLDERS + FRACTIONAL_FOLDERS
EXACT = 1e-9
KEY = ["rank", "kernel_type", "name"]
STATS = [("sum (us)", "sum_us"), ("max (us)", "max_us"), ("min (us)", "min_us"),
         ("mean (us)", "mean_us"), ("stddev", "stddev_us")]
UNTRUNCATED = ["--num-kernels", "1000000000", "--duration-ratio", "1.0"]


def run_folder(folder, extra=()):
    # trace_filter's two ranks on two processes: rows come back through the gather.
    out, _ = analyse(trace_dir(folder), processes=2 if folder == "trace_filter" else 1,
                     extra=hta_args(folder) + list(extra))
    return out


def keys(df):
    return list(df[KEY].itertuples(index=False, name=None))


def compare_rows(got, want, what, t_abs):
    """got holds exactly want's rows (HTA's column names), in HTA's order
    within each rank (kernel type, then name), with HTA's values."""
    want = want.sort_values("rank", kind="stable").reset_index(drop=True)
    got = got.reset_index(drop=True)
    assert keys(got) == keys(want), (f"{what}: rows differ, first got {keys(got)[:3]}, "
                                     f"HTA {keys(want)[:3]} ({len(got)} vs {len(want)})")
    for i in range(len(want)):
        for hta_col, col in STATS:
            tol = (t_abs, 0.0) if col != "stddev_us" else (1e-6, 1e-9)
            assert_close(got.loc[i, col], want.loc[i, hta_col], f"{what} {keys(want)[i]} {col}",
                         *tol)


def check_kernels(folder, out, t_abs):
    got = table(out, "/kernels")
    want = expected(folder, "kernel_breakdown_all.csv")
    # HTA breaks down COMPUTATION, COMMUNICATION and MEMORY only; /kernels
    # keeps OTHER kernels too, and those are its only extra rows.
    compare_rows(got[got.kernel_type != "OTHER"], want, f"{folder} kernels", t_abs)
    others = set(got[got.kernel_type == "OTHER"].name)
    if folder == "alexnet":
        assert others == {"Context Sync", "Stream Sync", "Stream Wait Event"}, others
    # HTA has no count; its sum / mean gives it.
    merged = got.merge(want, on=KEY)
    for _, r in merged[merged["mean (us)"] != 0].iterrows():
        assert r["count"] == round(r["sum (us)"] / r["mean (us)"]), f"{folder} count {r['name']}"


def check_top(folder, out, t_abs):
    top = table(out, "/kernels_top")
    compare_rows(top, expected(folder, "kernel_breakdown.csv"), f"{folder} kernels_top", t_abs)
    # Folded or not, the view covers every instance of every analysed kernel.
    kernels = table(out, "/kernels")
    kernels = kernels[kernels.kernel_type != "OTHER"]
    assert (top.groupby(["rank", "kernel_type"])["count"].sum() ==
            kernels.groupby(["rank", "kernel_type"])["count"].sum()).all(), folder


def check_kernel_types(folder, out, t_abs, p_abs):
    got = table(out, "/kernel_type_breakdown")
    want = expected(folder, "kernel_type_breakdown.csv")
    assert list(got.kernel_type) == list(want.kernel_type), f"{folder}: {list(got.kernel_type)}"
    for g, w in zip(got.itertuples(), want.itertuples()):
        assert_close(g.sum_us, w.sum, f"{folder} {w.kernel_type} sum", t_abs)
        assert_close(g.percentage, w.percentage, f"{folder} {w.kernel_type} percentage", p_abs)
    # The per-rank table sums to it, and its COMPUTATION parts are the
    # temporal breakdown's compute time.
    by_rank = table(out, "/kernel_type_by_rank")
    totals = by_rank.groupby("kernel_type")["sum_us"].sum()
    for g in got.itertuples():
        assert_close(totals[g.kernel_type], g.sum_us, f"{folder} {g.kernel_type} over ranks", EXACT)
    temporal = table(out, "/temporal_breakdown").set_index("rank")
    compute = by_rank[by_rank.kernel_type.str.contains("COMPUTATION")].groupby("rank")["sum_us"].sum()
    for rank in temporal.index:
        assert_close(compute.get(rank, 0.0), temporal.loc[rank, "compute_time_us"],
                     f"{folder} rank {rank} computation", EXACT)


def make_folder_test(folder):
    def test():
        out = run_folder(folder)
        t_abs, p_abs = tolerances(folder)
        check_kernels(folder, out, t_abs)
        check_top(folder, out, t_abs)
        check_kernel_types(folder, out, t_abs, p_abs)
    test.__name__ = f"test_kernels_{folder}"
    return test


def make_untruncated_test(folder):
    # kernel_breakdown_all.csv is HTA's get_gpu_kernel_breakdown with
    # num_kernels=10**9, duration_ratio=1.0: the same options give it here.
    def test():
        out = run_folder(folder, UNTRUNCATED)
        compare_rows(table(out, "/kernels_top"), expected(folder, "kernel_breakdown_all.csv"),
                     f"{folder} untruncated kernels_top", tolerances(folder)[0])
    test.__name__ = f"test_untruncated_top_{folder}"
    return test


def hta_top_view(kernels, num_kernels, duration_ratio):
    """HTA's top view, computed by HTA's own pandas code
    (BreakdownAnalysis._aggr_gpu_kernel_time) from the per-name sums of
    /kernels, with HTA's column names."""
    parts = []
    for (rank, ktype), g in kernels[kernels.kernel_type != "OTHER"].groupby(["rank", "kernel_type"]):
        if len(g) <= num_kernels:
            df = g.rename(columns={c: h for h, c in STATS})
        else:
            # As groupby leaves them: one row per name, in name order.
            df = pd.DataFrame({"name": g["name"], "sum": g["sum_us"].round().astype("int64")})
            df = df.sort_values("name").reset_index(drop=True)
            # HTA's code from here on.
            df = df.sort_values(by=["sum"], ascending=False, ignore_index=True)
            df["cumsum"] = df["sum"].cumsum()
            quantiles = df["cumsum"].quantile(duration_ratio)
            df.loc[df["cumsum"] > quantiles, "name"] = "others"
            df.loc[df.index >= num_kernels, "name"] = "others"
            df = df.groupby(by=["name"])["sum"].agg(["sum", "max", "min", "mean", "std"])
            df.reset_index(inplace=True)
            df["std"].fillna(0, inplace=True)
            df = df.rename(columns={"sum": "sum (us)", "max": "max (us)", "min": "min (us)",
                                    "mean": "mean (us)", "std": "stddev"})
        parts.append(df.assign(rank=rank, kernel_type=ktype))
    return pd.concat(parts).sort_values(["kernel_type", "name"], kind="stable")


def test_other_options_fold_like_hta():
    for folder in INTEGER_FOLDERS:
        for num_kernels, ratio in [(3, 0.5), (20, 0.95), (1, 0.8)]:
            out = run_folder(folder, ["--num-kernels", str(num_kernels), "--duration-ratio", str(ratio)])
            want = hta_top_view(table(out, "/kernels"), num_kernels, ratio)
            compare_rows(table(out, "/kernels_top"), want,
                         f"{folder} top {num_kernels}/{ratio}", EXACT)


def built_trace_dir():
    """Rank 0, in us:
        gemm       [0, 10) [100, 120) [200, 230) stream 7   COMPUTATION
        relu       [300, 307)                    stream 7   COMPUTATION
        AllReduce  [105, 205) [290, 340)         stream 8   COMMUNICATION
        Memset     [110, 112.5)                  stream 9   MEMORY
        Context Sync [400, 405)                             OTHER
    Exclusive time: COMPUTATION [0, 10) [100, 105) [205, 230) = 40;
    COMMUNICATION [120, 200) [290, 300) [307, 340) = 123; both [105, 110)
    [112.5, 120) [200, 205) [300, 307) = 24.5; all three [110, 112.5) = 2.5.
    Rank 1: one Memset [0, 24.5) = MEMORY 24.5, tied with rank 0's
    COMPUTATION overlapping COMMUNICATION over all ranks."""
    nccl = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
    return write_ranks({
        0: [gpu_kernel("gemm", 0, 10), gpu_kernel("gemm", 100, 20), gpu_kernel("gemm", 200, 30),
            gpu_kernel("relu", 300, 7), gpu_kernel(nccl, 105, 100, 8), gpu_kernel(nccl, 290, 50, 8),
            gpu_kernel("Memset (Device)", 110, 2.5, 9),
            gpu_kernel("Context Sync", 400, 5, NO_STREAM)],
        1: [gpu_kernel("Memset (Device)", 0, 24.5)],
    }), nccl


def test_known_answers():
    d, nccl = built_trace_dir()
    out, _ = analyse(d, processes=2)
    kernels = table(out, "/kernels")
    want = [  # rank, type, name, count, sum, max, min, mean, std
        (0, "COMMUNICATION", nccl, 2, 150, 100, 50, 75, math.sqrt(1250)),
        (0, "COMPUTATION", "gemm", 3, 60, 30, 10, 20, 10),
        (0, "COMPUTATION", "relu", 1, 7, 7, 7, 7, 0),
        (0, "MEMORY", "Memset (Device)", 1, 2.5, 2.5, 2.5, 2.5, 0),
        (0, "OTHER", "Context Sync", 1, 5, 5, 5, 5, 0),
        (1, "MEMORY", "Memset (Device)", 1, 24.5, 24.5, 24.5, 24.5, 0),
    ]
    assert keys(kernels) == [w[:3] for w in want], keys(kernels)
    cols = ["count", "sum_us", "max_us", "min_us", "mean_us", "stddev_us"]
    for (_, row), w in zip(kernels.iterrows(), want):
        for col, v in zip(cols, w[3:]):
            assert_close(row[col], v, f"{w[:3]} {col}", EXACT)
    # Four names per type at most: the top view is /kernels without OTHER.
    top = table(out, "/kernels_top")
    assert top.equals(kernels[kernels.kernel_type != "OTHER"].reset_index(drop=True)), top

    by_rank = table(out, "/kernel_type_by_rank")
    assert list(by_rank.itertuples(index=False, name=None)) == [
        (0, "COMPUTATION", 40.0), (0, "COMMUNICATION", 123.0),
        (0, "COMPUTATION overlapping COMMUNICATION", 24.5),
        (0, "COMPUTATION overlapping COMMUNICATION overlapping MEMORY", 2.5),
        (1, "MEMORY", 24.5)], by_rank
    # Sorted by sum, the tie by name; percentages of 214.5 to 1 decimal.
    totals = table(out, "/kernel_type_breakdown")
    assert list(totals.itertuples(index=False, name=None)) == [
        ("COMMUNICATION", 123.0, 57.3), ("COMPUTATION", 40.0, 18.6),
        ("COMPUTATION overlapping COMMUNICATION", 24.5, 11.4), ("MEMORY", 24.5, 11.4),
        ("COMPUTATION overlapping COMMUNICATION overlapping MEMORY", 2.5, 1.2)], totals


def sequential_kernels(durations_by_name):
    """One stream, each kernel after the previous, names in the given order."""
    events, t = [], 0
    for name, durations in durations_by_name:
        for dur in durations:
            events.append(gpu_kernel(name, t, dur))
            t += dur + 1
    return events


def test_top_view_fold():
    # Names ranked by sum: gemm 60, relu 7, then k_a, k_b, k_c at 5 each
    # (ties in name order, as HTA's sort leaves up to 16 names).  Cumulative
    # sums 60 67 72 77 82, 0.8 quantile 78: k_c exceeds it, and with
    # --num-kernels 3 k_b and k_c are past the cut.  "others" holds k_b and
    # k_c, its statistics over their sums; kept names show their sum as
    # max = min = mean, as in HTA.
    d = write_ranks({0: sequential_kernels([("k_c", [5]), ("gemm", [10, 20, 30]), ("relu", [7]),
                                            ("k_b", [2, 3]), ("k_a", [5])])})
    out, _ = analyse(d, extra=["--num-kernels", "3"])
    top = table(out, "/kernels_top")
    assert list(top.itertuples(index=False, name=None)) == [
        (0, "gemm", "COMPUTATION", 3, 60.0, 60.0, 60.0, 60.0, 0.0),
        (0, "k_a", "COMPUTATION", 1, 5.0, 5.0, 5.0, 5.0, 0.0),
        (0, "others", "COMPUTATION", 3, 10.0, 5.0, 5.0, 5.0, 0.0),
        (0, "relu", "COMPUTATION", 1, 7.0, 7.0, 7.0, 7.0, 0.0)], top


def test_top_view_ties_beyond_16_names_like_pandas():
    # Above 16 names numpy's quicksort reorders equal sums; which tied names
    # stay in the top 10 must be the ones HTA keeps.
    names = [(f"k{i:02d}", [4]) for i in range(40)] + [("gemm", [50])]
    d = write_ranks({0: sequential_kernels(names)})
    out, _ = analyse(d)
    want = hta_top_view(table(out, "/kernels"), 10, 0.8)
    assert len(want) == 11 and "others" in set(want.name), want  # gemm, 9 tied, others
    compare_rows(table(out, "/kernels_top"), want, "40 tied names", EXACT)


def memcpy(ts, dur, stream=8):
    e = gpu_kernel("Memcpy HtoD (Pageable -> Device)", ts, dur, stream)
    e["cat"] = "gpu_memcpy"
    return e


def hta_kernel_type_time(events):
    """HTA 0.6.1's _get_gpu_kernel_type_time (breakdown_analysis.py) with
    its merge_kernel_intervals, run here on the events with pandas: per
    type the merged intervals' starts, then ends, appended and the whole
    list re-sorted (pandas' unstable sort); every running combination is
    a row, with the time to the next point, 0 for one passed at a tie."""
    kernels = pd.DataFrame({"ts": [e["ts"] for e in events], "dur": [e["dur"] for e in events],
                            "kernel_type": ["MEMORY" if e["cat"] == "gpu_memcpy" else
                                            "COMMUNICATION" if "nccl" in e["name"] else
                                            "COMPUTATION" for e in events]})
    sweep = pd.DataFrame({"status": pd.Series(dtype="str"), "time": pd.Series(dtype="int")})
    names = {}
    for idx, kernel_type in enumerate(["COMPUTATION", "COMMUNICATION", "MEMORY"]):
        names[1 << idx] = kernel_type
        k = kernels[kernels.kernel_type.eq(kernel_type)].copy()
        k.sort_values(by="ts", inplace=True)
        k["end"] = k["ts"] + k["dur"]
        k["group"] = (k["ts"] > k["end"].shift().cummax()).cumsum()
        merged = k.groupby("group", as_index=False).agg({"ts": "min", "end": "max"}).drop(
            ["group"], axis=1).sort_values(by="ts")
        sweep = pd.concat([sweep, merged.melt(var_name="status", value_name="time").replace(
            {"ts": 1 << idx, "end": -(1 << idx)})]).sort_values(by="time").reset_index(drop=True)
    sweep["running"] = sweep["status"].cumsum()
    sweep["next_time"] = sweep["time"].shift(-1)
    sweep = sweep[sweep["running"] > 0]
    label = {r: " overlapping ".join(n for b, n in names.items() if r & b)
             for r in sweep["running"].unique()}
    dur = sweep["next_time"] - sweep["time"]
    return dur.groupby(sweep["running"].map(label)).sum().to_dict()


def test_combinations_at_zero_like_hta():
    """A combination the sweep passes through only at a tie is HTA's row at
    0: a copy ending as a kernel starts makes "COMPUTATION overlapping
    MEMORY" for no time (HTA's stable order below 17 points puts the
    kernel's start first), a kernel ending as a copy starts does not; with
    many ties (numpy's quicksort then decides) every row and sum is HTA's."""
    rng = np.random.default_rng(7)
    many = []
    for i in range(60):
        ts = int(rng.integers(0, 40)) * 10
        many.append(memcpy(ts, int(rng.integers(0, 3)) * 10) if i % 3 else
                    gpu_kernel("gemm" if i % 2 else "ncclKernel_AllReduce", ts,
                               int(rng.integers(1, 4)) * 10, stream=7 + i % 2))
    cases = {"copy then kernel": [memcpy(0, 10), gpu_kernel("gemm", 10, 10)],
             "kernel then copy": [gpu_kernel("gemm", 0, 10), memcpy(10, 10)],
             "many ties": many}
    zero_rows = 0
    for what, events in cases.items():
        out, _ = analyse(write_ranks({0: events}))
        got = {r.kernel_type: r.sum_us for r in table(out, "/kernel_type_by_rank").itertuples()}
        want = hta_kernel_type_time(events)
        assert got == as_floats(want), (what, got, want)
        zero_rows += sum(v == 0 for v in want.values())
    assert "COMPUTATION overlapping MEMORY" in hta_kernel_type_time(cases["copy then kernel"])
    assert zero_rows >= 2, "no case has a row at 0: the test would not tell"


def as_floats(d):
    return {k: float(v) for k, v in d.items()}


if __name__ == "__main__":
    main([make_folder_test(f) for f in FOLDERS] + [make_untruncated_test(f) for f in FOLDERS] +
         [test_other_options_fold_like_hta, test_known_answers, test_top_view_fold,
          test_top_view_ties_beyond_16_names_like_pandas, test_combinations_at_zero_like_hta])
