"""/global_critical_path and its companions (--critical-path): the job's
critical path per step, across the ranks.

Answers known by construction: hta-tracegen --delay-truth
(tools/tracegen_delay.c) simulates tensor-parallel pairs and two
data-parallel groups; in step 2, rank 2's gemm takes 1000 us longer, its
partner waits at the pair's all-reduce, and half the ranks wait for rank 2
at the data-parallel one.  The job's path of step 2 must run through rank
2's delayed gemm and be 1000 us longer than the others.  A one-rank job's
path is that rank's /critical_path, step by step and cause by cause.
"""
import subprocess

from common import *

US = 1e-3
GEMM_US, DELAY_US, PAIR_US, DP_US = 3000.0, 1000.0, 500.0, 700.0
CAUSES = ["cpu_bound_us", "data_loading_us", "gpu_compute_bound_us",
          "gpu_communication_bound_us", "gpu_kernel_kernel_overhead_us",
          "gpu_kernel_launch_overhead_us"]
TABLES = ["/global_critical_path", "/global_critical_path_names", "/global_critical_path_steps",
          "/global_critical_path_ranks", "/global_critical_path_imbalance", "/what_if"]


def delay_job(ranks, delay_us=1000, delay_in="compute"):
    d = os.path.join(tmpdir(), "job")
    subprocess.run([TRACEGEN, "--delay-truth", "-o", d, "--ranks", str(ranks), "--steps", "3",
                    "--delay-us", str(delay_us), "--delay-in", delay_in], check=True)
    return d


def named_path(out):
    """/global_critical_path with its names joined from
    /global_critical_path_names, which lists each used name once, numbered
    0.. by first use."""
    path = table(out, "/global_critical_path")
    names = table(out, "/global_critical_path_names")
    assert list(names.name_id) == list(range(len(names))) and names.name.is_unique, names
    used = path[path.name_id >= 0].name_id
    assert list(dict.fromkeys(used)) == list(names.name_id), (path, names)
    named = path.merge(names, on="name_id", how="left", validate="many_to_one")
    return named.assign(name=named.name.fillna(""))


def test_path_runs_through_the_delayed_op():
    d = delay_job(8)
    out, _ = analyse(d, processes=1, extra=["--critical-path"])
    path = named_path(out)
    delayed = path[path.step == 2]
    gemm = delayed[delayed.name == "gemm"]
    assert list(gemm["rank"]) == [2], delayed
    assert_close(gemm.time_us.iloc[0], GEMM_US + DELAY_US, "rank 2's delayed gemm", abs_tol=US)
    # In time order: rank 2 up to its data-parallel all-reduce, then the
    # transfer on the rank whose step ends last.
    assert list(delayed.position) == list(range(1, len(delayed) + 1)), delayed
    ranks = list(delayed["rank"])
    assert ranks[0] == 2 and ranks[-1] != 2, delayed
    assert_close(delayed.time_us.iloc[-1], DP_US, "the last all-reduce's transfer", abs_tol=US)
    steps = table(out, "/global_critical_path_steps").set_index("step")
    assert_close(steps.path_us[2] - steps.path_us[1], DELAY_US, "the delay lengthens the path",
                 abs_tol=US)
    assert steps.hops[2] == 1 and (steps.hops[[1, 3]] == 0).all(), steps
    for c in CAUSES:
        assert_close(steps[c].sum(), path.assign(c=path.bound_by + "_us")
                     .query("c == @c").time_us.sum(), c, abs_tol=US)
    shares = table(out, "/global_critical_path_ranks")
    two = shares[(shares.step == 2) & (shares["rank"] == 2)]
    assert_close(two.time_us.iloc[0], GEMM_US + DELAY_US + PAIR_US + 10, "rank 2's time",
                 abs_tol=US)
    assert_close(shares.groupby("step").share_pct.sum().min(), 100.0, "shares", abs_tol=1e-9)
    imbalance = table(out, "/global_critical_path_imbalance").set_index("name")
    # The gemm: 3 x 3000 + 1000 on the path, 3 x 3000 + 1000 / 8 on a mean rank.
    assert_close(imbalance.imbalance_us["gemm"], DELAY_US * 7 / 8, "gemm's imbalance",
                 abs_tol=US)
    # The same on 3 processes: the walk crosses processes at the hop.
    out3, _ = analyse(d, processes=3, extra=["--critical-path"])
    for t in TABLES:
        assert table(out3, t).equals(table(out, t)), t


