"""Comm/comp overlap (/comm_comp_overlap) against HTA 0.6.1's own numbers on
every real trace folder; the overlap breakdown (/overlap_breakdown, which
HTA lacks) on a hand-built trace with known answers and by its invariants
on every real trace."""
import gzip
import json
import math
import re

from common import (
    FRACTIONAL_FOLDERS, INTEGER_FOLDERS, analyse, assert_close, expected, hta_args, main,
    table, tolerances, trace_dir)
from handbuilt import NO_STREAM, gpu_kernel, write_ranks

FOLDERS = INTEGER_FOLDERS + FRACTIONAL_FOLDERS
EXACT = 1e-9
PARTS = ["compute", "communicate", "overlap", "empty"]


def check_folder(folder):
    out, _ = analyse(trace_dir(folder), processes=2 if folder == "trace_filter" else 1,
                     extra=hta_args(folder))
    got = table(out, "/comm_comp_overlap").set_index("rank")
    want = expected(folder, "comm_comp_overlap.csv").set_index("rank")
    assert list(got.index) == list(want.index), f"{folder}: ranks {list(got.index)}"
    _, p_abs = tolerances(folder)
    for rank in want.index:
        # An empty value in HTA's CSV is NaN: the rank has no communication.
        assert_close(got.loc[rank, "comp_comm_overlap_pctg"],
                     want.loc[rank, "comp_comm_overlap_pctg"], f"{folder} rank {rank}", p_abs)
    check_invariants(folder, out)


