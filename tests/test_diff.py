"""hta-mpi diff: two runs with known changes, every change found with its
figures and nothing else classified as changed; collectives compared by
construction; real traces diffed against each other; bad inputs refused
with one line; the Python loader and the comparison page.

Known by construction (hta-tracegen's timing model, tools/tracegen_ddp.c), 12
ranks, NEW against BASE:
- --kernel-factor ampere_sgemm_128x64_tn:1.2: that kernel's weight, hence
  its duration, x1.2 on every rank (weights are integers of 190-230, so
  within 0.3%); the other kernels' shares of their phase are unchanged;
- --rename-kernel: the log-softmax forward kernel runs under a new name,
  so one kernel vanished and one is new, with the same counts;
- --straggler 5:1.3: every compute-phase GPU item of rank 5 (kernels and
  the memset) x1.3; rank 5 arrives last at every all-reduce, so the other
  ranks' NCCL kernels last longer by their wait, about 0.3 x their
  compute phases: the collective got slower;
- over all ranks, rank 5's 30% is 2.5% of every other kernel's total:
  within the default 5%, unchanged.
"""
import math
import os
import shutil
import subprocess
import sys

import h5py
import matplotlib.image
import numpy as np

from common import (HTA_MPI, Skip, analyse, assert_close, generated, main, table, tmpdir,
                    trace_dir)

SLOW = "ampere_sgemm_128x64_tn"
RENAMED = "cunn_SoftMaxForward"
NEW_NAME = "void fused_log_softmax_v2(float*, float const*, int)"
NCCL = "ncclDevKernel_AllReduce"
RANKS, STRAGGLER = 12, 5
PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
REPORT = os.path.join(PYTHON_DIR, "hta-mpi-report")
sys.path.insert(0, PYTHON_DIR)
from hta_mpi import results  # noqa: E402


def diff(base, new, extra=(), expect=0, out=None):
    out = out or os.path.join(tmpdir(), "diff.h5")
    cmd = [HTA_MPI, "diff", "-o", out] + list(extra) + [base, new]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == expect, (cmd, p.returncode, p.stdout, p.stderr)
    return out, p


def kernels(path):
    return table(path, "/kernels")


# The two generated runs, their results, their diff and the kernel names
# the generator gave, made by setup().
BASE_DIR = NEW_DIR = BASE = NEW = DIFF = DIFF_RUN = OLD_NAME = NCCL_NAME = None


def setup():
    global BASE_DIR, NEW_DIR, BASE, NEW, DIFF, DIFF_RUN, OLD_NAME, NCCL_NAME
    BASE_DIR = generated(RANKS)
    NEW_DIR = generated(RANKS, straggler=STRAGGLER,
                        extra=["--kernel-factor", f"{SLOW}:1.2",
                               "--rename-kernel", f"{RENAMED}={NEW_NAME}"])
    BASE, _ = analyse(BASE_DIR, processes=2)
    NEW, _ = analyse(NEW_DIR, processes=2)
    DIFF, DIFF_RUN = diff(BASE, NEW)
    OLD_NAME = next(n for n in kernels(BASE).name if RENAMED in n)
    NCCL_NAME = next(n for n in kernels(BASE).name if n.startswith(NCCL))


def expected_class(b, n, present_b, present_n, min_change=0.05):
    if not present_b:
        return "added"
    if not present_n:
        return "removed"
    if b == n or abs(n - b) / abs(b) <= min_change:
        return "unchanged"
    return "slower" if n > b else "faster"


def assert_kernel_figures(d, kb, kn):
    """d: diff rows of one scope, indexed by name; kb, kn: each run's
    figures by name (count, sum_us, max_us)."""
    for name, r in d.iterrows():
        in_b, in_n = name in kb.index, name in kn.index
        b = kb.loc[name] if in_b else None
        n = kn.loc[name] if in_n else None
        assert r.base_count == (b["count"] if in_b else 0), (name, r)
        assert r.new_count == (n["count"] if in_n else 0), (name, r)
        assert_close(r.base_total_us, b["sum_us"] if in_b else 0, f"{name} base", rel_tol=1e-12)
        assert_close(r.new_total_us, n["sum_us"] if in_n else 0, f"{name} new", rel_tol=1e-12)
        assert_close(r.change_us, r.new_total_us - r.base_total_us, f"{name} change", 1e-9)
        if in_b and in_n:
            assert_close(r.rel_change, r.new_total_us / r.base_total_us - 1, name, 1e-12)
            assert_close(r.base_mean_us, b["sum_us"] / b["count"], name, rel_tol=1e-12)
            assert_close(r.new_max_us, n["max_us"], name)
        assert r["class"] == expected_class(r.base_total_us, r.new_total_us, in_b, in_n), r


