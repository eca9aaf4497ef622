"""/what_if: the job's steps replayed from their dependency graph, as
measured and under --what-if scenarios, or without it the default ones
(docs/definitions.md, What-if).

Answers known by construction: each job hta-tracegen simulates is
simulated again without its slowdown (same seed), and a scenario that
takes the slowdown away must predict that job's step times.  The step
times are read from the raw traces (each step's longest ProfilerStep
over the ranks; the last step, which the step filter drops, left out):
- the replay as measured is within 1% of every measured step;
- each scenario's prediction is within 1% of the job without the
  slowdown, step by step;
- on that balanced job no scenario saves more than 1%.
Jobs: data parallel with one rank delayed once (--delay-truth), 1F1B
with a slow stage at DP 1 and DP 2, tensor x data parallel with a slowed
rank, and a 2x slower network (1F1B).  The pipeline and TP x DP jobs run
with --cpu-ahead: their CPU launches ahead and the GPU orders the
kernels by stream waits, as in PyTorch.

The default scenarios (each step replayed under its own costliest
/delay_costs at the median, those ranks together, and the ranks
/stragglers flags), the RANKS
words stragglers and node:HOST, and --what-if given once per scenario
are checked the same way.

Real traces: the replay as measured of every real set is within 2% of
its measured steps, or its row says why there is no number.  The tables
are the same on 1 and 3 processes.
"""
import glob
import gzip
import json
import subprocess
import sys

from common import *


def generate(args):
    d = os.path.join(tmpdir(), "job")
    subprocess.run([TRACEGEN] + list(args) + ["-o", d], check=True, capture_output=True)
    return d


def raw_step_times(d):
    """Per step number, the longest ProfilerStep over the ranks' files,
    the last step left out (the step filter drops it)."""
    times = {}
    for path in sorted(glob.glob(os.path.join(d, "*.json"))):
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        for e in events:
            name = e.get("name", "")
            if e.get("ph") == "X" and name.startswith("ProfilerStep#"):
                n = int(name.split("#")[1])
                times[n] = max(times.get(n, 0.0), float(e["dur"]))
    last = max(times)
    return {n: t for n, t in times.items() if n != last}


def what_if_options(specs):
    return ["--replay"] + [o for s in specs for o in ("--what-if", s)]


def replay(d, specs, processes=1, extra=()):
    out, _ = analyse(d, processes=processes, extra=what_if_options(specs) + list(extra))
    return table(out, "/what_if")


def check_as_measured(rows, measured, what):
    mine = rows[rows.scenario == "as measured"]
    assert sorted(mine.step) == sorted(measured), (what, mine, measured)
    for _, r in mine.iterrows():
        assert_close(r.replayed_step_time_us, measured[r.step], f"{what}: step {r.step} replayed",
                     rel_tol=0.01)
        assert_close(r.measured_step_time_us, measured[r.step], f"{what}: step {r.step} measured",
                     rel_tol=1e-9)


def check_predicts(rows, specs, want, what, every_step=True):
    """Each scenario of specs predicts want, on every step (every_step),
    or on the steps that chose it, one at least (a default scenario)."""
    for spec in specs:
        mine = rows[rows.scenario == spec]
        assert len(mine) and set(mine.step) <= set(want), (what, spec, mine)
        assert not every_step or sorted(mine.step) == sorted(want), (what, spec, mine)
        for _, r in mine.iterrows():
            assert_close(r.predicted_step_time_us, want[r.step],
                         f"{what}: {spec}: step {r.step} against the job without the slowdown",
                         rel_tol=0.01)


def check_balanced(base, want_base, specs, processes=1):
    """On the job without the slowdown no scenario saves more than 1%,
    the defaults' included."""
    balanced = replay(base, ["median:all"] + [s for s in specs if s.startswith("median")],
                      processes)
    check_as_measured(balanced, want_base, "balanced job")
    out, _ = analyse(base, processes=processes, extra=["--replay"])
    defaults = table(out, "/what_if")
    check_as_measured(defaults, want_base, "balanced job, default scenarios")
    for rows in (balanced, defaults):
        saving = rows[rows.scenario != "as measured"].saving_pct
        assert (saving.abs() <= 1.0).all(), rows


