"""Cross-rank analysis: /collective_wait, /stragglers, /cross_rank/kernels,
the "straggler" rows of /outliers and the stdout summary.

Answers known by construction:
- hta-tracegen's timing model (tools/tracegen_ddp.c): every rank runs 3 NCCL
  all-reduces per step on stream 20; with --straggler 5:1.3 rank 5 starts
  every NCCL kernel last, the n-th NCCL kernel ends at the same time on all
  ranks, so rank q waits exactly (its NCCL duration - rank 5's) at each
  collective, about 0.3 x its compute time in total;
- a hand-built three-rank trace with unequal collective counts, a stream
  only one rank uses, a tie and a clock-condition violation;
- the real trace_filter pair, whose SendRecv kernels were launched by
  collectives: matched by stream, against tests/multirank_truth.py's own
  matcher on the raw JSON.
"""
import subprocess

import numpy as np
import pandas as pd

from common import (TRACEGEN, analyse, assert_close, main, table, tmpdir, trace_dir)
from handbuilt import gpu_kernel, write_ranks
from multirank_truth import folder_truth

EXACT = 1e-9
NCCL = "ncclDevKernel_AllReduce"


def generated(ranks=16, straggler=None, size_mb=0.3):
    d = tmpdir()
    args = [TRACEGEN, "-o", d, "--ranks", str(ranks), "--size-mb", str(size_mb), "--gzip"]
    if straggler is not None:
        args += ["--straggler", f"{straggler}:1.3"]
    subprocess.run(args, check=True)
    return d


def nccl_sums(out):
    k = table(out, "/kernels")
    return k[k.name.str.startswith(NCCL)].set_index("rank")[["count", "sum_us"]]


def summary_section(stdout, title):
    """The lines of the stdout summary from the line starting with title to
    the next blank line."""
    lines = stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(title))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


# ---- 16 ranks, rank 5 computes 30% slower --------------------------------

def test_rank_5_arrives_last_everywhere_and_the_others_wait_for_it():
    out, p = analyse(generated(straggler=5), processes=2)
    cw = table(out, "/collective_wait").set_index("rank")
    nccl = nccl_sums(out)
    assert list(cw.index) == list(range(16)), cw
    n = nccl.loc[5, "count"]
    assert n >= 6 and (nccl["count"] == n).all(), nccl
    assert (cw.collectives == n).all() and (cw.matched == n).all(), cw
    assert (cw.unmatched == 0).all() and (cw.missing == 0).all(), cw
    assert (cw.clock_violations == 0).all() and (cw.max_end_skew_us == 0).all(), cw
    assert (abs(cw.fair_share - 1 / 16) < EXACT).all(), cw
    assert cw.loc[5, "arrived_last"] == n and cw.loc[5, "arrived_last_share"] == 1.0, cw.loc[5]
    assert cw.loc[5, "total_wait_us"] == 0 and cw.loc[5, "mean_wait_us"] == 0, cw.loc[5]
    compute = table(out, "/temporal_breakdown").set_index("rank")["compute_time_us"]
    for q in cw.index.drop(5):
        r = cw.loc[q]
        assert r.arrived_last == 0 and r.arrived_last_share == 0, r
        # Every NCCL kernel of q ends with rank 5's, which starts last and
        # never waits: q's wait is the difference of their durations.
        want = nccl.loc[q, "sum_us"] - nccl.loc[5, "sum_us"]
        assert r.total_wait_us > 0, r
        assert_close(r.total_wait_us, want, f"rank {q} total wait", EXACT)
        assert_close(r.mean_wait_us, want / n, f"rank {q} mean wait", EXACT)
        # ~ (1.3 - 1) x compute (which also holds the small kernels that
        # overlap the all-reduces, and jitter of +-0.5%).
        assert 0.27 < r.total_wait_us / compute[q] < 0.31, (q, r.total_wait_us, compute[q])


def test_rank_5_is_the_top_and_only_straggler():
    out, p = analyse(generated(straggler=5), processes=3)
    st = table(out, "/stragglers")
    assert sorted(st["rank"]) == list(range(16)), st
    assert list(st.score) == sorted(st.score, reverse=True), st
    top = st.iloc[0]
    assert top["rank"] == 5 and top.flagged == 1, st
    assert list(st[st.flagged == 1]["rank"]) == [5], st
    assert top.arrived_last_share == 1.0 and abs(top.fair_share - 1 / 16) < EXACT, top
    tb = table(out, "/temporal_breakdown").set_index("rank")["compute_time_us"]
    assert_close(top.compute_ratio, tb.min() / tb[5], "rank 5 fastest/this", EXACT)
    assert 0.75 < top.compute_ratio < 0.79, top
    assert top.compute_robust_z > 3.5 and top.compute_z > 3, top
    # The verdict follows the wait rank 5 causes: it arrives last at every
    # collective, so all the waiting is for it (docs/crossrank.md).
    cw = table(out, "/collective_wait").set_index("rank")
    assert_close(top.caused_wait_us, cw.total_wait_us.sum(), "rank 5 caused wait", 1e-6)
    assert_close(top.score, 1.0, "rank 5 share of the wait", EXACT)
    # --straggler runs the same kernels slower: its GEMM rate says a slower
    # GPU rather than more work (docs/crossrank.md).
    assert top.cause == "slower GPU", top
    assert top.reasons.startswith("the others wait for it"), top.reasons
    assert "slower kernels" in top.reasons, top.reasons
    assert (st.score[1:] == 0).all() and (st.caused_wait_us[1:] == 0).all(), st
    outliers = table(out, "/outliers")
    late = outliers[outliers.classification == "straggler"]
    assert list(late["rank"]) == [5] and list(late.metric) == ["arrived_last_share"], late
    assert late.iloc[0].value == 1.0, late
    # The summary names the straggler with its reasons.
    lines = summary_section(p.stdout, "Stragglers")
    assert lines[0].startswith("Stragglers (1,") and lines[1].startswith("  rank 5, score"), lines