def test_every_kernel_change_over_all_ranks_and_nothing_else():
    d = table(DIFF, "/diff/kernels")
    everywhere = d[d["rank"] == -1].set_index("name")
    kb = kernels(BASE).groupby("name").agg({"count": "sum", "sum_us": "sum", "max_us": "max"})
    kn = kernels(NEW).groupby("name").agg({"count": "sum", "sum_us": "sum", "max_us": "max"})
    assert set(everywhere.index) == set(kb.index) | set(kn.index), everywhere.index
    changed = everywhere[everywhere["class"] != "unchanged"]["class"].to_dict()
    assert changed == {SLOW: "slower", NCCL_NAME: "slower", OLD_NAME: "removed",
                       NEW_NAME: "added"}, changed
    assert_kernel_figures(everywhere, kb, kn)
    # 11 ranks x1.2 and rank 5 x1.2 x1.3, over 12 equal ranks: +23%.
    assert abs(everywhere.loc[SLOW, "rel_change"] - 0.23) < 0.005, everywhere.loc[SLOW]
    assert everywhere.loc[NEW_NAME, "new_count"] == everywhere.loc[OLD_NAME, "base_count"]
    # Largest change first, the all-ranks rows before every rank's.
    assert list(d["rank"]) == sorted(d["rank"]), "rows not by rank"
    changes = everywhere["change_us"].abs().to_numpy()
    assert (changes[:-1] >= changes[1:]).all(), changes


def test_every_kernel_change_per_rank():
    d = table(DIFF, "/diff/kernels")
    kb, kn = kernels(BASE), kernels(NEW)
    compute = table(NEW, "/temporal_breakdown").set_index("rank")["compute_time_us"]
    assert sorted(set(d["rank"])) == [-1] + list(range(RANKS))
    for rank in range(RANKS):
        rows = d[d["rank"] == rank].set_index("name")
        assert_kernel_figures(rows, kb[kb["rank"] == rank].set_index("name"),
                              kn[kn["rank"] == rank].set_index("name"))
        changed = rows[rows["class"] != "unchanged"]["class"].to_dict()
        want = {SLOW: "slower", OLD_NAME: "removed", NEW_NAME: "added"}
        if rank == STRAGGLER:
            # Every compute-phase item of rank 5 runs 1.3x as long; its
            # all-reduces no longer wait (they did by up to 1% jitter).
            slowed = rows[~rows.index.str.startswith(("Memcpy", NCCL)) &
                          ~rows.index.isin([OLD_NAME, NEW_NAME])]
            want.update({name: "slower" for name in slowed.index})
            assert abs(rows.loc[SLOW, "rel_change"] - (1.2 * 1.3 - 1)) < 0.01, rows.loc[SLOW]
            phase_kernels = slowed[slowed.index.str.contains("sgemm_128x64_nn|cutlass")]
            assert ((phase_kernels["rel_change"] - 0.3).abs() < 0.01).all(), phase_kernels
        else:
            want[NCCL_NAME] = "slower"
            assert abs(rows.loc[SLOW, "rel_change"] - 0.2) < 0.005, (rank, rows.loc[SLOW])
            # The longer all-reduce is the wait for rank 5: ~0.3 x compute.
            ratio = rows.loc[NCCL_NAME, "change_us"] / compute[rank]
            assert 0.26 < ratio < 0.31, (rank, ratio)
        assert changed == want, (rank, changed, want)


def test_kernel_set_names_each_changed_name_with_its_figures():
    s = table(DIFF, "/diff/kernel_set")
    got = sorted(zip(s["rank"], s["name"], s["run"]))
    want = sorted([(r, OLD_NAME, "base") for r in [-1] + list(range(RANKS))] +
                  [(r, NEW_NAME, "new") for r in [-1] + list(range(RANKS))])
    assert got == want, got
    kb, kn = kernels(BASE), kernels(NEW)
    for r in s.itertuples(index=False):
        src = kb if r.run == "base" else kn
        rows = src[src.name == r.name] if r.rank == -1 else src[(src.name == r.name) &
                                                               (src["rank"] == r.rank)]
        assert r.count == rows["count"].sum() and r.count > 0, r
        assert_close(r.total_us, rows["sum_us"].sum(), str(r), rel_tol=1e-12)
        assert_close(r.mean_us, rows["sum_us"].sum() / rows["count"].sum(), str(r), rel_tol=1e-12)


