"""The outlier noise floor and the straggler verdict (docs/crossrank.md).

Answers known by construction: hta-tracegen's DDP jobs (tools/tracegen_ddp.c)
whose ranks differ only by their seeded jitter, with and without a rank
whose compute is 1.3x, and its tensor x data parallel jobs
(tools/tracegen_groups.c) with a rank late for a known cause.
"""
import json

from common import *

NOISE_FLOOR = 0.02  # 2 x --min-effect


def ddp_job(seed, straggler=None):
    return generated(ranks=8, straggler=straggler, extra=["--seed", str(seed)])


def flagged_ranks(out):
    o = table(out, "/outliers")
    return o, set(o["rank"])


def test_near_identical_ranks_are_not_outliers():
    """Seeds whose ranks differ by jitter only: nothing is flagged; with a
    slow rank, that rank and nothing else."""
    for seed in (1, 2):
        out, _ = analyse(ddp_job(seed))
        o, ranks = flagged_ranks(out)
        assert ranks == set(), (seed, o[["metric", "rank", "value", "median", "robust_z"]])
        out, _ = analyse(ddp_job(seed, straggler=2))
        o, ranks = flagged_ranks(out)
        assert ranks == {2}, (seed, o[["metric", "rank", "value", "median", "robust_z"]])


def test_every_flag_is_beyond_the_noise_floor():
    """Whatever the seed, a flagged value lies at least 2 noise floors (4%)
    from the median: the classic z needs 2 x max(std, floor) from the mean,
    the robust z 3.5 x max(sigma, floor) from the median."""
    for seed in (3, 4):
        for straggler in (None, 5):
            out, _ = analyse(ddp_job(seed, straggler))
            o = table(out, "/outliers")
            o = o[o.classification != "straggler"]
            far = (o.value - o["median"]).abs() >= 2 * NOISE_FLOOR * o["median"].abs() - 1e-9
            assert far.all(), o[~far][["metric", "rank", "value", "median", "z", "robust_z"]]


def test_examples_flag_only_the_slow_rank():
    """The example traces (rank 5 at 1.3x): the memcpy bandwidth 1-2% below
    the median on ranks 0 and 3 is no longer reported."""
    out, p = analyse(os.path.join(os.path.dirname(__file__), "..", "examples", "traces"))
    o, ranks = flagged_ranks(out)
    assert ranks == {5}, o[["metric", "rank", "value", "median", "robust_z"]]


def tp_dp(cause, steps, slow="5:1.5", layers=4):
    d = os.path.join(tmpdir(), "job")
    subprocess.run([TRACEGEN, "--tp", "4", "--dp", "2", "--slow", slow, "--slow-cause", cause,
                    "--steps", str(steps), "--layers", str(layers), "-o", d], check=True)
    with open(d + ".truth.json") as f:
        return d, json.load(f)


def test_the_straggler_is_the_rank_the_others_wait_for_with_its_cause():
    """Rank 5 is late inside its TP group because of its compute, its CPU
    launching late, or its data loading.  It heads /stragglers with the
    wait it caused (the generator's own figure), flagged, with that cause;
    its TP peers 4, 6 and 7 wait far more than anyone but are not it."""
    for cause, steps, want in (("compute", 6, "compute"), ("launch", 6, "cpu launch"),
                               ("data", 30, "data loading")):
        d, truth = tp_dp(cause, steps)
        out, p = analyse(d, processes=2)
        st = table(out, "/stragglers")
        top = st.iloc[0]
        what = f"cause {cause}"
        assert top["rank"] == 5 and top.flagged == 1, (what, st)
        assert list(st[st.flagged == 1]["rank"]) == [5], (what, st)
        assert top.cause == want, (what, top.cause, top.reasons)
        caused = {r["rank"]: r["caused_wait_us"] for r in truth["ranks"]}
        assert_close(top.caused_wait_us, caused[5], f"{what} caused wait", abs_tol=1e-3)
        assert_close(top.score, caused[5] / sum(caused.values()), f"{what} share", rel_tol=1e-9)
        cw = table(out, "/collective_wait").set_index("rank")
        assert cw.total_wait_us[[4, 6, 7]].min() > 10 * cw.total_wait_us[5], (what, cw)
        assert set(st[st.cause != ""]["rank"]) == {5}, (what, st[["rank", "cause", "reasons"]])
        assert f"rank 5, score {top.score:.2f}: the others wait for it" in p.stdout, p.stdout


def test_few_collectives_flag_nobody():
    """One step of two layers: 5 instances per rank.  Rank 5 still heads
    the list by the wait it caused, but no test can tell 4 last arrivals
    out of 5 from chance among 4 ranks, and the reasons say so."""
    d, truth = tp_dp("compute", steps=1, layers=2)
    out, p = analyse(d)
    st = table(out, "/stragglers")
    assert st.iloc[0]["rank"] == 5 and (st.flagged == 0).all(), st
    assert st.iloc[0].reasons.startswith("too few collectives to tell from chance"), st.reasons
    assert "Stragglers: none." in p.stdout, p.stdout


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