def check_fix(slow_args, base_args, specs, processes=1, defaults=()):
    """The slowed job replayed as measured, each scenario of specs against
    the job simulated without the slowdown, and that job's scenarios
    saving nothing.  defaults: scenarios the run without --what-if must
    replay, each checked against the job without the slowdown too."""
    slow, base = generate(slow_args), generate(base_args)
    want_slow, want_base = raw_step_times(slow), raw_step_times(base)
    rows = replay(slow, specs, processes)
    check_as_measured(rows, want_slow, "slowed job")
    check_predicts(rows, specs, want_base, "slowed job")
    if defaults:
        out, _ = analyse(slow, processes=processes, extra=["--replay"])
        got = table(out, "/what_if")
        check_as_measured(got, want_slow, "slowed job, default scenarios")
        check_default_scenarios(out, got)
        check_predicts(got, defaults, want_base, "slowed job, default scenarios",
                       every_step=False)
    check_balanced(base, want_base, specs, processes)
    return rows


def check_default_scenarios(out, got):
    """The scenarios a run without --what-if replays, computed here from
    its /delay_costs and /stragglers read back: each step is replayed
    under its own five costliest delays a change takes away, each as its
    change on the rank, the ranks of its median ones together when
    several, and median:stragglers when a rank is flagged; so no step has
    more than eight rows, as measured included, however large the job."""
    change = {"compute": "median", "slower GPU": "median", "data loading": "no-data-loading",
              "cpu launch": "no-launch-delay"}
    costs = table(out, "/delay_costs")
    costs = costs[costs.cause.isin(list(change)) & (costs.total_us > 0)]
    top = costs.sort_values(["step", "total_us", "rank"], ascending=[True, False, True]) \
        .groupby("step").head(5)
    flagged = len(table(out, "/stragglers").query("flagged == 1")) > 0
    for step in sorted(set(got.step)):
        mine = top[top.step == step]
        want = {f"{change[c.cause]}:{c['rank']}" for _, c in mine.iterrows()}
        median = sorted({c["rank"] for _, c in mine.iterrows() if change[c.cause] == "median"})
        if len(median) > 1:
            want.add("median:" + ranks_text(median))
        if flagged:
            want.add("median:stragglers")
        rows = got[got.step == step]
        assert len(rows) <= 8, (step, rows)
        assert sorted(rows.scenario) == sorted(want | {"as measured"}), (step, rows, want)


def ranks_text(ranks):
    """Ranks ascending as hta-mpi lists them: runs as ranges (4-7), ','
    between."""
    parts, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        parts.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
        i = j + 1
    return ",".join(parts) or "none"


def test_data_parallel_with_a_delayed_rank():
    job = ["--delay-truth", "--ranks", "8", "--steps", "3"]
    rows = check_fix(job, job + ["--delay-us", "0"], ["median:2", "median:all"])
    # Only the delayed step saves (step 2, the delay of 1000 us).
    saving = rows[rows.scenario == "median:2"].set_index("step").saving_us
    assert_close(saving[2], 1000.0, "the delay", abs_tol=1.0)
    assert saving.drop(2).abs().max() < 1.0, rows


def test_1f1b_with_a_slow_stage():
    job = ["--pp", "4", "--microbatches", "8", "--steps", "3", "--cpu-ahead"]
    check_fix(job + ["--slow-stage", "2:1.6"], job, ["median:2", "compute:2:1.6"],
              defaults=["median:2"])


def test_1f1b_with_a_slow_stage_at_dp_2():
    """Stage 2 is ranks 4 and 5: fixing the stage is fixing both, which the
    default scenarios do (the two ranks' delays at the median together)."""
    job = ["--pp", "4", "--dp", "2", "--microbatches", "8", "--steps", "3", "--cpu-ahead"]
    check_fix(job + ["--slow-stage", "2:1.6"], job, ["median:4-5", "compute:4,5:1.6"],
              processes=3, defaults=["median:4-5"])