def test_rank_metrics_side_by_side():
    m = table(DIFF, "/diff/rank_metrics").set_index(["rank", "metric"])
    rb = table(BASE, "/rank_metrics").set_index(["rank", "metric"])["value"]
    rn = table(NEW, "/rank_metrics").set_index(["rank", "metric"])["value"]
    assert set(m.index) == set(rb.index) | set(rn.index)
    assert (m["status"] == "both").all(), m[m["status"] != "both"]
    assert np.array_equal(m["base"].to_numpy(), rb.reindex(m.index).to_numpy(), equal_nan=True)
    assert np.array_equal(m["new"].to_numpy(), rn.reindex(m.index).to_numpy(), equal_nan=True)
    assert np.allclose(m["change"], m["new"] - m["base"], equal_nan=True)
    groups = m.reset_index().drop_duplicates("metric").set_index("metric")["group"]
    assert groups["compute_time_us"] == "temporal" and groups["idle_time_pctg"] == "temporal"
    assert groups["compute_us"] == "overlap" and groups["empty_ratio"] == "overlap"
    assert groups["idle_host_wait_us"] == "idle" and groups["launch_delay_p50_us"] == "other"
    compute = m.xs("compute_time_us", level="metric")["rel_change"]
    # The slower sgemm adds ~7% of compute everywhere; rank 5 x1.3 on top.
    assert compute.idxmax() == STRAGGLER and 0.3 < compute[STRAGGLER] < 0.45, compute
    assert ((compute.drop(STRAGGLER) > 0.05) & (compute.drop(STRAGGLER) < 0.09)).all(), compute


def test_ranks_present_in_one_run_only():
    fewer, _ = analyse(NEW_DIR, processes=1, extra=["--ranks", f"0-{RANKS - 3}"])
    out, p = diff(BASE, fewer)
    m = table(out, "/diff/rank_metrics")
    lone = m[m["rank"] >= RANKS - 2]
    assert len(lone) and (lone["status"] == "rank_only_in_base").all(), lone
    assert lone["new"].isna().all() and (m[m["rank"] < RANKS - 2]["status"] == "both").all()
    k = table(out, "/diff/kernels")
    assert set(k["rank"]) == {-1} | set(range(RANKS - 2)), set(k["rank"])
    assert f"Ranks only in BASE: {RANKS - 2} {RANKS - 1}" in p.stdout, p.stdout
    # The reverse: the ranks are new.
    out, p = diff(fewer, BASE)
    m = table(out, "/diff/rank_metrics")
    assert (m[m["rank"] >= RANKS - 2]["status"] == "rank_only_in_new").all()
    assert f"Ranks only in NEW: {RANKS - 2} {RANKS - 1}" in p.stdout, p.stdout


def test_tails_are_ratios_of_the_activity_categories():
    t = table(DIFF, "/diff/tails").set_index(["rank", "category"])
    ab = table(BASE, "/activity_categories").set_index(["rank", "category"])
    an = table(NEW, "/activity_categories").set_index(["rank", "category"])
    assert set(t.index) == set(ab.index) | set(an.index)
    for col in ["total_us"] + [f"top{p}_{k}" for p in (1, 5, 10) for k in ("mean_us", "share")]:
        base, new = ab[col].reindex(t.index), an[col].reindex(t.index)
        assert np.array_equal(t[f"base_{col}"], base, equal_nan=True), col
        assert np.array_equal(t[f"new_{col}"], new, equal_nan=True), col
        ratio_col = col.replace("_us", "") + "_ratio"
        want = np.where(base != 0, new / base.where(base != 0), np.nan)
        assert np.allclose(t[ratio_col], want, equal_nan=True, rtol=1e-12), ratio_col
    assert (t["base_count"] == ab["count"].reindex(t.index)).all()
    # Every rank's longest kernels grew by more than the whole category:
    # rank 5's compute (x1.3, the sgemm x1.2 more), the other ranks'
    # all-reduces, which now wait for rank 5 and became their longest.
    kernel = t.xs("kernel", level="category")
    assert (kernel["top5_mean_ratio"] > 1.4).all() and (kernel["total_ratio"] > 1.3).all(), kernel
    nccl = table(NEW, "/kernels")
    nccl_max = nccl[nccl.name == NCCL_NAME].set_index("rank")["max_us"]
    top = kernel["new_top5_mean_us"]
    assert (top.drop(STRAGGLER) <= nccl_max.drop(STRAGGLER)).all() and \
        top[STRAGGLER] > nccl_max[STRAGGLER], (top, nccl_max)


