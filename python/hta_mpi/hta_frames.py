"""hta_mpi.hta_frames: hta-mpi's tables reshaped into the DataFrames HTA
0.6.1's TraceAnalysis returns (column names, units, index and row order).

Each function takes tables already loaded (results.load) and returns HTA's
frame; none runs anything.  The folding of a breakdown into its top names
plus "others" is HTA's own pandas code (BreakdownAnalysis.
_aggr_gpu_kernel_time), applied to hta-mpi's per-name statistics: once a
group has more than num_kernels names, HTA aggregates each name's *sum*
(so a kept name's max, min and mean become its sum and its stddev 0), and
this module does the same."""
import re

import numpy as np
import pandas as pd

HTA_STATS = {"sum_us": "sum", "max_us": "max", "min_us": "min", "mean_us": "mean",
             "stddev_us": "std"}
HTA_STAT_NAMES = {"sum": "sum (us)", "mean": "mean (us)", "max": "max (us)",
                  "min": "min (us)", "std": "stddev"}
DESCRIBE = [("count", "count"), ("mean", "mean"), ("std", "std"), ("min", "min"),
            ("p25", "25%"), ("p50", "50%"), ("p75", "75%"), ("max", "max")]
HTA_LAUNCH_APIS = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync",
                   "cudaMemsetAsync")


def fold_top(per_name, num_kernels, duration_ratio, allowlist_names=None):
    """HTA's _aggr_gpu_kernel_time from per-name statistics (columns name,
    sum, max, min, mean, std): sorted by sum, folded into "others" past
    num_kernels names or the duration_ratio quantile of the cumulative sum."""
    df = per_name[["name", "sum", "max", "min", "mean", "std"]]
    # HTA's groupby("name") hands them over in name order before sorting.
    df = df.sort_values("name", kind="stable").reset_index(drop=True)
    df = df.sort_values(by=["sum"], ascending=False, ignore_index=True)
    df = df.fillna({"std": 0})
    if df.shape[0] <= num_kernels:
        return df
    keep = df.name.isin(allowlist_names) if allowlist_names is not None else df["sum"] < 0
    df["cumsum"] = df["sum"].cumsum()
    quantiles = df["cumsum"].quantile(duration_ratio)
    df.loc[~keep & (df["cumsum"] > quantiles), "name"] = "others"
    df.loc[~keep & (df.index >= num_kernels), "name"] = "others"
    df = df.groupby(by=["name"])["sum"].agg(["sum", "max", "min", "mean", "std"])
    df.reset_index(inplace=True)
    return df.fillna({"std": 0})


def kernel_breakdown(kernels, types, num_kernels, duration_ratio):
    """get_gpu_kernel_breakdown's second frame from /kernels."""
    parts = []
    for rank in sorted(kernels["rank"].unique()):
        for ktype in types:
            g = kernels[(kernels["rank"] == rank) & (kernels.kernel_type == ktype)]
            if g.empty:
                continue
            folded = fold_top(g.rename(columns=HTA_STATS), num_kernels, duration_ratio)
            parts.append(folded.assign(kernel_type=ktype, rank=int(rank)))
    columns = ["name", "sum", "max", "min", "std", "mean", "kernel_type", "rank"]
    df = pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)
    df = df.sort_values(by=["kernel_type", "name", "rank"], ignore_index=True)
    return df.rename(columns=HTA_STAT_NAMES)


def without_memory(kernel_type):
    """A combination of kernel types as HTA names it when memory kernels
    are not analysed: "COMPUTATION overlapping MEMORY" is COMPUTATION time,
    MEMORY alone none ("")."""
    return " overlapping ".join(t for t in kernel_type.split(" overlapping ") if t != "MEMORY")


def kernel_type_breakdown(by_type, include_memory_kernels=True):
    """get_gpu_kernel_breakdown's first frame from /kernel_type_breakdown.
    Each instant is counted once under the set of types running then, so
    leaving memory kernels out moves each combination's time to the same
    combination without MEMORY."""
    if not include_memory_kernels:
        by_type = by_type.assign(kernel_type=by_type.kernel_type.map(without_memory))
        by_type = by_type[by_type.kernel_type != ""].groupby("kernel_type", as_index=False,
                                                             sort=True)["sum_us"].sum()
    df = pd.DataFrame({"kernel_type": by_type.kernel_type, "sum": by_type.sum_us})
    df = df.sort_values(by=["sum"], ignore_index=True, ascending=False)
    df["percentage"] = (df["sum"] / df["sum"].sum()) * 100
    return df.round({"percentage": 1})