def test_tp_x_dp_with_a_slowed_rank():
    job = ["--tp", "4", "--dp", "2", "--steps", "3", "--profiler-steps", "--cpu-ahead",
           "--seed", "3"]
    check_fix(job + ["--slow", "5:1.5"], job, ["median:5", "compute:5:1.5"], processes=2,
              defaults=["median:5"])


def test_a_2x_slower_network():
    job = ["--pp", "4", "--microbatches", "6", "--steps", "3", "--cpu-ahead"]
    check_fix(job + ["--transfer-us", "400"], job + ["--transfer-us", "200"], ["network:2"])


def test_the_summary_and_the_report_say_what_fixing_it_buys():
    """The summary names the scenario that saves the most per step and the
    replay's error; the HTML report lists every scenario of /what_if with
    its measured, replayed and predicted step time over the steps."""
    d = generate(["--tp", "4", "--dp", "2", "--steps", "3", "--profiler-steps", "--cpu-ahead",
                  "--seed", "3", "--slow", "5:1.5"])
    specs = ["median:5", "network:2", "no-data-loading:all"]
    out, p = analyse(d, extra=what_if_options(specs))
    rows = table(out, "/what_if")
    mine = rows[rows.scenario == "as measured"]
    error = (100 * (mine.replayed_step_time_us - mine.measured_step_time_us).abs()
             / mine.measured_step_time_us).max()
    means = rows[rows.scenario != "as measured"].groupby("scenario").saving_us.mean()
    line = [l for l in p.stdout.splitlines() if l.startswith("What-if (see /what_if):")]
    assert len(line) == 1, p.stdout
    assert f"{len(mine)} steps replayed as measured within {error:.2f}%" in line[0], line
    best = [l for l in p.stdout.splitlines() if "what fixing it buys:" in l]
    assert len(best) == 1 and f"{means.idxmax()} saves {means.max():.1f} us per step" in best[0], \
        (best, means)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    from hta_mpi import report
    page = report.render(out)
    section = page[page.index("What fixing it buys"):]
    for scenario, g in rows.groupby("scenario"):
        assert f'<td class="text">{scenario}</td>' in section, scenario
        for column in ("measured_step_time_us", "replayed_step_time_us",
                       "predicted_step_time_us"):
            assert f"{g[column].mean():.2f}" in section, (scenario, column)


def test_the_same_on_any_number_of_processes():
    d = generate(["--pp", "4", "--dp", "2", "--microbatches", "4", "--steps", "3",
                  "--cpu-ahead", "--slow-stage", "1:1.3"])
    specs = ["median:all", "compute:2-3:1.3", "network:2", "no-launch-delay:all",
             "no-data-loading:0", "median:stragglers", "median:node:node0", "median:0-3"]
    extra = ["--gpus-per-node", "4"]
    one = replay(d, specs, 1, extra)
    assert len(one) == 2 * (len(specs) + 1), one
    three = replay(d, specs, 3, extra)
    assert one.equals(three), (one, three)
    # node0 holds the slow stage (ranks 2 and 3), on other processes than
    # the root's: it saves what its ranks listed do.
    by = {s: three[three.scenario == s].set_index("step") for s in specs}
    assert by["median:node:node0"].predicted_step_time_us.equals(
        by["median:0-3"].predicted_step_time_us), three
    assert (by["median:node:node0"].saving_us > 0).all(), three
    out1, _ = analyse(d, processes=1, extra=["--replay"])
    out3, _ = analyse(d, processes=3, extra=["--replay"])
    assert table(out1, "/what_if").equals(table(out3, "/what_if"))


