"""/step_jitter and /step_jitter_slowest: what drives each rank's
step-time jitter.

Answers known by construction: hta-tracegen's jitter layouts
(tools/tracegen_jitter.c) vary one component of the step only, data
loading or one kernel's duration, by a known amount per step, with every
other part constant; so that component takes all of var(step time) and
is the dominant component of every slow step.  On any job the components
add up to the step time, so their covariances with it add up to its
variance.
"""
import json
import subprocess

from common import *

US = 1e-3


def jitter_job(flag, ranks=2, steps=20):
    d = os.path.join(tmpdir(), "job")
    subprocess.run([TRACEGEN, flag, "-o", d, "--ranks", str(ranks), "--steps", str(steps)],
                   check=True)
    with open(d + ".jitter_truth.json") as f:
        truth = json.load(f)["ranks"]
    out, _ = analyse(d, processes=2)
    return out, truth


def check_jitter_goes_to(flag, component, truth_column):
    out, truth = jitter_job(flag)
    steps = table(out, "/steps")
    jitter = table(out, "/step_jitter")
    slowest = table(out, "/step_jitter_slowest")
    for rank, want in truth.items():
        rank = int(rank)
        st = steps[steps["rank"] == rank].set_index("step")
        assert sorted(st.index) == sorted(int(s) for s in want), st
        for s, w in want.items():
            assert_close(st.step_time_us[int(s)], w["step_time_us"], f"step {s}", abs_tol=US)
            assert_close(st[truth_column][int(s)], w[truth_column], f"{truth_column} {s}",
                         abs_tol=US)
        j = jitter[jitter["rank"] == rank].set_index("component")
        assert j.share[component] >= 0.99, j
        assert_close(j.share.sum(), 1.0, "shares", abs_tol=1e-9)
        assert_close(j.covariance_us2[component], st.step_time_us.var(), "covariance",
                     rel_tol=1e-9)
        # The slowest steps, slowest first, each slow by its component.
        times = sorted(((w["step_time_us"], -int(s)) for s, w in want.items()), reverse=True)
        sl = slowest[slowest["rank"] == rank]
        assert list(sl.step) == [-s for _, s in times[:3]], sl
        assert (sl.dominant_component == component).all(), sl
        assert_close(sl.excess_us.iloc[0], times[0][0] - st.step_time_us.mean(), "excess",
                     abs_tol=US)


def test_jitter_in_data_loading_goes_to_data_loading():
    check_jitter_goes_to("--jitter-data-loading-truth", "data_loading", "data_loading_us")


def test_jitter_in_one_kernel_goes_to_compute():
    check_jitter_goes_to("--jitter-compute-truth", "compute", "compute_us")


def test_components_add_up_on_a_straggler_job():
    """The DDP job with a straggler: the waits of the other ranks vary
    with the straggler's steps; whatever the mix, the covariances add up
    to the variance, the means to the mean step time, and the wait's
    mean is /steps' wait."""
    out, _ = analyse(generated(ranks=4, straggler=2), processes=2)
    steps = table(out, "/steps")
    jitter = table(out, "/step_jitter")
    assert sorted(jitter["rank"].unique()) == [0, 1, 2, 3], jitter
    assert (steps.launch_gap_us <= steps.idle_us + US).all(), steps
    for rank, g in steps.groupby("rank"):
        j = jitter[jitter["rank"] == rank].set_index("component")
        assert len(j) == 7 and (j.n_steps == len(g)).all(), j
        assert_close(j.covariance_us2.sum(), g.step_time_us.var(), f"rank {rank} variance",
                     rel_tol=1e-6, abs_tol=1e-6)
        assert_close(j.mean_us.sum(), g.step_time_us.mean(), f"rank {rank} mean", rel_tol=1e-9)
        assert_close(j.mean_us["wait"], g.wait_us.mean(), f"rank {rank} wait", rel_tol=1e-9,
                     abs_tol=US)


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
