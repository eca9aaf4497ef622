"""/replay: the job's steps replayed from their dependency graph, as
measured and under --what-if scenarios (docs/definitions.md, Replay).

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


def replay(d, specs, processes=1):
    out, _ = analyse(d, processes=processes, extra=["--replay", "--what-if", ";".join(specs)])
    return table(out, "/replay")


def check_as_measured(rows, measured, what):
    mine = rows[rows.scenario == "as measured"]
    assert sorted(mine.step) == sorted(measured), (what, mine, measured)
    for _, r in mine.iterrows():
        assert_close(r.replayed_step_time_us, measured[r.step], f"{what}: step {r.step} replayed",
                     rel_tol=0.01)
        assert_close(r.measured_step_time_us, measured[r.step], f"{what}: step {r.step} measured",
                     rel_tol=1e-9)


def check_fix(slow_args, base_args, specs, processes=1):
    """The slowed job replayed as measured, each scenario of specs against
    the job simulated without the slowdown, and that job's scenarios
    saving nothing."""
    slow, base = generate(slow_args), generate(base_args)
    want_slow, want_base = raw_step_times(slow), raw_step_times(base)
    rows = replay(slow, specs, processes)
    check_as_measured(rows, want_slow, "slowed job")
    for spec in specs:
        mine = rows[rows.scenario == spec]
        assert sorted(mine.step) == sorted(want_base), (spec, mine)
        for _, r in mine.iterrows():
            assert_close(r.predicted_step_time_us, want_base[r.step],
                         f"{spec}: step {r.step} against the job without the slowdown",
                         rel_tol=0.01)
    balanced = replay(base, ["median:all"] + [s for s in specs if s.startswith("median")])
    check_as_measured(balanced, want_base, "balanced job")
    saving = balanced[balanced.scenario != "as measured"].saving_pct
    assert (saving.abs() <= 1.0).all(), balanced
    return rows


def test_data_parallel_with_a_delayed_rank():
    job = ["--delay-truth", "--ranks", "8", "--steps", "3"]
    rows = check_fix(job, job + ["--delay-us", "0"], ["median:2", "median:all"])
    # Only the delayed step saves (step 2, the delay of 1000 us).
    saving = rows[rows.scenario == "median:2"].set_index("step").saving_us
    assert_close(saving[2], 1000.0, "the delay", abs_tol=1.0)
    assert saving.drop(2).abs().max() < 1.0, rows


def test_1f1b_with_a_slow_stage():
    job = ["--pp", "4", "--microbatches", "8", "--steps", "3", "--cpu-ahead"]
    check_fix(job + ["--slow-stage", "2:1.6"], job, ["median:2", "compute:2:1.6"])


def test_1f1b_with_a_slow_stage_at_dp_2():
    """Stage 2 is ranks 4 and 5: fixing the stage is fixing both."""
    job = ["--pp", "4", "--dp", "2", "--microbatches", "8", "--steps", "3", "--cpu-ahead"]
    check_fix(job + ["--slow-stage", "2:1.6"], job, ["median:4-5", "compute:4,5:1.6"],
              processes=3)


def test_tp_x_dp_with_a_slowed_rank():
    job = ["--tp", "4", "--dp", "2", "--steps", "3", "--profiler-steps", "--cpu-ahead",
           "--seed", "3"]
    check_fix(job + ["--slow", "5:1.5"], job, ["median:5", "compute:5:1.5"], processes=2)


def test_a_2x_slower_network():
    job = ["--pp", "4", "--microbatches", "6", "--steps", "3", "--cpu-ahead"]
    check_fix(job + ["--transfer-us", "400"], job + ["--transfer-us", "200"], ["network:2"])


def test_the_summary_and_the_report_say_what_fixing_it_buys():
    """The summary names the scenario that saves the most per step and the
    replay's error; the HTML report lists every row of /replay."""
    d = generate(["--tp", "4", "--dp", "2", "--steps", "3", "--profiler-steps", "--cpu-ahead",
                  "--seed", "3", "--slow", "5:1.5"])
    specs = ["median:5", "network:2", "no-data-loading:all"]
    out, p = analyse(d, extra=["--replay", "--what-if", ";".join(specs)])
    rows = table(out, "/replay")
    mine = rows[rows.scenario == "as measured"]
    error = (100 * (mine.replayed_step_time_us - mine.measured_step_time_us).abs()
             / mine.measured_step_time_us).max()
    means = rows[rows.scenario != "as measured"].groupby("scenario").saving_us.mean()
    line = [l for l in p.stdout.splitlines() if l.startswith("Replay (see /replay):")]
    assert len(line) == 1, p.stdout
    assert f"{len(mine)} steps replayed as measured within {error:.2f}%" in line[0], line
    best = [l for l in p.stdout.splitlines() if "what fixing it buys:" in l]
    assert len(best) == 1 and f"{means.idxmax()} saves {means.max():.1f} us per step" in best[0], \
        (best, means)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    from hta_mpi import report
    page = report.render(out)
    section = page[page.index("What fixing it buys"):]
    for r in rows.itertuples(index=False):
        assert f'<td class="text">{r.scenario}</td>' in section, r
        assert f"{r.predicted_step_time_us:.2f}" in section, r


def test_the_same_on_any_number_of_processes():
    d = generate(["--pp", "4", "--dp", "2", "--microbatches", "4", "--steps", "3",
                  "--cpu-ahead", "--slow-stage", "1:1.3"])
    specs = ["median:all", "compute:2-3:1.3", "network:2", "no-launch-delay:all",
             "no-data-loading:0"]
    one = replay(d, specs, 1)
    assert len(one) == 2 * (len(specs) + 1), one
    three = replay(d, specs, 3)
    assert one.equals(three), (one, three)


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
        rows = table(out, "/replay")
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