def test_stdout_summary():
    out = DIFF_RUN.stdout
    lines = out.splitlines()
    assert "Kernels over all ranks: 2 slower, 0 faster, 1 added, 1 removed" in out, out
    start = lines.index("Top regressions (all ranks, total time):")
    regressions = lines[start + 2:start + 4]
    assert NCCL_NAME[:60] in regressions[0] and regressions[1].endswith(SLOW), regressions
    assert "+23.0%" in regressions[1], regressions
    assert lines[lines.index("Top improvements (all ranks, total time):") + 1].strip() == "none"
    new_at = lines.index("New kernels (only in NEW): 1")
    assert lines[new_at + 2].endswith(NEW_NAME), lines[new_at + 2]
    gone_at = lines.index("Vanished kernels (only in BASE): 1")
    assert OLD_NAME[:80] in lines[gone_at + 2] and lines[gone_at + 2].endswith("..."), out
    ranks_at = next(i for i, l in enumerate(lines) if l.startswith("Ranks whose compute"))
    assert lines[ranks_at + 2].split()[0] == str(STRAGGLER), lines[ranks_at:ranks_at + 4]
    assert f"Diff written to {DIFF}" in out


def test_file_attributes_name_both_runs():
    a = results.attributes(DIFF)
    assert a["file_kind"] == "diff" and a["schema_version"] == 5 and a["min_change"] == 0.05
    for side, path in (("base", BASE), ("new", NEW)):
        assert a[f"{side}_path"] == path, a
        assert a[f"{side}_command_line"] == results.attributes(path)["command_line"], a
        assert a[f"{side}_schema_version"] == 5
    assert a["command_line"].startswith("hta-mpi diff -o "), a["command_line"]


def test_min_change_and_top():
    out, p = diff(BASE, NEW, extra=["--min-change", "1%", "--top", "1"])
    d = table(out, "/diff/kernels")
    everywhere = d[d["rank"] == -1].set_index("name")
    # At 1% the other kernels' 2.5% (rank 5's share) counts as slower; the
    # copies did not change.
    others = everywhere.drop([OLD_NAME, NEW_NAME])
    copies = others.index.str.startswith("Memcpy")
    assert (others[~copies]["class"] == "slower").all(), others
    assert (others[copies]["class"] == "unchanged").all() and copies.sum() == 2, others
    lines = p.stdout.splitlines()
    start = lines.index("Top regressions (all ranks, total time):")
    assert lines[start + 3] == "", lines[start:start + 4]     # one row only
    out2, _ = diff(BASE, NEW, extra=["--min-change", "0.01", "-q"])
    assert np.array_equal(table(out2, "/diff/kernels")["class"], d["class"])


def with_summary(path, rows):
    """A copy of results file path with /collective_summary holding rows
    (only them: the generated runs have a summary of their own), or none
    when rows is None."""
    out = os.path.join(tmpdir(), os.path.basename(path))
    shutil.copy(path, out)
    dtype = [("group_desc", h5py.string_dtype()), ("collective", h5py.string_dtype()),
             ("dtype", h5py.string_dtype()), ("bucket_max_bytes", "<i8"), ("count", "<i8"),
             ("total_bytes", "<i8")] + [(c, "<f8") for c in SUMMARY_FLOATS]
    with h5py.File(out, "r+") as f:
        if "collective_summary" in f:
            del f["collective_summary"]
        if rows is not None:
            f.create_dataset("collective_summary", data=np.array(rows, dtype=dtype))
    return out


SUMMARY_FLOATS = ["transfer_p50_us", "transfer_p90_us", "transfer_max_us", "busbw_p50_gbps",
                  "busbw_min_gbps", "mean_arrival_skew_us", "total_wait_us"]