def test_summary_lists_outliers_by_rank_worst_first():
    out, p = analyse(generated(straggler=5), processes=2)
    lines = summary_section(p.stdout, "Outliers")
    assert len(lines) <= 20, lines
    assert lines[-1] == f"  see /outliers in {out}", lines
    outliers = table(out, "/outliers")
    rows = lines[2:-1]
    ranks = [int(l.split()[0]) for l in rows if not l.strip().startswith("...")]
    assert ranks[0] == 5, lines
    per_rank = outliers.groupby("rank").size()
    if len(per_rank) <= 15:
        assert sorted(ranks) == sorted(per_rank.index), (lines, per_rank)
    else:
        assert len(ranks) == 15 and lines[-2].startswith("  ... "), lines
    # Rows in descending order of the worst |z| or |robust z| of each rank.
    worst = outliers.assign(sev=np.fmax(outliers.z.abs().fillna(0), outliers.robust_z.abs().fillna(0)))
    sev = worst.groupby("rank").sev.max()
    assert list(sev[ranks]) == sorted(sev[ranks], reverse=True), (ranks, sev)
    for l in rows:
        rank, count = int(l.split()[0]), int(l.split()[1])
        assert count == per_rank[rank], (l, per_rank)
    five = worst[worst["rank"] == 5].sort_values("sev", ascending=False).iloc[0]
    assert rows[0].split()[2] == five.metric, (rows[0], five)


def robust_z(x, values):
    med = np.median(values)
    mad = np.median(np.abs(values - med))
    if mad > 0:
        return 0.6745 * (x - med) / mad
    mean_abs = np.mean(np.abs(values - med))
    return (x - med) / (1.2533 * mean_abs) if mean_abs > 0 else float("nan")


def test_cross_rank_kernels_match_a_pandas_reference():
    out, _ = analyse(generated(straggler=5), processes=2)
    kernels = table(out, "/kernels")
    got = table(out, "/cross_rank/kernels")
    assert list(got.name) == sorted(kernels.name.unique()), got.name
    for _, g in got.iterrows():
        k = kernels[kernels.name == g["name"]].sort_values("rank")
        means = k.mean_us.to_numpy()
        what = g["name"][:40]
        assert g.kernel_type == k.kernel_type.iloc[0] and g.n_ranks == len(k), what
        assert_close(g.mean_us, means.mean(), what, 0, 1e-12)
        assert_close(g.std_us, np.std(means, ddof=1), what, 1e-9, 1e-9)
        assert g.min_us == means.min() and g.min_rank == k["rank"].iloc[means.argmin()], what
        assert g.max_us == means.max() and g.max_rank == k["rank"].iloc[means.argmax()], what
        med = np.median(means)
        flagged = [str(r) for r, x in zip(k["rank"], means)
                   if abs(robust_z(x, means)) >= 3.5 and abs(x - med) >= 0.01 * abs(med)]
        assert g.outlier_ranks == ",".join(flagged), (what, g.outlier_ranks, flagged)
    # Rank 5's compute kernels are its slowest; its all-reduce the shortest
    # (it never waits).
    gemm = got[got.name.str.startswith("ampere_sgemm")]
    assert (gemm.max_rank == 5).all() and (gemm.outlier_ranks == "5").all(), gemm
    nccl = got[got.name.str.startswith(NCCL)].iloc[0]
    assert nccl.min_rank == 5 and nccl.n_ranks == 16, nccl


# ---- no straggler ---------------------------------------------------------

def test_without_a_straggler_nobody_is_flagged():
    out, p = analyse(generated(), processes=2)
    outliers = table(out, "/outliers")
    assert (outliers.classification != "straggler").all(), outliers
    st = table(out, "/stragglers")
    assert (st.flagged == 0).all(), st
    assert "\nStragglers: none.\n" in p.stdout, p.stdout
    cw = table(out, "/collective_wait").set_index("rank")
    compute = table(out, "/temporal_breakdown").set_index("rank")["compute_time_us"]
    assert (cw.arrived_last_share < 0.5).all(), cw
    assert (cw.total_wait_us / compute < 0.02).all(), cw
    # Every collective has at least one rank arriving last (whole-us
    # timestamps tie now and then: each tied rank counts).
    n = cw.matched.iloc[0]
    assert n <= cw.arrived_last.sum() <= 2 * n, cw