def with_steps(annotations, steps):
    """/annotations with a CPU row per ProfilerStep#N range of /steps: HTA
    counts the step ranges among the CPU user annotations, hta-mpi keeps
    them apart."""
    if steps is None or steps.empty:
        return annotations
    us = steps.step_time_us.values
    rows = pd.DataFrame({"rank": steps["rank"].values,
                         "name": [f"ProfilerStep#{s}" for s in steps.step],
                         "count": 0, "cpu_count": 1, "cpu_sum_us": us, "cpu_max_us": us,
                         "cpu_min_us": us, "cpu_mean_us": us, "cpu_std_us": np.nan})
    return pd.concat([annotations, rows], ignore_index=True)


def annotation_breakdown(annotations, use_gpu, num_kernels, duration_ratio, allowlist_patterns):
    """get_gpu_user_annotation_breakdown from /annotations: GPU annotation
    time (use_gpu) or the CPU annotation's own time."""
    prefix = "" if use_gpu else "cpu_"
    count = "count" if use_gpu else "cpu_count"
    rows = annotations[annotations[count] > 0]
    if rows.empty:
        return None
    names = None
    if allowlist_patterns is not None:
        names = [n for n in rows.name.unique()
                 if any(re.search(p, n) or p == n for p in allowlist_patterns)]
    parts = []
    for rank in sorted(rows["rank"].unique()):
        g = rows[rows["rank"] == rank]
        per_name = pd.DataFrame({"name": g.name, "sum": g[prefix + "sum_us"],
                                 "max": g[prefix + "max_us"], "min": g[prefix + "min_us"],
                                 "mean": g[prefix + "mean_us"], "std": g[prefix + "std_us"]})
        parts.append(fold_top(per_name, num_kernels, duration_ratio, names).assign(rank=int(rank)))
    df = pd.concat(parts, ignore_index=True)[["name", "sum", "max", "min", "std", "mean", "rank"]]
    df = df.sort_values(by=["rank", "name"], ignore_index=True)
    return df.rename(columns=HTA_STAT_NAMES)


def temporal_breakdown(tb):
    return pd.DataFrame({
        "rank": tb["rank"], "idle_time(us)": tb.idle_time_us,
        "compute_time(us)": tb.compute_time_us, "non_compute_time(us)": tb.non_compute_time_us,
        "kernel_time(us)": tb.kernel_time_us, "idle_time_pctg": tb.idle_time_pctg,
        "compute_time_pctg": tb.compute_time_pctg,
        "non_compute_time_pctg": tb.non_compute_time_pctg}).reset_index(drop=True)


def idle_time(idle, ranks, streams):
    """get_idle_time_breakdown's two frames for the given ranks: the
    breakdown (index 0.. per rank, as HTA concatenates them) and the
    interval statistics (indexed by idle_category), both rounded to 2
    decimals like HTA's.  Streams come in the table's order (HTA's: that
    of their first event in the trace), or in the order given."""
    parts, stats = [], []
    for rank in ranks:
        g = idle[idle["rank"] == rank]
        if streams:
            # HTA walks the streams in the order given.
            g = g[g.stream.isin(streams)]
            g = g.iloc[np.argsort([list(streams).index(s) for s in g.stream], kind="stable")]
        parts.append(pd.DataFrame({"rank": g["rank"], "stream": g.stream,
                                   "idle_category": g.idle_category,
                                   "idle_time": g.idle_time_us,
                                   "idle_time_ratio": g.idle_time_ratio}
                                  ).reset_index(drop=True).round(2))
        s = pd.DataFrame({"rank": g["rank"].values, "stream": g.stream.values},
                         index=pd.Index(g.idle_category.values, name="idle_category"))
        for col, hta in DESCRIBE:
            s[hta] = (g[col] if col == "count" else g[col + "_us"]).values.astype(float)
        stats.append(s.round(2))
    return pd.concat(parts), pd.concat(stats)


def described(table, key, hta_key, value, suffix, ranks):
    """HTA's groupby([rank, key])[value].describe(): a (rank, key) index
    and (value, statistic) columns."""
    t = table[table["rank"].isin(ranks)]
    index = pd.MultiIndex.from_arrays([t["rank"].values, t[key].values], names=["rank", hta_key])
    columns = pd.MultiIndex.from_tuples([(value, hta) for _, hta in DESCRIBE])
    data = np.column_stack([t[col + (suffix if col != "count" else "")].values.astype(float)
                            for col, _ in DESCRIBE]) if len(t) else np.empty((0, 8))
    return pd.DataFrame(data, index=index, columns=columns)


