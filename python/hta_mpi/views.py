"""hta_mpi.views: the numbers behind each figure, shared by the PNG plots
(plots.py) and the HTML report (report.py) so both draw the same data.

Each view is read straight from the results file and keeps the values in
the file's own columns (only scaled to display units), so a figure can be
checked against the HDF5 cell by cell.  Outlier marks come from /outliers:
a heatmap cell is marked when its (metric, rank) was flagged there."""
from collections import namedtuple

import numpy as np

from hta_mpi import results

Heatmap = namedtuple("Heatmap", "title unit ranks labels metrics values flags")
Heatmap.__doc__ = """values[i, j]: rank ranks[i]'s value of column labels[j] (the
file's metric metrics[j], in unit); flags[(i, j)]: the outlier
classification of that cell."""

KernelTypes = namedtuple("KernelTypes", "labels sum_us percentage")

# (label, table, column, divisor to display units): compute, communication and
# overlap split each instant of a rank's GPU span between compute-only,
# communication-only and both kernels (Nsight's overlap breakdown); empty is
# neither, idle is no GPU activity at all (HTA's temporal breakdown).
HEATMAP_COLUMNS = {
    "seconds": ("GPU time per rank (s)", "s", [
        ("compute", "overlap_breakdown", "compute_us", 1e6),
        ("communication", "overlap_breakdown", "communicate_us", 1e6),
        ("overlap", "overlap_breakdown", "overlap_us", 1e6),
        ("empty", "overlap_breakdown", "empty_us", 1e6),
        ("idle", "temporal_breakdown", "idle_time_us", 1e6),
    ]),
    "ratios": ("Share of each rank's GPU span", "ratio", [
        ("compute", "overlap_breakdown", "compute_ratio", 1.0),
        ("communication", "overlap_breakdown", "communicate_ratio", 1.0),
        ("overlap", "overlap_breakdown", "overlap_ratio", 1.0),
        ("empty", "overlap_breakdown", "empty_ratio", 1.0),
        ("idle", "temporal_breakdown", "idle_time_pctg", 100.0),
    ]),
}


def heatmap(path, kind):
    """The per-rank heatmap of kind "seconds" or "ratios": one row per rank
    that has both breakdowns, one column per HEATMAP_COLUMNS entry."""
    title, unit, columns = HEATMAP_COLUMNS[kind]
    frames = {t: results.load(path, t).set_index("rank") for t in {c[1] for c in columns}}
    ranks = sorted(set.intersection(*(set(f.index) for f in frames.values())))
    values = np.array([[frames[t].loc[r, col] / divisor for _, t, col, divisor in columns]
                       for r in ranks], dtype=float).reshape(len(ranks), len(columns))
    metrics = [col for _, _, col, _ in columns]
    flags = {}
    outliers = results.load(path, "outliers")
    row_of = {r: i for i, r in enumerate(ranks)}
    for metric, rank, cls in zip(outliers["metric"], outliers["rank"], outliers["classification"]):
        if metric in metrics and rank in row_of:
            flags[(row_of[rank], metrics.index(metric))] = cls
    return Heatmap(title, unit, np.array(ranks, dtype=np.int64), [c[0] for c in columns],
                   metrics, values, flags)


# (table, value column, cross-rank table, title) of the ranks x name
# heatmaps: GPU busy time of each CPU op's own launches, and GPU time of
# each user annotation (its CPU time when the trace has no GPU annotation).
NAME_HEATMAPS = {
    "ops": ("ops", ["gpu_busy_sum_us"], "cross_rank/ops",
            "GPU busy time of each CPU op's launches (ms)"),
    "annotations": ("annotations", ["sum_us", "cpu_sum_us"], "cross_rank/annotations",
                    "Time in each user annotation (ms, {})"),
}
NAME_HEATMAP_COLUMNS = 10
LABEL_CHARS = 18


def _short(name):
    return name if len(name) <= LABEL_CHARS else name[:LABEL_CHARS - 1] + "\u2026"


