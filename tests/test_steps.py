"""/steps and /cross_rank/steps: per rank and profiler step.

Answers known by construction: hta-tracegen's DDP job (tools/tracegen_ddp.c)
runs its steps one after the other on the GPU, every kernel launched inside
its step's ProfilerStep range, all ranks' steps starting together; so the
per-step unions add up to the whole trace's, and the per-step waits to
/collective_wait's.
"""
import json
import subprocess

from common import *

US = 1e-3


def test_steps_add_up_to_the_rank_totals():
    out, _ = analyse(generated(ranks=4, straggler=2), processes=2)
    st = table(out, "/steps")
    tb = table(out, "/temporal_breakdown").set_index("rank")
    cw = table(out, "/collective_wait").set_index("rank")
    metrics = table(out, "/rank_metrics")
    steps_per_rank = st.groupby("rank").size()
    assert (steps_per_rank == steps_per_rank.iloc[0]).all() and steps_per_rank.iloc[0] >= 2, st
    for rank, g in st.groupby("rank"):
        assert_close(g.compute_us.sum(), tb.compute_time_us[rank], f"rank {rank} compute",
                     abs_tol=US)
        assert_close(g.wait_us.sum(), cw.total_wait_us[rank], f"rank {rank} wait", abs_tol=US)
        assert (g.exposed_comm_us <= g.comm_us + US).all() and (g.idle_us >= 0).all(), g
        assert (g.gpu_busy_us >= g.compute_us).all(), g
        m = metrics[metrics["rank"] == rank].set_index("metric").value
        assert_close(m["step_time_mean_us"], g.step_time_us.mean(), "mean", rel_tol=1e-12)
        assert_close(m["step_time_cv"], g.step_time_us.std() / g.step_time_us.mean(), "cv",
                     rel_tol=1e-9)
    # The slow rank waits for nobody; the others wait for it in every step.
    by_step = st.pivot(index="step", columns="rank", values="wait_us")
    assert (by_step[2] == 0).all() and (by_step.drop(columns=2) > 0).all().all(), by_step


def test_cross_rank_steps():
    out, _ = analyse(generated(ranks=4), processes=1)
    st = table(out, "/steps")
    cr = table(out, "/cross_rank/steps")
    assert list(cr.step) == sorted(st.step.unique()), cr
    for _, row in cr.iterrows():
        g = st[st.step == row.step]
        assert row.n_ranks == len(g), row
        assert row.step_time_min_us == g.step_time_us.min(), row
        assert row.step_time_max_us == g.step_time_us.max(), row
        assert_close(row.step_time_median_us, g.step_time_us.median(), "median", rel_tol=1e-12)
        assert row.slowest_rank == g.sort_values(["step_time_us", "rank"],
                                                 ascending=[False, True]).iloc[0]["rank"]


def test_nccl_data_steps():
    """The real trace: 2 steps kept by the last-step filter, every
    collective launched inside one of them."""
    out, _ = analyse(trace_dir("nccl_data"))
    st = table(out, "/steps")
    assert list(st.step) == [4, 5], st
    by = table(out, "/comm_by_group")
    tb = table(out, "/temporal_breakdown").iloc[0]
    assert_close(st.compute_us.sum(), tb.compute_time_us, "compute", abs_tol=US)
    assert_close(st.comm_us.sum(), by.comm_us.sum(), "comm", abs_tol=US)


def test_device_synchronize_is_not_gpu_work():
    """A job that synchronises the device in every step (hta-tracegen
    --device-sync-truth): its Context Sync records, host waits drawn on the
    GPU's row, cover most of each step's GPU idle.  /steps, /gpu_gaps and
    /overlap_breakdown count them as no work, and give the truth; the
    tables that reproduce HTA keep its rule (/temporal_breakdown's idle is
    the truth less what the records cover)."""
    d = os.path.join(tmpdir(), "job")
    subprocess.run([TRACEGEN, "--device-sync-truth", "-o", d, "--ranks", "2", "--steps", "4"],
                   check=True)
    with open(d + ".device_sync_truth.json") as f:
        truth = json.load(f)["ranks"]
    out, _ = analyse(d, processes=2)
    steps = table(out, "/steps")
    tb = table(out, "/temporal_breakdown").set_index("rank")
    parts = table(out, "/overlap_breakdown").set_index("rank")
    metrics = table(out, "/rank_metrics")
    for rank, want in truth.items():
        rank = int(rank)
        got = steps[steps["rank"] == rank].set_index("step")
        assert sorted(got.index) == sorted(int(s) for s in want["steps"]), got
        hidden = 0
        for s, w in want["steps"].items():
            row = got.loc[int(s)]
            assert_close(row.idle_us, w["idle_us"], f"rank {rank} step {s} idle", abs_tol=US)
            assert_close(row.gpu_busy_us, w["gpu_busy_us"], f"rank {rank} step {s} busy",
                         abs_tol=US)
            assert w["hta_rule_idle_us"] < w["idle_us"]
            hidden += w["idle_us"] - w["hta_rule_idle_us"]
        m = metrics[metrics["rank"] == rank].set_index("metric").value
        gaps = m["gpu_gap_idle_above_threshold_us"] + m["gpu_gap_idle_below_threshold_us"]
        assert_close(gaps, want["gpu_idle_us"], f"rank {rank} GPU gaps", abs_tol=US)
        span = sum(parts.loc[rank, f"{p}_us"] for p in ("compute", "communicate", "overlap",
                                                      "empty"))
        assert_close(span, want["work_span_us"], f"rank {rank} overlap span", abs_tol=US)
        assert_close(tb.idle_time_us[rank], want["gpu_idle_us"] - hidden,
                     f"rank {rank} HTA's idle", abs_tol=US)


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
