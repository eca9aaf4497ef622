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
                  r"([\d.]+) propagated\), most of it when its (\w+) stood out;", line[0])
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


def test_point_to_point_waits_are_charged_too():
    """A 1F1B pipeline (hta-tracegen --pp): its waits are at sends and
    receives; charged to the late sender or receiver, directly or passed
    back along the stages, they still add up to the pairs' waits."""
    d = os.path.join(tmpdir(), "pp")
    subprocess.run([TRACEGEN, "--pp", "4", "-o", d], check=True)
    out, _ = analyse(d, processes=2)
    costs = table(out, "/delay_costs")
    pairs = table(out, "/p2p")
    waits = pairs.late_sender_us.sum() + pairs.late_receiver_us.sum()
    assert waits > 0 and (costs.propagated_us > 0).any(), costs
    assert_close(costs.total_us.sum(), waits + table(out, "/steps").wait_us.sum(),
                 "costs add up to the waits", rel_tol=1e-9, abs_tol=US * len(pairs))


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