def truth_step(delay):
    """The delayed step's time in the simulation (tools/tracegen_delay.c)."""
    return 20 + GEMM_US + delay + PAIR_US + DP_US + 30


def test_what_if_predicts_the_run_without_the_delay():
    """/what_if: rank 2's kernels at the median of their place in step 2
    (or its data loading gone) give the step time the same job simulated
    without the delay has."""
    cases = [(8, 1000, "compute", "compute", "kernels at the median"),
             (12, 2500, "compute", "compute", "kernels at the median"),
             (8, 1500, "data-loading", "data loading", "no data loading")]
    for ranks, delay, delay_in, cause, change in cases:
        out, p = analyse(delay_job(ranks, delay, delay_in), processes=2,
                         extra=["--critical-path"])
        line = [l for l in p.stdout.splitlines() if l.startswith("  what-if:")]
        assert line == [f"  what-if: step 2, rank 2's {cause} ({change}) would save "
                        f"{delay:.1f} us of {truth_step(delay):.1f} (predicted "
                        f"{truth_step(delay) - delay:.1f} us); see /what_if"], p.stdout
        clean, _ = analyse(delay_job(ranks, 0), extra=["--critical-path"])
        truth = table(clean, "/cross_rank/steps").set_index("step").step_time_max_us
        w = table(out, "/what_if")
        assert len(w) == 1, w
        row = w.iloc[0]
        assert (row.step, row["rank"], row.cause, row.change) == (2, 2, cause, change), w
        assert_close(row.saving_us, delay, "saving", abs_tol=US)
        assert_close(row.predicted_step_time_us, truth[2], "predicted step time", abs_tol=US)
        assert_close(row.step_time_us - row.saving_us, row.predicted_step_time_us, "saving",
                     abs_tol=US)
        assert table(clean, "/what_if").empty
        out3, _ = analyse(delay_job(ranks, delay, delay_in), processes=3,
                          extra=["--critical-path"])
        assert table(out3, "/what_if").equals(w)


def test_what_if_on_a_pipeline():
    """hta-tracegen --pp: waits at sends and receives; a change never
    lengthens a step, and saves no more than the step's path."""
    d = os.path.join(tmpdir(), "pp")
    subprocess.run([TRACEGEN, "--pp", "4", "-o", d], check=True)
    out, _ = analyse(d, processes=2, extra=["--critical-path"])
    w = table(out, "/what_if")
    steps = table(out, "/global_critical_path_steps").set_index("step")
    assert (w.saving_us >= 0).all() and (w.groupby("step").size() <= 5).all(), w
    assert (w.saving_us <= steps.path_us[w.step].values + US).all(), (w, steps)
    assert (steps.hops > 0).any(), steps


TP, DP, LAYERS, SLOW_RANK, SLOW = 4, 2, 2, 5, 1.5
# tools/tracegen_groups.c: the compute before each TP collective (the
# layers' all-reduces, then the all-gather), us, before the slowdown; every
# kernel adds up to 40 us of seeded jitter and its rank in ns.
TP_COMPUTE_US = [1200.0 + 100.0 * l for l in range(LAYERS)] + [300.0]
JITTER_US = 40.0


def tp_job(slow):
    d = os.path.join(tmpdir(), "tp")
    subprocess.run([TRACEGEN, "--tp", str(TP), "--dp", str(DP), "--layers", str(LAYERS),
                    "--steps", "3", "--profiler-steps", "-o", d]
                   + (["--slow", f"{SLOW_RANK}:{SLOW}", "--slow-cause", "compute"] if slow else []),
                   check=True)
    return d