def launches(detail, ranks, include_memory_events, hta_apis_only):
    """get_cuda_kernel_launch_stats' per-rank frames from /detail/launches,
    in the order of the launches' CPU start (HTA: the trace file's order)."""
    out = {}
    for rank in ranks:
        g = detail[detail["rank"] == rank].sort_values("cpu_start_us", kind="stable")
        if hta_apis_only:
            g = g[g.launch_name.isin(HTA_LAUNCH_APIS)]
        if not include_memory_events:
            g = g[~g.launch_name.str.contains("Memcpy|Memset")]
        out[int(rank)] = pd.DataFrame({"correlation": g.correlation,
                                       "cpu_duration": g.cpu_duration_us,
                                       "gpu_duration": g.gpu_duration_us,
                                       "launch_delay": g.launch_delay_us}).reset_index(drop=True)
    return out


def aten_ops(calls, rank, sort_by):
    """get_aten_op_kernels_and_delay's frame for one rank from
    detail/op_kernels, grouped by HTA's own pandas code: per (aten op,
    kernel sequence) the calls and their mean first-launch delays."""
    c = calls[(calls["rank"] == rank) & calls.name.str.startswith("aten::")]
    stats = pd.DataFrame({"aten_op_name": c.name.values, "kernel_sequence": c.kernels.values,
                          "first_launch_delay": c.op_to_launch_us.values,
                          "first_runtime_delay": c.launch_to_kernel_us.values})
    final = (stats.groupby(["aten_op_name", "kernel_sequence"])
             .agg(occurrence_count=("first_runtime_delay", "count"),
                  avg_aten_op_launch_delay=("first_launch_delay", "mean"),
                  avg_runtime_delay=("first_runtime_delay", "mean"))
             .reset_index()).sort_values(sort_by, ascending=False)
    final["avg_runtime_delay"] = final["avg_runtime_delay"].round(3)
    final["avg_aten_op_launch_delay"] = final["avg_aten_op_launch_delay"].round(3)
    return final


def kernel_sequences(seq, rank):
    g = seq[seq["rank"] == rank]
    df = pd.DataFrame({"pattern": g.name.values, "count": g["count"].values,
                       "GPU kernel duration (us)": g.gpu_time_us.values,
                       "CPU op duration (us)": g.cpu_time_us.values})
    return df.sort_values(by=["count", "pattern"], ascending=[False, True], ignore_index=True)


def cupti_counters(ranges, values, rank):
    """get_cupti_counter_data_with_operators' frame for one rank: one row
    per kernel range with its op stack and a column per counter."""
    r = ranges[ranges["rank"] == rank].set_index("range")
    df = pd.DataFrame({"name": r.kernel, "ts": r.ts_us, "dur": r.dur_us,
                       "op_stack": r.op_stack, "top_level_op": r.top_op,
                       "bottom_level_op": r.bottom_op})
    v = values[values["rank"] == rank]
    if len(v):
        wide = v.pivot(index="range", columns="counter", values="value")
        df = df.join(wide)
    return df.reset_index(drop=True)


_MEMORY_KERNEL = re.compile(r"(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)")


def shorten_name(name):
    """HTA's shorten_name: a kernel or op name without its template and
    function arguments and return type (memory kernels kept whole)."""
    if _MEMORY_KERNEL.match(name) or (name.find("<") < 0 and name.find("(") < 0):
        return name
    stack = []
    for c in name.replace("->", ""):
        if c in ">)":
            opening = "<" if c == ">" else "("
            while stack and stack[-1] != opening:
                stack.pop()
            if stack:
                stack.pop()
        else:
            stack.append(c)
    return "".join(stack).split(" ")[-1]


def annotated_gpu_events(events, rank, shorten):
    """get_gpu_kernels_with_user_annotations' rows from detail/gpu_events:
    HTA's order (start, then correlation), NaN where no annotation."""
    g = events[events["rank"] == rank].sort_values(["ts_us", "correlation"], kind="stable")
    names = g.name.map(shorten_name) if shorten else g.name
    return pd.DataFrame({"ts": g.ts_us.values, "dur": g.dur_us.values, "stream": g.stream.values,
                         "correlation": g.correlation.values, "s_name": names.values,
                         "s_user_annotation": g.annotation.replace("", np.nan).values})