def test_default_scenarios_step_by_step():
    """A balanced TP x DP job whose kernel jitter (charged with
    --min-effect 0 and --robust-z 0: every excess over the step's median
    counts) puts different ranks among each step's costliest
    delays: each step is replayed under its
    own default scenarios only (at most 8 rows a step, however many
    scenarios the steps chose in all), the same on 1 and 3 processes, and
    each row predicts what that scenario given with --what-if, replayed
    for every step, predicts for the step."""
    d = generate(["--tp", "4", "--dp", "4", "--steps", "9", "--profiler-steps", "--cpu-ahead",
                  "--seed", "5"])
    jitter = ["--min-effect", "0", "--robust-z", "0"]  # the delay costs keep the jitter
    charged = ["--replay"] + jitter
    out1, _ = analyse(d, processes=1, extra=charged)
    out3, _ = analyse(d, processes=3, extra=charged)
    rows = table(out3, "/what_if")
    assert table(out1, "/what_if").equals(rows), (table(out1, "/what_if"), rows)
    check_default_scenarios(out3, rows)
    chosen = sorted(set(rows.scenario) - {"as measured"})
    most = rows.groupby("step").size().max() - 1
    assert len(chosen) > most, rows  # the steps chose different scenarios
    alone = replay(d, chosen, processes=3, extra=jitter)
    for _, r in rows.iterrows():
        same = alone[(alone.scenario == r.scenario) & (alone.step == r.step)]
        assert len(same) == 1 and same.predicted_step_time_us.iloc[0] == \
            r.predicted_step_time_us, (r, same)


def test_what_if_given_once_per_scenario():
    """--what-if A --what-if B replays what --what-if 'A;B' does, in the
    order given."""
    d = generate(["--delay-truth", "--ranks", "4", "--steps", "3"])
    specs = ["median:2", "network:2", "no-launch-delay:all"]
    once, _ = analyse(d, extra=["--replay", "--what-if", ";".join(specs)])
    each = replay(d, specs)
    assert each.equals(table(once, "/what_if")), each
    assert list(dict.fromkeys(each.scenario)) == ["as measured"] + specs, each


def test_the_stragglers_and_a_host_name_their_ranks():
    """median:stragglers replays the ranks /stragglers flags, median:node:H
    those of host H (--gpus-per-node 4: node1 holds ranks 4-7, the slowed
    rank 5 among them): each predicts what the same ranks listed do, and
    node1's the job without the slowdown.  A host no rank ran on, and the
    stragglers when none is flagged, say so instead of a number."""
    job = ["--tp", "4", "--dp", "2", "--steps", "3", "--profiler-steps", "--cpu-ahead",
           "--seed", "3"]
    slow, base = generate(job + ["--slow", "5:1.5"]), generate(job)
    specs = ["median:stragglers", "median:node:node1", "median:4-7", "compute:node:node0:2",
             "median:node:elsewhere"]
    out, _ = analyse(slow, processes=3, extra=what_if_options(specs) + ["--gpus-per-node", "4"])
    rows = table(out, "/what_if")
    flagged = sorted(table(out, "/stragglers").query("flagged == 1")["rank"])
    by = {s: rows[rows.scenario == s].set_index("step") for s in specs}
    assert (by["median:node:node1"].ranks == "4-7").all(), rows
    assert by["median:node:node1"].predicted_step_time_us.equals(
        by["median:4-7"].predicted_step_time_us), rows
    check_predicts(rows, ["median:node:node1"], raw_step_times(base), "slowed job")
    assert (by["compute:node:node0:2"].ranks == "0-3").all(), rows
    elsewhere = by["median:node:elsewhere"]
    assert (elsewhere.ranks == "none").all() and elsewhere.predicted_step_time_us.isna().all() \
        and (elsewhere.note == "no rank analysed ran on this host").all(), rows
    stragglers = by["median:stragglers"]
    assert (stragglers.ranks == ranks_text(flagged)).all(), (rows, flagged)
    if flagged:
        listed = replay(slow, ["median:" + ranks_text(flagged)], 3)
        assert stragglers.predicted_step_time_us.equals(
            listed[listed.scenario != "as measured"].set_index("step").predicted_step_time_us)
    else:
        assert stragglers.predicted_step_time_us.isna().all() and \
            (stragglers.note == "/stragglers flags no rank").all(), rows
    # Without --gpus-per-node or a hostfile the generated traces name no host.
    unknown = replay(slow, ["median:node:node1"])
    mine = unknown[unknown.scenario == "median:node:node1"]
    assert mine.predicted_step_time_us.isna().all() and \
        mine.note.str.startswith("the ranks' hosts are unknown").all(), unknown