# ---- hand-built: mismatched counts, a lone stream, a tie, a violation -----

def nccl_kernel(ts, dur, stream=20):
    return gpu_kernel("ncclKernel_AllReduce_RING_LL_Sum_float", ts, dur, stream=stream)


def handbuilt_dir():
    """Stream 20: three instances matched (rank 1 issues a fourth, unmatched);
    the third ends on rank 0 (520) before rank 2 starts it (530): a
    clock-condition violation.  Stream 21: rank 2 only.  Stream 22: all
    start together (a tie: nobody arrived last)."""
    gemm = lambda: gpu_kernel("gemm", 0, 50)
    return write_ranks({
        0: [gemm(), nccl_kernel(100, 50), nccl_kernel(300, 50), nccl_kernel(500, 20),
            nccl_kernel(1000, 10, stream=22)],
        1: [gemm(), nccl_kernel(110, 40), nccl_kernel(320, 30), nccl_kernel(505, 45),
            nccl_kernel(700, 10), nccl_kernel(1000, 10, stream=22)],
        2: [gemm(), nccl_kernel(90, 60), nccl_kernel(290, 60), nccl_kernel(530, 20),
            nccl_kernel(800, 10, stream=21), nccl_kernel(1000, 10, stream=22)],
    })


def test_handbuilt_matching_by_stream_and_order():
    out, p = analyse(handbuilt_dir(), processes=2)
    cw = table(out, "/collective_wait").set_index("rank")
    want = {  # collectives, matched, unmatched, missing, wait, last, fair, skew, violations
        0: (4, 4, 0, 1, 60, 0, 1 / 4, 0, 1),
        1: (5, 4, 1, 1, 25, 2, 1 / 4, 30, 0),
        2: (5, 5, 0, 0, 50, 1, 1 / 5, 30, 0),
    }
    cols = ["collectives", "matched", "unmatched", "missing", "total_wait_us", "arrived_last",
            "fair_share", "max_end_skew_us", "clock_violations"]
    for rank, values in want.items():
        for c, v in zip(cols, values):
            assert_close(cw.loc[rank, c], v, f"rank {rank} {c}", EXACT)
        assert_close(cw.loc[rank, "mean_wait_us"], values[4] / values[1], f"rank {rank}", EXACT)
        assert_close(cw.loc[rank, "arrived_last_share"], values[5] / values[1], f"{rank}", EXACT)
    assert "1 clock-condition violations on 1 of 3 ranks" in p.stdout, p.stdout
    assert "2 of 3 ranks issued collectives the others did not" in p.stdout, p.stdout
    assert (table(out, "/outliers").classification != "straggler").all()


# ---- the real pair --------------------------------------------------------

def test_trace_filter_sendrecv_launched_by_collectives():
    """Ranks 0 and 1 of a 128-rank job, whose only NCCL kernels are
    SendRecv without metadata, launched by c10d::alltoall_base_,
    c10d::allreduce_ and c10d::_allgather_base_: collectives, matched by
    stream order, with the waits, last arrivals and clock-condition
    violations the tests' own matcher finds in the raw JSON (these two
    sampled ranks' all-to-alls do not line up: the summary says the clocks
    or the matching cannot be trusted)."""
    folder = trace_dir("trace_filter")
    figures, _ = folder_truth(folder)
    out, p = analyse(folder, processes=2)
    cw = table(out, "/collective_wait").set_index("rank")
    for r, f in figures.items():
        assert cw.loc[r, "matched"] == f["matched"] > 0, (r, cw, f)
        assert cw.loc[r, "arrived_last"] == f["arrived_last"], (r, cw, f)
        assert cw.loc[r, "clock_violations"] == f["violations"], (r, cw, f)
        assert_close(cw.loc[r, "total_wait_us"], f["wait"], f"rank {r} wait", abs_tol=1e-6)
        assert_close(cw.loc[r, "caused_wait_us"], f["caused"], f"rank {r} caused", abs_tol=1e-6)
    violations = sum(f["violations"] for f in figures.values())
    assert violations > 0, figures
    assert f"Collectives: {violations} clock-condition violations" in p.stdout, p.stdout
    assert "no known peer" not in p.stdout, p.stdout
    assert "Results:" in p.stdout


# ---- process count --------------------------------------------------------

CROSS_RANK = ["/collective_wait", "/stragglers", "/cross_rank/kernels", "/outliers"]


def test_identical_results_for_1_2_3_processes():
    d = generated(ranks=7, straggler=3)
    base = None
    for n in (1, 2, 3):
        out, _ = analyse(d, processes=n)
        tables = {name: table(out, name) for name in CROSS_RANK}
        if base is None:
            base = tables
            assert (base["/stragglers"].iloc[0]["rank"], base["/stragglers"].iloc[0].flagged) == (3, 1)
            continue
        for name in CROSS_RANK:
            pd.testing.assert_frame_equal(tables[name], base[name], check_exact=True,
                                          obj=f"{name} with {n} processes")


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