def test_tp_path_hops_to_the_slow_rank():
    """hta-tracegen --tp writes the stream waits of real NCCL jobs (the
    compute after a collective waits for it): with rank 5's compute 1.5x
    before its TP collectives, the job's path runs through rank 5's slowed
    kernels up to its TP group's all-gather, hops off it there, and holds
    rank 5 most.  /what_if's saving for rank 5's compute is close to what
    the same job without the slowdown (same seed) saves: the others at the
    all-gather and at the data-parallel all-reduce came from the path's
    previous instance and move with it."""
    out, _ = analyse(tp_job(True), processes=1, extra=["--critical-path"])
    path = named_path(out)
    steps = table(out, "/global_critical_path_steps").set_index("step")
    assert list(steps.index) == [1, 2, 3] and (steps.hops >= 1).all() and \
        (steps.ranks >= 2).all(), steps
    for s in steps.index:
        p = path[path.step == s].sort_values("position")
        on_slow = list(p["rank"] == SLOW_RANK)
        first_off = on_slow.index(False)
        assert not any(on_slow[first_off:]), p  # one stretch on rank 5, from the step's start
        gemms = p[:first_off].query("name == 'ampere_bf16_s16816gemm'").time_us
        assert len(gemms) == len(TP_COMPUTE_US), p
        for got, base in zip(gemms, TP_COMPUTE_US):
            assert SLOW * base <= got < SLOW * base + JITTER_US + US, (s, p)
        # The hop: the all-gather's transfer on another rank of the TP group.
        hop = p.iloc[first_off]
        assert hop["name"].startswith("ncclDevKernel_AllGather") and \
            hop["rank"] // TP == SLOW_RANK // TP, p
    shares = table(out, "/global_critical_path_ranks")
    top = shares.loc[shares.groupby("step").share_pct.idxmax()]
    assert (top["rank"] == SLOW_RANK).all(), shares
    out3, _ = analyse(tp_job(True), processes=3, extra=["--critical-path"])
    for t in TABLES:
        assert table(out3, t).equals(table(out, t)), t

    clean, _ = analyse(tp_job(False), processes=1)
    truth = table(clean, "/cross_rank/steps").set_index("step").step_time_max_us
    w = table(out, "/what_if")
    best = w.loc[w.groupby("step").saving_us.idxmax()].set_index("step")
    assert (best["rank"] == SLOW_RANK).all() and (best.cause == "compute").all(), w
    saved = best.step_time_us - truth
    # Rank 5's kernels at the medians over the ranks rather than at its own
    # jitter of the clean run: at most 40 us apart per slowed kernel.  And
    # a piece's excess is its name's in the step shared by time over the
    # rank's launches: its two gemms before the DP collectives (400 and
    # 200 us) are off the path and take 600 / (1.5 x 2800 + 600) of it.
    jitter = len(TP_COMPUTE_US) * JITTER_US
    off_path = 600.0 / (SLOW * sum(TP_COMPUTE_US) + 600.0)
    assert (best.saving_us >= saved * (1 - off_path) - jitter).all() and \
        (best.saving_us <= saved + jitter).all(), (best, saved)


def check_one_rank(out):
    steps = table(out, "/global_critical_path_steps").set_index("step")
    cp = table(out, "/critical_path").set_index("step")
    assert len(steps) == len(cp) > 0, (steps, cp)
    assert (steps.hops == 0).all() and (steps.ranks == 1).all(), steps
    for c in ["path_us"] + CAUSES:
        for s in cp.index:
            assert_close(steps[c][s], cp[c][s], f"step {s} {c}", abs_tol=US)


def test_one_rank_path_is_its_critical_path():
    d = os.path.join(tmpdir(), "chains")
    subprocess.run([TRACEGEN, "--critical-path-truth", "-o", d, "--ranks", "1", "--steps", "5"],
                   check=True)
    out, _ = analyse(d, extra=["--critical-path"])
    check_one_rank(out)
    for folder in ["nccl_data", "negative_queue", "critical_path_simple_add"]:
        out, _ = analyse(trace_dir(folder), extra=["--critical-path"])
        check_one_rank(out)


def test_off_without_critical_path():
    out, _ = analyse(delay_job(4))
    with h5py.File(out, "r") as f:
        assert not any(t.lstrip("/") in f for t in TABLES), list(f)


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
