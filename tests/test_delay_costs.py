"""/delay_costs and the summary's delay-cost line: the wait each rank's
lateness costs the job, direct and propagated (Scalasca's rule).

Answers known by construction: hta-tracegen --delay-truth
(tools/tracegen_delay.c) simulates tensor-parallel pairs and two
data-parallel groups with one rank delayed once before its first
collective; its partner, made late by the wait, passes the delay on at
the second collective.  The truth: the delayed rank's direct cost is
D x delay, its propagated cost (D - 1) x delay, (N - 1) x delay in all,
and nothing else costs anything.  Every wait is charged to someone, so
the costs add up to the waits.

/delay_costs and /stragglers name causes from one list
(docs/definitions.md, Causes of lateness): on generated jobs with one rank
late for a known cause (hta-tracegen --tp --slow-cause, --straggler, whose
GEMM rate says a slower GPU), the cause carrying most of that rank's
delay cost is the one /stragglers gives it.
"""
import json
import re
import subprocess

from common import *

US = 1e-3


def delay_job(ranks):
    d = os.path.join(tmpdir(), "job")
    subprocess.run([TRACEGEN, "--delay-truth", "-o", d, "--ranks", str(ranks), "--steps", "3"],
                   check=True)
    with open(d + ".delay_truth.json") as f:
        return d, json.load(f)["ranks"]


def check_costs(out, truth):
    costs = table(out, "/delay_costs")
    want = [(int(r), int(s), c["direct_us"], c["propagated_us"])
            for r, steps in truth.items() for s, c in steps.items()]
    assert len(want) == 1 and len(costs) == 1, costs
    rank, step, direct, propagated = want[0]
    row = costs.iloc[0]
    assert (row["rank"], row.step) == (rank, step), costs
    assert_close(row.direct_us, direct, "direct", abs_tol=US)
    assert_close(row.propagated_us, propagated, "propagated", abs_tol=US)
    assert_close(row.total_us, (len(truth) - 1) * 1000.0, "total = (n - 1) d", abs_tol=US)
    assert row.cause == "compute", row
    steps = table(out, "/steps")
    assert_close(costs.total_us.sum(), steps.wait_us.sum(), "costs add up to the waits",
                 abs_tol=US)
    return costs


def test_one_delay_costs_what_the_simulation_says():
    d, truth = delay_job(8)
    out, p = analyse(d, processes=1)
    costs = check_costs(out, truth)
    line = [l for l in p.stdout.splitlines() if l.startswith("Delay costs:")]
    assert len(line) == 1, p.stdout
    m = re.search(r"rank (\d+)'s lateness costs the job ([\d.]+) us .* per step \(([\d.]+) direct, "
                  r"([\d.]+) propagated\), most of it from ([\w ]+): [^;]*, as /stragglers says;",
                  line[0])
    assert m and m.group(1) == "2" and m.group(5) == "compute", line
    assert_close(float(m.group(2)), 7000 / 3, "per step", abs_tol=0.1)
    assert_close(float(m.group(3)), 4000 / 3, "direct per step", abs_tol=0.1)
    # The same on 3 processes, the instances matched on several.
    out3, _ = analyse(d, processes=3)
    assert table(out3, "/delay_costs").equals(costs)


def test_more_ranks_more_cost():
    d, truth = delay_job(12)
    out, _ = analyse(d, processes=2)
    check_costs(out, truth)


def test_the_schedules_waits_are_charged_to_nobody():
    """A 1F1B pipeline (hta-tracegen --pp): a stage sends after computing
    what it sends, so its receiver waits by the schedule with nobody
    slow.  Without a slow stage nothing is charged though the pairs wait;
    with one, only the slow stage is, at most the waits at the pairs it
    came last at (direct) and all the pairs' waits (in all)."""
    for extra, charged in (([], set()), (["--slow-stage", "2:1.5"], {2})):
        d = os.path.join(tmpdir(), "pp")
        subprocess.run([TRACEGEN, "--pp", "4", "-o", d] + extra, check=True)
        with open(d + ".truth.json") as f:
            truth = json.load(f)
        out, _ = analyse(d, processes=2, extra=["--include-last-step"])
        costs = table(out, "/delay_costs")
        waits = sum(w["late_sender_ns"] + w["late_receiver_ns"] for w in truth["pairs"]) / 1000
        assert waits > 0
        assert set(costs[costs.total_us > 0]["rank"]) == charged, (extra, costs)
        for rank in charged:
            late = sum(w["late_sender_ns"] for w in truth["pairs"] if w["src"] == rank) + \
                sum(w["late_receiver_ns"] for w in truth["pairs"] if w["dst"] == rank)
            mine = costs[costs["rank"] == rank]
            assert 0 < mine.direct_us.sum() <= late / 1000 + US * len(truth["pairs"]), (mine, late)
            assert mine.total_us.sum() <= waits + US * len(truth["pairs"]), (mine, waits)