def test_collectives_by_construction():
    allreduce = ("default_pg", "allreduce", "Float", 1 << 26)
    allgather = ("tp_group", "allgather", "BFloat16", 1 << 20)
    base = with_summary(BASE, [
        allreduce + (36, 36 << 26, 600.0, 650.0, 700.0, 180.0, 150.0, 4.0, 100.0),
        allgather + (10, 10 << 20, 20.0, 22.0, 30.0, 90.0, 80.0, 1.0, 0.0),
        ("default_pg", "broadcast", "Float", 1 << 12, 3, 3 << 12, 5.0, 5.0, 5.0, 1.0, 1.0,
         0.0, 0.0)])
    new = with_summary(NEW, [
        allreduce + (36, 36 << 26, 900.0, 975.0, 1050.0, 120.0, 100.0, 8.0, 5000.0),
        allgather + (10, 10 << 20, 20.0, 22.0, 30.0, 90.0, 80.0, 1.0, 0.0),
        ("default_pg", "reduce_scatter", "Float", 1 << 20, 4, 4 << 20, 7.0, 7.0, 7.0, 2.0,
         2.0, 0.0, 0.0)])
    out, p = diff(base, new)
    lines = p.stdout.splitlines()
    at = lines.index("Collectives whose median transfer time changed (beyond 5%): 1")
    assert lines[at + 2].split() == ["1.500x", "0.667x", "default_pg", "allreduce", "Float",
                                     str(1 << 26)], lines[at:at + 3]
    c = table(out, "/diff/collectives").set_index(["group_desc", "collective", "dtype",
                                                   "bucket_max_bytes"])
    assert c.loc[allreduce, "status"] == "both" and c.loc[allgather, "status"] == "both"
    assert c.loc[("default_pg", "broadcast", "Float", 1 << 12), "status"] == "only_in_base"
    assert c.loc[("default_pg", "reduce_scatter", "Float", 1 << 20), "status"] == "only_in_new"
    assert len(c) == 4
    r = c.loc[allreduce]
    assert r.base_count == 36 and r.new_count == 36 and r.count_ratio == 1.0
    assert r.transfer_p50_us_ratio == 1.5 and r.transfer_max_us_ratio == 1.5, r
    assert r.busbw_p50_gbps_ratio == 120.0 / 180.0 and r.new_busbw_min_gbps == 100.0, r
    assert r.total_wait_us_ratio == 50.0 and r.mean_arrival_skew_us_ratio == 2.0, r
    g = c.loc[allgather]
    assert all(g[f"{x}_ratio"] == 1.0 for x in SUMMARY_FLOATS[:-1]) and \
        math.isnan(g.total_wait_us_ratio), g      # 0 -> 0: no ratio
    only = c.loc[("default_pg", "reduce_scatter", "Float", 1 << 20)]
    assert only.base_count == 0 and math.isnan(only.base_busbw_p50_gbps) and \
        only.new_busbw_p50_gbps == 2.0, only
    # Only when both runs have the summary.
    out, p = diff(base, with_summary(NEW, None))
    assert "diff/collectives" not in results.tables(out), results.tables(out)
    assert "Collectives" not in p.stdout


REAL = ["alexnet", "amd_mi250", "nccl_data", "trace_filter", "triton"]


def test_real_traces_against_each_other():
    runs = {f: analyse(trace_dir(f))[0] for f in REAL}
    for a in REAL:
        for b in REAL:
            out, p = diff(runs[a], runs[b], extra=["-q"])
            assert p.stdout == "" and p.stderr == "", (a, b, p.stderr)
            d = table(out, "/diff/kernels")
            names_a, names_b = set(kernels(runs[a]).name), set(kernels(runs[b]).name)
            s = table(out, "/diff/kernel_set")
            s = s[s["rank"] == -1]
            assert set(s[s.run == "base"].name) == names_a - names_b, (a, b)
            assert set(s[s.run == "new"].name) == names_b - names_a, (a, b)
            everywhere = d[d["rank"] == -1]
            assert len(everywhere) == len(names_a | names_b), (a, b)
            if a == b:
                assert (d["class"] == "unchanged").all() and (d["change_us"] == 0).all(), a
                assert (table(out, "/diff/rank_metrics")["change"].fillna(0) == 0).all(), a
            else:
                # Different models: most kernels are added or removed.
                cls = everywhere.set_index("name")["class"]
                assert (cls[list(names_a - names_b)] == "removed").all(), (a, b)
                assert (cls[list(names_b - names_a)] == "added").all(), (a, b)
                assert len(names_a ^ names_b) > len(names_a & names_b), (a, b)