def name_heatmap(path, kind):
    """Ranks x the NAME_HEATMAP_COLUMNS names with the most time summed over
    ranks, in ms, from /ops or /annotations (kind); a cell is flagged when
    the cross-rank table lists its rank as an outlier for its name.  None
    when no name has any time."""
    table, candidates, cross, title = NAME_HEATMAPS[kind]
    df = results.load(path, table)
    column = next((c for c in candidates if len(df) and df[c].fillna(0).sum() > 0), None)
    if column is None:
        return None
    per = df.groupby(["rank", "name"])[column].sum().unstack(fill_value=0.0) / 1000.0
    names = list(per.sum(axis=0).sort_values(ascending=False, kind="stable")
                 .index[:NAME_HEATMAP_COLUMNS])
    per = per[names]
    ranks = np.array(per.index, dtype=np.int64)
    flags = {}
    x = results.load(path, cross)
    row_of = {int(r): i for i, r in enumerate(ranks)}
    for name, listed in zip(x["name"], x["outlier_ranks"]):
        if name in names and listed:
            for r in listed.split(","):
                if int(r) in row_of:
                    flags[(row_of[int(r)], names.index(name))] = "robust"
    where = "GPU" if column == "sum_us" else "CPU"
    return Heatmap(title.format(where), "ms", ranks, [_short(n) for n in names], names,
                   per.values.astype(float), flags)


GapStrip = namedtuple("GapStrip", "ranks origin_us row start_ms duration_ms cause")
GapStrip.__doc__ = """Gap k of /gpu_gaps is drawn on row row[k] (rank ranks[row[k]])
from start_ms[k] (ms after origin_us, the first GPU event of any rank when
the file has a timeline, else the first gap) for duration_ms[k]; cause[k]
colours it."""


def gap_strip(path):
    """The GPU gaps of every rank for a per-rank strip, or None without any."""
    gaps = results.load(path, "gpu_gaps")
    if len(gaps) == 0:
        return None
    tl = results.timeline(path)
    origin = float(tl.edges_us[0]) if tl is not None else float(gaps["start_us"].min())
    ranks = np.array(sorted(set(int(r) for r in gaps["rank"])), dtype=np.int64)
    row_of = {int(r): i for i, r in enumerate(ranks)}
    return GapStrip(ranks, origin, np.array([row_of[int(r)] for r in gaps["rank"]]),
                    (gaps["start_us"].to_numpy(float) - origin) / 1000.0,
                    gaps["duration_us"].to_numpy(float) / 1000.0, list(gaps["cause"]))


def relative_to_median(values):
    """Each column's deviation from its median rank, as a fraction of that
    median (0 where the median is 0): the heatmaps' colour, so that a rank
    stands out in every column whatever the column's magnitude."""
    median = np.median(values, axis=0) if len(values) else np.zeros(values.shape[1])
    scale = np.where(median == 0, 1.0, np.abs(median))
    return np.where(median == 0, 0.0, (values - median) / scale)


def outlier_ranks(path):
    """Every rank flagged in /outliers for any metric, sorted."""
    return sorted(set(int(r) for r in results.load(path, "outliers")["rank"]))


def timeline_fractions(timeline):
    """Share of each bin spent in each category, per rank: us / bin width.
    A rank's shares sum to less than 1 in bins outside its own GPU span.
    The bins are equal; their width comes from the whole range because the
    stored edges are absolute epoch microseconds, which float64 holds only
    to 0.25 us, so neighbouring edges' differences are off by that much."""
    bins = timeline.us.shape[1]
    width = (timeline.edges_us[-1] - timeline.edges_us[0]) / bins if bins else 1.0
    return timeline.us / (width if width > 0 else 1.0)


def kernel_types(path):
    """HTA's kernel-type breakdown summed over ranks (/kernel_type_breakdown)."""
    kt = results.load(path, "kernel_type_breakdown")
    return KernelTypes(list(kt["kernel_type"]), kt["sum_us"].to_numpy(),
                       kt["percentage"].to_numpy())


def rank_summary(path):
    """One row per trace file: rank, status, error, file, and HTA's compute,
    non-compute and idle percentages with the share of the GPU span in which
    communication runs (communication only + overlap, in percent)."""
    ranks = results.load(path, "ranks")[["rank", "status", "error", "file"]]
    ranks = ranks[ranks.status != "missing"]  # ranks of the world size without a trace
    tb = results.load(path, "temporal_breakdown")[
        ["rank", "compute_time_pctg", "non_compute_time_pctg", "idle_time_pctg"]]
    ob = results.load(path, "overlap_breakdown")
    ob = ob.assign(communication_pctg=100 * (ob["communicate_ratio"] + ob["overlap_ratio"]),
                   overlap_pctg=100 * ob["overlap_ratio"])
    return (ranks.merge(tb, on="rank", how="left")
            .merge(ob[["rank", "communication_pctg", "overlap_pctg"]], on="rank", how="left"))