# Every job shape of the replay's tests: (the job, with its slowdown, the
# ranks slowed, and without it: the same seed), docs/crossrank.md.
SHAPES = [
    (["--delay-truth", "--ranks", "8", "--steps", "3"], ["--delay-us", "1000"],
     ["--delay-us", "0"], {2}),
    (["--pp", "4", "--microbatches", "8", "--steps", "3", "--cpu-ahead"],
     ["--slow-stage", "2:1.6"], [], {2}),
    (["--pp", "4", "--dp", "2", "--microbatches", "8", "--steps", "3", "--cpu-ahead"],
     ["--slow-stage", "2:1.6"], [], {4, 5}),
    (["--tp", "4", "--dp", "2", "--steps", "3", "--profiler-steps", "--cpu-ahead", "--seed", "3"],
     ["--slow", "5:1.5"], [], {5}),
    (["--pp", "4", "--microbatches", "6", "--steps", "3", "--cpu-ahead"],
     ["--transfer-us", "400"], ["--transfer-us", "200"], set()),
    (["--moe", "--cpu-ahead", "--steps", "3", "--layers", "2", "--seed", "5"],
     ["--hot", "3:3"], ["--hot", "3:1"], {3}),
]


def one_answer(job, slowed):
    """/stragglers, /delay_costs and the replay of each rank's kernels at
    the median (/what_if) of one job: a rank charged materially in a step
    costs its peers more than 1% of the step each on average."""
    d = os.path.join(tmpdir(), "job")
    subprocess.run([TRACEGEN] + job + ["-o", d], check=True, capture_output=True)
    ranks = sorted(int(f.split("-")[1].split(".")[0]) for f in os.listdir(d)
                   if f.startswith("rank-"))
    specs = [f"median:{r}" for r in ranks] + (
        [f"median:{','.join(map(str, sorted(slowed)))}"] if len(slowed) > 1 else [])
    options = ["--replay"] + [o for s in specs for o in ("--what-if", s)]
    out, _ = analyse(d, processes=2, extra=options)
    flagged = set(table(out, "/stragglers").query("flagged != 0")["rank"])
    rows = table(out, "/what_if")
    measured = rows[rows.scenario == "as measured"].set_index("step").measured_step_time_us
    with h5py.File(out, "r") as f:
        charged = "delay_costs" in f  # absent when nobody arrived last
    costs = table(out, "/delay_costs") if charged else pd.DataFrame(
        columns=["rank", "step", "total_us"])
    material = set()
    for c in costs.itertuples(index=False):
        if c.step in measured.index and \
                c.total_us > 0.01 * measured[c.step] * (len(ranks) - 1):
            material.add(c.rank)
    saving = rows[rows.scenario != "as measured"].groupby("scenario").saving_pct.max()
    return flagged, material, saving


def test_the_verdict_the_delay_costs_and_the_replay_agree():
    """On every job shape: the ranks charged materially are the slowed
    ones, a flagged rank is slowed, and the replay's fix of the slowed
    ranks saves more than 1% of a step while fixing any other saves
    less; on the same job without the slowdown (and on a slower
    network, which no rank's work explains) nobody is flagged or
    charged materially and no fix saves 1%.  A rank delayed once (the
    first job) costs its step but is late too seldom to be flagged."""
    for job, slow, base, slowed in SHAPES:
        flagged, material, saving = one_answer(job + slow, slowed)
        what = (job + slow, flagged, material, saving)
        assert material == slowed and flagged <= slowed, what
        assert flagged == slowed or job[0] == "--delay-truth", what
        if slowed:
            fix = f"median:{','.join(map(str, sorted(slowed)))}"
            assert saving[fix] > 1.0, what
        others = [s for s in saving.index if s.startswith("median:") and "," not in s
                  and int(s.split(":")[1]) not in slowed]
        assert (saving[others] < 1.0).all() or len(slowed) > 1, what
        flagged, material, saving = one_answer(job + base, set())
        assert not flagged and not material and (saving < 1.0).all(), (job + base, flagged,
                                                                      material, saving)


