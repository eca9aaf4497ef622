"""The outlier noise floor and the straggler verdict (docs/crossrank.md).

Answers known by construction: hta-tracegen's DDP jobs (tools/tracegen.c)
whose ranks differ only by their seeded jitter, with and without a rank
whose compute is 1.3x, and its tensor x data parallel jobs
(tools/tracegen_groups.c) with a rank late for a known cause.
"""
import json

from common import *

NOISE_FLOOR = 0.02  # 2 x --min-effect


def ddp_job(seed, straggler=None):
    d = tmpdir()
    args = [TRACEGEN, "-o", d, "--ranks", "8", "--seed", str(seed), "--size-mb", "0.3"]
    if straggler is not None:
        args += ["--straggler", f"{straggler}:1.3"]
    subprocess.run(args, check=True)
    return d


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


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