def wait_stretch_us(path):
    """How much further than its GPU work a trace's GPU events reach,
    counting its cuda_sync records (host waits) as HTA does, in us."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    gpu = [(e.get("cat") == "cuda_sync", e["ts"], e["ts"] + e["dur"]) for e in events
           if e.get("ph") == "X" and isinstance(e.get("args", {}).get("stream"), (int, float))
           and isinstance(e.get("ts"), (int, float)) and isinstance(e.get("dur"), (int, float))]
    work = [(s, e) for wait, s, e in gpu if not wait]
    if not work:
        return 0.0
    return ((max(e for _, _, e in gpu) - min(s for _, s, _ in gpu)) -
            (max(e for _, e in work) - min(s for s, _ in work)))


def clipped_us(notes):
    """The time cut off records that ran past the next on their stream, as
    /ranks.input_notes gives it; 0 when none were."""
    m = re.search(r"ran past the next on their stream: clipped at its start, ([0-9.]+) us", notes)
    return float(m[1]) if m else 0.0


def check_invariants(folder, out):
    """The four parts tile the span of the GPU work, which is the temporal
    breakdown's kernel time (HTA's span, host waits included) less how far
    the waits stretch it (within a microsecond of HTA's rounding where they
    do); Compute + Overlap is its compute time; Overlap over Communicate +
    Overlap is the comm/comp overlap."""
    parts = table(out, "/overlap_breakdown").set_index("rank")
    temporal = table(out, "/temporal_breakdown").set_index("rank")
    overlap = table(out, "/comm_comp_overlap").set_index("rank")
    files = table(out, "/ranks").set_index("rank")["file"]
    notes = table(out, "/ranks").set_index("rank")["input_notes"]
    assert list(parts.index) == list(temporal.index), folder
    for rank, p in parts.iterrows():
        what = f"{folder} rank {rank}"
        stretch = wait_stretch_us(files[rank])
        span = temporal.loc[rank, "kernel_time_us"] - stretch
        assert_close(sum(p[f"{x}_us"] for x in PARTS), span, f"{what} parts sum to span",
                     1.0 if stretch else EXACT)
        span = sum(p[f"{x}_us"] for x in PARTS)
        assert all(p[f"{x}_us"] >= 0 for x in PARTS), f"{what}: {p}"
        assert_close(sum(p[f"{x}_ratio"] for x in PARTS), 1.0, f"{what} ratios sum to 1", EXACT)
        assert_close(p.compute_ratio, p.compute_us / span, f"{what} compute ratio", EXACT)
        # Work running past the next record on its stream is clipped here,
        # not in HTA's temporal breakdown: the compute time can shrink by
        # at most the time /ranks.input_notes says was cut off.
        cut = clipped_us(notes[rank])
        assert -EXACT <= temporal.loc[rank, "compute_time_us"] - (p.compute_us + p.overlap_us) \
            <= cut + EXACT, (f"{what} compute + overlap", p.compute_us + p.overlap_us,
                             temporal.loc[rank, "compute_time_us"], cut)
        comm = p.communicate_us + p.overlap_us
        pctg = 100 * p.overlap_us / comm if comm > 0 else float("nan")
        # Within the rounding to 2 decimals.
        assert_close(overlap.loc[rank, "comp_comm_overlap_pctg"], pctg, f"{what} overlap pctg",
                     0.005 + EXACT)


def make_test(folder):
    def test():
        check_folder(folder)
    test.__name__ = f"test_overlap_{folder}"
    return test


def built_trace_dir():
    """Rank 0, in us, on three streams (one fractional start to check that
    nanoseconds survive):
        stream 7: gemm [1000, 1100), relu [1300, 1350)           COMPUTATION
        stream 8: AllReduce [1050.25, 1350.25)                    COMMUNICATION
        stream 9: Memcpy [1400, 1430), Context Sync [1430, 1450)  MEMORY, OTHER
    Compute only [1000, 1050.25) = 50.25; Overlap [1050.25, 1100) and
    [1300, 1350) = 99.75; Communicate only [1100, 1300) and [1350, 1350.25)
    = 200.25; Empty [1350.25, 1450) = 99.75 (copies and syncs are neither);
    span 450; comm/comp overlap 99.75 / 300 = 33.25%.
    Rank 1: computation only, two overlapping kernels [0, 10) and [5, 20)
    on two streams and a Memset [30, 40): Compute 20, Empty 20, and no
    communication, so the comm/comp overlap is NaN."""
    return write_ranks({
        0: [gpu_kernel("gemm", 1000, 100, 7), gpu_kernel("relu", 1300, 50, 7),
            gpu_kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 1050.25, 300, 8),
            gpu_kernel("Memcpy HtoD (Pageable -> Device)", 1400, 30, 9),
            gpu_kernel("Context Sync", 1430, 20, NO_STREAM)],
        1: [gpu_kernel("gemm", 0, 10, 7), gpu_kernel("gemm", 5, 15, 8),
            gpu_kernel("Memset (Device)", 30, 10, 7)],
    })


def test_known_answers():
    out, _ = analyse(built_trace_dir(), processes=2)
    got = table(out, "/overlap_breakdown").set_index("rank")
    want = {0: (50.25, 200.25, 99.75, 99.75, 450.0), 1: (20.0, 0.0, 0.0, 20.0, 40.0)}
    assert list(got.index) == [0, 1], got
    for rank, (*parts, span) in want.items():
        for name, value in zip(PARTS, parts):
            assert_close(got.loc[rank, f"{name}_us"], value, f"rank {rank} {name}_us", EXACT)
            assert_close(got.loc[rank, f"{name}_ratio"], value / span, f"rank {rank} {name}_ratio",
                         EXACT)
    overlap = table(out, "/comm_comp_overlap").set_index("rank")
    assert_close(overlap.loc[0, "comp_comm_overlap_pctg"], 33.25, "rank 0 overlap pctg", EXACT)
    assert math.isnan(overlap.loc[1, "comp_comm_overlap_pctg"]), overlap
    check_invariants("built", out)


def test_metrics_for_outlier_search():
    # The unrounded share and every part reach the cross-rank outlier search.
    out, _ = analyse(built_trace_dir())
    metrics = table(out, "/rank_metrics")
    rank0 = metrics[metrics["rank"] == 0].set_index("metric")["value"]
    assert_close(rank0["comp_comm_overlap_pctg"], 33.25, "overlap metric", EXACT)
    assert_close(rank0["communicate_us"], 200.25, "communicate_us metric", EXACT)
    assert_close(rank0["empty_ratio"], 99.75 / 450, "empty_ratio metric", EXACT)
    rank1 = metrics[metrics["rank"] == 1].set_index("metric")["value"]
    assert math.isnan(rank1["comp_comm_overlap_pctg"]), rank1


if __name__ == "__main__":
    main([make_test(f) for f in FOLDERS] + [test_known_answers, test_metrics_for_outlier_search])