def test_default_scenarios_on_a_delayed_rank():
    """Without --what-if: rank 2's delay of 1000 us in step 2, in its
    compute or its data loading, is among the costliest delays; its
    change (kernels at the median, no data loading) predicts the same job
    simulated without the delay."""
    for delay_in, change in (("compute", "median"), ("data-loading", "no-data-loading")):
        job = ["--delay-truth", "--ranks", "8", "--steps", "3", "--delay-in", delay_in]
        slow, base = generate(job), generate(job + ["--delay-us", "0"])
        out, _ = analyse(slow, processes=2, extra=["--replay"])
        rows = table(out, "/what_if")
        check_default_scenarios(out, rows)
        check_predicts(rows, [f"{change}:2"], raw_step_times(base), delay_in, every_step=False)
        saving = rows[rows.scenario == f"{change}:2"].set_index("step").saving_us
        assert_close(saving[2], 1000.0, f"{delay_in}: the delay", abs_tol=1.0)


def test_a_bad_spec_names_itself():
    d = generate(["--delay-truth", "--ranks", "4", "--steps", "2"])
    _, p = analyse(d, extra=["--replay", "--what-if", "median:all;faster:2"], expect=None)
    assert p.returncode == 2 and "faster:2" in p.stderr, (p.returncode, p.stderr)
    _, p = analyse(d, extra=["--what-if", "median:all"], expect=None)
    assert p.returncode == 2 and "--replay" in p.stderr, (p.returncode, p.stderr)


def raw_real_steps(d):
    """Per step number, the longest ProfilerStep CPU range of the Kineto
    traces of d (None when the set has none)."""
    times = {}
    for path in sorted(glob.glob(os.path.join(d, "**", "*.json*"), recursive=True)):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            events = json.load(f).get("traceEvents", [])
        for e in events:
            name = str(e.get("name", ""))
            if (e.get("ph") == "X" and name.startswith("ProfilerStep#")
                    and e.get("cat") in ("cpu_op", "user_annotation")):
                n = int(name.split("#")[1])
                times[n] = max(times.get(n, 0.0), float(e["dur"]))
    return times or None


def test_real_traces_replay_their_steps():
    require_traces()
    sets = ["hta/trace_filter", "hta/negative_queue", "hta/nccl_data", "hta/rccl_mi300_rank0",
            "hta/critical_path_event_sync", "real_multirank/param_dlrm_8rank"]
    sets += sorted(os.path.relpath(p, TRACES) for p in glob.glob(
        os.path.join(TRACES, "nsys_multinode", "*", "traces")))
    for name in sets:
        d = os.path.join(TRACES, name)
        if not os.path.isdir(d):
            continue
        out, _ = analyse(d, processes=2, extra=["--replay"])
        rows = table(out, "/what_if")
        rows = rows[rows.scenario == "as measured"]
        assert len(rows), name
        raw = raw_real_steps(d)
        for _, r in rows.iterrows():
            if r.note:
                assert np.isnan(r.replayed_step_time_us), (name, r)
                continue
            assert_close(r.replayed_step_time_us, r.measured_step_time_us,
                         f"{name} step {r.step}", rel_tol=0.02)
            if raw and r.step in raw:
                assert_close(r.replayed_step_time_us, raw[r.step], f"{name} step {r.step} (raw)",
                             rel_tol=0.02)


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