def test_a_balanced_job_charges_within_the_replays_error():
    """On every balanced job shape (each of the shapes above without its
    slowdown, and 1F1B at PP 8) the costs charged in a step, summed over
    the ranks, are at most 1% of the step (its longest rank in /steps):
    a rank's own work counts only where it stands out from the step's
    spread over the ranks, so kernel jitter (TP x DP, MoE) charges
    nobody.  The slowed shapes still charge their slowed ranks (the test
    above)."""
    jobs = [job + base for job, _, base, _ in SHAPES]
    jobs.append(["--pp", "8", "--microbatches", "16", "--steps", "3", "--cpu-ahead"])
    for job in jobs:
        d = os.path.join(tmpdir(), "job")
        subprocess.run([TRACEGEN] + job + ["-o", d], check=True, capture_output=True)
        out, _ = analyse(d, processes=2)
        with h5py.File(out, "r") as f:
            if "delay_costs" not in f:
                continue  # nobody arrived last
        step = table(out, "/steps").groupby("step").step_time_us.max()
        charged = table(out, "/delay_costs").groupby("step").total_us.sum()
        for s, total in charged.items():
            assert total <= 0.01 * step[s], (job, s, total, step[s])


# The list of causes (docs/definitions.md, Causes of lateness).
CAUSES = {"", "compute", "slower GPU", "cpu launch", "data loading", "communication", "idle",
          "other"}


def check_same_cause(d, rank, want, processes=2):
    """The rank's /stragglers cause is want, so is the cause of most of
    its delay cost, and the summary says they agree."""
    out, p = analyse(d, processes=processes)
    st = table(out, "/stragglers").set_index("rank")
    costs = table(out, "/delay_costs")
    assert set(st.cause) <= CAUSES and set(costs.cause) <= CAUSES, (st.cause, costs.cause)
    mine = costs[costs["rank"] == rank].groupby("cause").total_us.sum()
    assert st.cause[rank] == want and mine.idxmax() == want, (want, st.cause[rank], mine)
    line = [l for l in p.stdout.splitlines() if l.startswith("Delay costs:")]
    assert len(line) == 1 and f"rank {rank}'s lateness" in line[0], p.stdout
    assert f"most of it from {want}: " in line[0] and "as /stragglers says" in line[0], line


def test_both_tables_name_the_same_cause():
    for cause, steps, want in (("compute", 6, "compute"), ("launch", 6, "cpu launch"),
                               ("data", 30, "data loading")):
        d = os.path.join(tmpdir(), "tp_" + cause)
        subprocess.run([TRACEGEN, "--tp", "4", "--dp", "2", "--slow", "5:1.5", "--slow-cause",
                        cause, "--steps", str(steps), "--profiler-steps", "-o", d], check=True)
        check_same_cause(d, 5, want)
    check_same_cause(generated(ranks=4, extra=["--steps", "4", "--straggler", "3:1.25"]), 3,
                     "slower GPU")
    d, _ = delay_job(8)
    check_same_cause(d, 2, "compute", processes=1)


def test_identical_ranks_have_no_cause():
    """The jitter layouts vary every rank's steps alike: nobody waits, so
    there is no delay cost and no straggler cause."""
    for flag in ("--jitter-data-loading-truth", "--jitter-compute-truth"):
        d = os.path.join(tmpdir(), "jitter")
        subprocess.run([TRACEGEN, flag, "-o", d, "--ranks", "4", "--steps", "10"], check=True)
        out, p = analyse(d, processes=2)
        assert (table(out, "/stragglers").cause == "").all(), flag
        with h5py.File(out) as f:
            assert "delay_costs" not in f, flag
        assert "Delay costs:" not in p.stdout, p.stdout


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
