"""/ops, /annotations, /gpu_gaps, /sync_calls, /memory and /kernel_sequences
against the ground truth of `hta-tracegen --ops-truth` (DIR.ops_truth.json):
nested ops, nested GPU annotations, one GPU gap per cause per step, two sync
APIs, memory peaks and kernel sequences under four option sets whose values
are known by construction, on three ranks analysed by two MPI processes."""
import json
import subprocess

import numpy as np

from common import TRACEGEN, analyse, assert_close, table, tmpdir, main

RANKS = 3
STEPS = 4
TRACES = None
OUT = None
TRUTH = None


def setup():
    global TRACES, OUT, TRUTH
    d = TRACES = tmpdir() + "/traces"
    subprocess.run([TRACEGEN, "--ops-truth", "-o", d, "--ranks", str(RANKS), "--steps",
                    str(STEPS)], check=True)
    with open(d + ".ops_truth.json") as f:
        TRUTH = json.load(f)["ranks"]
    assert sorted(TRUTH) == [str(r) for r in range(RANKS)], sorted(TRUTH)
    # The truth covers every step: keep the last one (dropped by default).
    OUT, _ = analyse(d, processes=2, extra=["--include-last-step"])


def rows(name, rank, key):
    t = table(OUT, name)
    return t[t["rank"] == rank].set_index(key)


def check_values(what, got, want):
    """Names and integer times (whole us here) exactly, others to 1e-6 relative."""
    for col, value in want.items():
        if value is None:
            assert np.isnan(got[col]), (what, col, got[col])
        elif isinstance(value, (int, str)):
            assert got[col] == value, (what, col, got[col], value)
        else:
            assert_close(got[col], value, f"{what} {col}", rel_tol=1e-6)


def check_keyed(name, key, part):
    """Per rank, the table's rows by key are the truth's, value by value."""
    for r in range(RANKS):
        got = rows(name, r, key)
        want = TRUTH[str(r)][part]
        assert sorted(got.index) == sorted(want), (r, name, list(got.index))
        for k, values in want.items():
            check_values(f"rank {r} {name} {k}", got.loc[k], values)


def test_ops():
    check_keyed("/ops", "name", "ops")


def test_cross_rank_ops():
    """Per op name with GPU time, the spread of the ranks' GPU busy time."""
    x = table(OUT, "/cross_rank/ops").set_index("name")
    busy = {}
    for r in range(RANKS):
        for name, values in TRUTH[str(r)]["ops"].items():
            if values["gpu_busy_sum_us"]:
                busy.setdefault(name, []).append(values["gpu_busy_sum_us"])
    assert sorted(x.index) == sorted(busy), list(x.index)
    for name, per_rank in busy.items():
        got = x.loc[name]
        assert got.n_ranks == RANKS, (name, got.n_ranks)
        assert (got.min_us, got.max_us) == (min(per_rank), max(per_rank)), name
        assert (got.min_rank, got.max_rank) == (per_rank.index(min(per_rank)),
                                                per_rank.index(max(per_rank))), name
        assert_close(got.mean_us, np.mean(per_rank), f"{name} mean", rel_tol=1e-6)


def test_annotations():
    check_keyed("/annotations", "name", "annotations")
    for r in range(RANKS):
        got = rows("/annotations", r, "name")
        for name, values in TRUTH[str(r)]["annotations"].items():
            # Every kernel under an annotation here is a compute kernel.
            assert got.loc[name, "compute_us"] == values.get("gpu_event_time_us", 0), (r, name)


def test_gpu_gaps():
    for r in range(RANKS):
        got = table(OUT, "/gpu_gaps")
        got = got[got["rank"] == r].sort_values("start_us").reset_index(drop=True)
        want = TRUTH[str(r)]["gaps"]
        assert len(got) == len(want) == 4 * STEPS, (r, len(got), len(want))
        for i, gap in enumerate(want):
            check_values(f"rank {r} gap {i}", got.loc[i], gap)


def test_sync_calls():
    check_keyed("/sync_calls", "api", "sync_calls")


def test_memory():
    for r in range(RANKS):
        got = table(OUT, "/memory")
        got = got[got["rank"] == r].sort_values(["device_type", "device"]).reset_index(drop=True)
        want = TRUTH[str(r)]["memory"]
        assert len(got) == len(want), (r, len(got), len(want))
        for i, m in enumerate(want):
            check_values(f"rank {r} memory {i}", got.loc[i], m)


def test_rank_metrics():
    """Idle time in gaps above the threshold and the memory peak, per rank,
    as the outlier search sees them."""
    t = table(OUT, "/rank_metrics")
    for r in range(RANKS):
        m = t[t["rank"] == r].set_index("metric").value
        gaps = TRUTH[str(r)]["gaps"]
        assert m["gpu_gaps_above_threshold"] == len(gaps), (r, m["gpu_gaps_above_threshold"])
        assert m["gpu_gap_idle_above_threshold_us"] == sum(g["duration_us"] for g in gaps), r
        peak = max(d["peak_allocated_bytes"] for d in TRUTH[str(r)]["memory"])
        assert m["memory_peak_allocated_bytes"] == peak, (r, m["memory_peak_allocated_bytes"])


def test_kernel_sequences():
    """Each option set's patterns, per rank, exactly; the default run's
    patterns across ranks."""
    variants = TRUTH["0"]["kernel_sequences"]
    for v, variant in enumerate(variants):
        args = variant["args"]
        out = OUT if not args else analyse(TRACES, processes=2,
                                           extra=["--include-last-step"] + args)[0]
        t = table(out, "/kernel_sequences")
        for r in range(RANKS):
            want = TRUTH[str(r)]["kernel_sequences"][v]
            assert want["args"] == args, (r, want["args"], args)
            got = t[t["rank"] == r].set_index("name")
            assert sorted(got.index) == sorted(want["patterns"]), (args, r, list(got.index))
            for name, values in want["patterns"].items():
                check_values(f"rank {r} {args} {name}", got.loc[name], values)
    x = table(OUT, "/cross_rank/kernel_sequences").set_index("name")
    counts = {}
    for r in range(RANKS):
        for name, values in TRUTH[str(r)]["kernel_sequences"][0]["patterns"].items():
            counts.setdefault(name, []).append(values["count"])
    assert sorted(x.index) == sorted(counts), list(x.index)
    for name, per_rank in counts.items():
        assert x.loc[name, "n_ranks"] == RANKS, name
        assert (x.loc[name, "min_us"], x.loc[name, "max_us"]) == (min(per_rank), max(per_rank))


if __name__ == "__main__":
    main([test_ops, test_cross_rank_ops, test_annotations, test_gpu_gaps, test_sync_calls, test_memory,
          test_rank_metrics, test_kernel_sequences], setup=setup)
