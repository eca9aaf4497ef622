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
          "/global_critical_path_ranks", "/global_critical_path_imbalance"]


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
    rank 5 most."""
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