def refused(path, reason, other=None):
    """hta-mpi diff with path as BASE (and as NEW) exits 2 with one line on
    stderr naming the file and the reason."""
    for args in ([path, other or NEW], [other or BASE, path]):
        out = os.path.join(tmpdir(), "diff.h5")
        p = subprocess.run([HTA_MPI, "diff", "-o", out] + args, capture_output=True,
                           text=True, timeout=60)
        lines = p.stderr.splitlines()
        assert p.returncode == 2 and len(lines) == 1, (args, p.returncode, p.stderr)
        assert lines[0].startswith(f"hta-mpi diff: {path}: ") and reason in lines[0], lines
        assert not os.path.exists(out) and p.stdout == "", (args, p.stdout)


def copy_of(path, name="copy.h5"):
    out = os.path.join(tmpdir(), name)
    shutil.copy(path, out)
    return out


def test_bad_inputs():
    trace = os.path.join(BASE_DIR, "rank-0.json.gz")
    refused(trace, "not an HDF5 file")
    text = os.path.join(tmpdir(), "notes.h5")
    with open(text, "w") as f:
        f.write("not a results file\n")
    refused(text, "not an HDF5 file")
    truncated = copy_of(BASE)
    with open(truncated, "r+b") as f:
        f.truncate(os.path.getsize(BASE) // 2)
    refused(truncated, "damaged or truncated")
    future = copy_of(BASE)
    with h5py.File(future, "r+") as f:
        f.attrs["schema_version"] = 99
    refused(future, "results schema version 99, this hta-mpi reads versions 4 and 5")
    other = os.path.join(tmpdir(), "other.h5")
    with h5py.File(other, "w") as f:
        f["data"] = np.arange(3)
    refused(other, "not an hta-mpi results file (no schema_version attribute)")
    refused(DIFF, "an hta-mpi diff file, not a results file")
    # A table without a column the comparison needs, or of another type.
    for column, data in (("max_us", None), ("sum_us", "<i8")):
        broken = copy_of(BASE, f"no_{column}.h5")
        with h5py.File(broken, "r+") as f:
            k = f["kernels"][()]
            names = [n for n in k.dtype.names if data or n != column]
            dtype = [(n, data if n == column else k.dtype[n]) for n in names]
            del f["kernels"]
            f.create_dataset("kernels", data=np.array(
                [tuple(row[n] for n in names) for row in k], dtype=dtype))
        refused(broken, f"/kernels has no float column {column} "
                        "(not a results file of schema 5)")
    refused(os.path.join(tmpdir(), "missing.h5"), "cannot open: No such file or directory")


def test_previous_schema_version_is_read():
    old = copy_of(BASE, "old.h5")
    with h5py.File(old, "r+") as f:
        f.attrs["schema_version"] = 4
    out, p = diff(old, NEW)
    warning = [l for l in p.stderr.splitlines() if "schema version 4 and NEW 5" in l]
    assert len(warning) == 1 and len(p.stderr.splitlines()) == 1, p.stderr
    assert np.array_equal(table(out, "/diff/kernels")["class"],
                          table(DIFF, "/diff/kernels")["class"])
    assert results.attributes(out)["base_schema_version"] == 4


def test_different_options_are_named():
    other, _ = analyse(NEW_DIR, processes=1, extra=["--bins", "60", "--runtime-cutoff", "10",
                                                    "--gap-threshold", "500",
                                                    "--sequence-op", "aten::mm"])
    _, p = diff(BASE, other)
    lines = p.stderr.splitlines()
    warning = "hta-mpi diff: warning: BASE and NEW were analysed with different "
    assert lines == [warning + "--bins (30 and 60)",
                     warning + "--runtime-cutoff (50 and 10)",
                     warning + "--gap-threshold (1000 and 500)",
                     warning + "--sequence-op ('' and 'aten::mm')"], lines
    _, p = diff(BASE, NEW)
    assert p.stderr == "", p.stderr


def test_usage_errors():
    out = copy_of(BASE, "exists.h5")
    _, p = diff(BASE, NEW, out=out, expect=2)
    assert p.stderr == f"hta-mpi diff: {out}: already exists (use --force to overwrite)\n"
    diff(BASE, NEW, out=out, extra=["--force", "-q"])
    assert results.is_diff(out)
    for args in ([BASE], [BASE, NEW, NEW], ["--min-change", "x", BASE, NEW],
                 ["--top", "-1", BASE, NEW], ["--bogus", BASE, NEW]):
        p = subprocess.run([HTA_MPI, "diff"] + args, capture_output=True, text=True)
        assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, (args, p.stderr)
        assert p.stderr.startswith("hta-mpi diff: "), p.stderr
    p = subprocess.run([HTA_MPI, "diff", "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "Usage: hta-mpi diff" in p.stdout


def test_python_loader():
    d = results.load_diff(DIFF)
    assert sorted(d) == ["collectives", "kernel_set", "kernels", "rank_metrics", "tails"], sorted(d)
    for name, df in d.items():
        raw = table(DIFF, f"/diff/{name}")
        assert list(df.columns) == list(raw.columns) and len(df) == len(raw), name
    assert d["kernels"].loc[0, "name"] == NCCL_NAME       # decoded str, largest change first
    try:
        results.load_diff(BASE)
        raise AssertionError("a results file loaded as a diff")
    except ValueError as e:
        assert "not a diff file" in str(e)


def report(args):
    page = os.path.join(tmpdir(), "diff.html")
    env = dict(os.environ, HTA_MPI=HTA_MPI)
    p = subprocess.run([REPORT] + args + ["-o", page], capture_output=True, text=True,
                       timeout=300, env=env)
    assert p.returncode == 0 and p.stdout.strip() == page, (p.returncode, p.stdout, p.stderr)
    with open(page, encoding="utf-8") as f:
        return f.read()


def test_comparison_page():
    text = report(["--diff", DIFF])
    assert "<script" not in text and "http://" not in text and "https://" not in text
    assert "Kernels over all ranks: 2 slower, 0 faster, 1 added, 1 removed" in text
    for name in (SLOW, NEW_NAME):
        assert f'<td class="text">{name.replace("&", "&amp;")}</td>' in text, name
    assert "+23.0%" in text
    # Before/after heatmap cells: one per (rank, metric, run), with values.
    m = table(DIFF, "/diff/rank_metrics").set_index(["rank", "metric"])
    new5 = m.loc[(STRAGGLER, "compute_time_us"), "new"]
    assert f"rank {STRAGGLER}, compute, NEW: {new5:.1f} us" in text
    assert text.count("<title>rank ") == RANKS * 7 * 2, text.count("<title>rank ")
    # Two results files give the same page, through hta-mpi diff.
    two = report([BASE, NEW])
    strip = lambda t: "\n".join(l for l in t.splitlines() if "diff.h5" not in l)  # noqa: E731
    assert strip(two) == strip(text)


def test_comparison_page_renders():
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        raise Skip("Chromium is not installed (Debian package chromium; "
                   "scripts/install-deps.sh --test installs it)")
    page = os.path.join(tmpdir(), "diff.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write(report(["--diff", DIFF]))
    shot = os.path.join(tmpdir(), "diff.png")
    p = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                        "--no-first-run", f"--user-data-dir={tmpdir()}", f"--screenshot={shot}",
                        "--window-size=1280,1600", "file://" + page],
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0 and os.path.exists(shot), (p.returncode, p.stderr[-2000:])
    pixels = (matplotlib.image.imread(shot)[:, :, :3] * 255).astype(np.uint8).reshape(-1, 3)
    # The heatmaps' warm end (NEW's non-compute time, rank 5's compute).
    reds = np.sum((pixels[:, 0] > 150) & (pixels[:, 1] < 60) & (pixels[:, 2] < 80))
    assert len(np.unique(pixels, axis=0)) > 100 and reds > 1000, reds


if __name__ == "__main__":
    main([test_every_kernel_change_over_all_ranks_and_nothing_else,
          test_every_kernel_change_per_rank, test_kernel_set_names_each_changed_name_with_its_figures,
          test_rank_metrics_side_by_side, test_ranks_present_in_one_run_only,
          test_tails_are_ratios_of_the_activity_categories, test_stdout_summary,
          test_file_attributes_name_both_runs, test_min_change_and_top,
          test_collectives_by_construction, test_real_traces_against_each_other,
          test_bad_inputs, test_previous_schema_version_is_read,
          test_different_options_are_named, test_usage_errors, test_python_loader,
          test_comparison_page, test_comparison_page_renders],
         setup=setup)
