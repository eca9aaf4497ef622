"""CUDA graph replays (analysis/graph_launches.c, docs/definitions.md
"Graph launches").

Answers known by construction: hta-tracegen --graphs G:N replays G
graphs of N kernels per step, the kernels sharing the launch's
correlation, and --graph-drop K[:R] leaves every K-th replay (of rank R)
unrecorded; DIR.graphs_truth.json holds the counts.  And the real
negative_queue trace, whose graph launch calls and the GPU events sharing
their correlations are counted from its JSON here.
"""
import gzip
import json

from common import *
from handbuilt import gpu_kernel, write_ranks


def graph_job(*extra, ranks=2):
    d = os.path.join(tmpdir(), "job")
    subprocess.run([TRACEGEN, "--graphs", "3:4", "--ranks", str(ranks), "--steps", "6", "-o", d]
                   + list(extra), check=True)
    with open(d + ".graphs_truth.json") as f:
        return d, json.load(f)


def per_rank(g):
    return g.groupby("rank")[["launches", "recorded", "kernels"]].sum()


def assert_counts(g, truth):
    counts = per_rank(g)
    for rank, want in truth["ranks"].items():
        got = counts.loc[int(rank)]
        for c in ("launches", "recorded", "kernels"):
            assert got[c] == want[c], (rank, c, got[c], want[c])


def test_full_coverage_counts_spans_and_busy_time_equal_the_truth():
    d, truth = graph_job()
    out, p = analyse(d)
    g = table(out, "/graph_launches")
    assert_counts(g, truth)
    assert (g.signature != "").all() and (g.recorded == g.launches).all(), g
    for first, want in truth["graphs"].items():
        rows = g[g.first_kernel == first]
        assert len(rows) == 2, (first, g)
        assert (rows.span_p50_us == want["span_us"]).all(), (first, rows)
        assert (rows.busy_p50_us == want["busy_us"]).all(), (first, rows)
        assert (rows.kernels_min == want["kernels"]).all(), (first, rows)
    notes = table(out, "/ranks").input_notes
    assert (notes == "").all(), notes
    assert "Graph replays" not in p.stdout, p.stdout
    ls = table(out, "/launch_stats").set_index("rank")
    for rank, want in truth["ranks"].items():
        got = ls.loc[int(rank)]
        assert got.graph_launches == want["launches"], (rank, got)
        assert got.graph_gpu_events == want["kernels"], (rank, got)


def test_per_thread_stream_launch_names_are_graph_launches():
    """Code built for the per-thread default stream calls cudaGraphLaunch_ptsz
    (CUDA) or hipGraphLaunch_spt (HIP): renamed, the job gives the same
    counts as with cudaGraphLaunch."""
    d, truth = graph_job()
    for new_name in ("cudaGraphLaunch_ptsz", "cuGraphLaunch_ptsz", "hipGraphLaunch_spt"):
        renamed = os.path.join(tmpdir(), new_name)
        os.makedirs(renamed)
        for f in os.listdir(d):
            with open(os.path.join(d, f)) as src:
                text = src.read()
            assert '"cudaGraphLaunch"' in text, f
            with open(os.path.join(renamed, f), "w") as dst:
                dst.write(text.replace('"cudaGraphLaunch"', '"%s"' % new_name))
        out, _ = analyse(renamed)
        assert_counts(table(out, "/graph_launches"), truth)
        ls = table(out, "/launch_stats").set_index("rank")
        for rank, want in truth["ranks"].items():
            assert ls.loc[int(rank)].graph_launches == want["launches"], (new_name, rank)


def test_the_op_around_a_graph_launch_gets_its_whole_replay():
    """Each graph<g>::replay op encloses one cudaGraphLaunch: /ops credits
    it with every kernel of the replay and their busy time, and its kernel
    sequence lists them all."""
    d, truth = graph_job(ranks=1)
    out, _ = analyse(d, extra=["--sequence-op", "replay"])
    ops = table(out, "/ops").set_index("name")
    steps = truth["ranks"]["0"]["launches"] // len(truth["graphs"])
    for first, want in truth["graphs"].items():
        op = ops.loc[first.split("_")[0] + "::replay"]
        assert op.calls == steps and op.calls_with_gpu == steps, op
        assert op.gpu_events == want["kernels"] * steps, op
        assert op.gpu_busy_sum_us == want["busy_us"] * steps, op
        assert op.gpu_busy_min_us == op.gpu_busy_max_us == want["busy_us"], op
    seq = table(out, "/kernel_sequences")
    assert len(seq) == len(truth["graphs"]), seq
    assert (seq.n_kernels == 4).all() and (seq["count"] == steps).all(), seq


def test_the_critical_path_runs_through_the_replay():
    """HTA PR #291's rule: every GPU event of a cudaGraphLaunch in the step
    is a node.  One graph of 16 kernels (40 us, 5 us apart) between the
    step's prologue kernel [b+4, b+9), launched at b+2, and a device
    synchronize waiting for the replay (hta-tracegen --graph-sync): the
    path is the launch, the prologue, the 21 us to the replay and the
    whole replay, as HTA's fixed critical path has it (86.81% compute,
    12.92% kernel-kernel, 0.27% launch, 42 nodes and 42 edges:
    scripts/hta-critical-path-oracle.py).  Without the rule the path keeps
    one kernel of the replay."""
    d = os.path.join(tmpdir(), "sync")
    subprocess.run([TRACEGEN, "--graphs", "1:16", "--graph-sync", "--ranks", "1", "--steps", "3",
                    "-o", d], check=True)
    out, _ = analyse(d, extra=["--critical-path"])
    cp = table(out, "/critical_path")
    assert len(cp) == 3 and (cp.graph_ok == 1).all(), cp
    assert (cp.gpu_compute_bound_us == 16 * 40 + 5).all(), cp
    assert (cp.gpu_kernel_kernel_overhead_us == 15 * 5 + 21).all(), cp
    assert (cp.gpu_kernel_launch_overhead_us == 2).all() and (cp.path_us == 743).all(), cp
    assert (cp.bound_by == "gpu_compute_bound").all(), cp
    assert (cp.nodes == 42).all() and (cp.edges == 42).all(), cp  # HTA's graph


def test_negative_queue_critical_path_graphs_equal_htas_fixed_ones():
    """negative_queue's step graphs have the nodes and edges of HTA with
    PR #291 (17d09fc, scripts/hta-critical-path-oracle.py on this trace:
    110 nodes more per step than without the PR, its 55 graph GPU events
    beyond the one per correlation HTA kept)."""
    out, _ = analyse(trace_dir("negative_queue"), extra=["--critical-path"])
    cp = table(out, "/critical_path").set_index("step")
    hta_fixed = {550: (14132, 14105), 551: (14086, 14061), 552: (14088, 14061),
                 553: (14162, 14137)}
    for step, (nodes, edges) in hta_fixed.items():
        assert (cp.loc[step].nodes, cp.loc[step].edges) == (nodes, edges), cp.loc[step]


def test_unrecorded_replays_are_counted_and_noted():
    """Every third replay unrecorded: the launches, recorded replays and
    kernels equal the truth, the unrecorded ones in a row without a
    signature, and every rank's input notes say so."""
    d, truth = graph_job("--graph-drop", "3")
    out, p = analyse(d, processes=2)
    g = table(out, "/graph_launches")
    assert_counts(g, truth)
    missing = sum(w["launches"] - w["recorded"] for w in truth["ranks"].values())
    launches = sum(w["launches"] for w in truth["ranks"].values())
    assert f"Graph replays: {missing} of {launches} CUDA/HIP graph launches left no GPU " \
           "event, on 2 ranks" in p.stdout, p.stdout
    unrecorded = g[g.signature == ""]
    assert (unrecorded.recorded == 0).all() and len(unrecorded) == 2, g
    for note, (rank, want) in zip(table(out, "/ranks").input_notes, truth["ranks"].items()):
        missing = want["launches"] - want["recorded"]
        assert f"{missing} of {want['launches']} graph launches have no GPU event" in note, note


def test_idle_of_an_under_recorded_rank_is_no_outlier():
    """Rank 1 of 8 loses every second replay: its idle time stands 30%
    above the others', yet no idle metric of it is flagged, while the
    kernels it lacks still are."""
    d, _ = graph_job("--graph-drop", "2:1", ranks=8)
    out, _ = analyse(d)
    m = table(out, "/rank_metrics")
    idle = m[m.metric == "idle_time_us"].set_index("rank").value
    assert idle[1] > 1.3 * idle.drop(1).max(), idle
    o = table(out, "/outliers")
    mine = o[o["rank"] == 1]
    assert len(mine) > 0, o
    assert not mine.metric.str.contains("idle").any(), mine[["metric", "value", "median"]]


GRAPH_LAUNCH_APIS = {"cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch", "cudaGraphLaunch_ptsz",
                     "cuGraphLaunch_ptsz", "hipGraphLaunch_spt"}
GPU_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}


def raw_events(folder):
    path = os.path.join(trace_dir(folder), os.listdir(trace_dir(folder))[0])
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def raw_graph_counts(folder):
    """From the trace's JSON: its graph launch calls, the kernels sharing
    their correlations, and all GPU events (kernels, copies, memsets)
    sharing them."""
    events = raw_events(folder)
    calls = {e["args"]["correlation"] for e in events
             if e["name"] in GRAPH_LAUNCH_APIS and e.get("cat") in ("cuda_runtime", "cuda_driver")}
    gpu = [e for e in events if e.get("cat") in GPU_CATEGORIES
           and e.get("args", {}).get("correlation") in calls]
    return len(calls), sum(e["cat"] == "kernel" for e in gpu), len(gpu)


def test_idle_of_a_rank_with_short_replays_is_no_outlier():
    """Rank 1 of 8 records every fourth replay one kernel short: the
    replays are counted short, its idle time stands 7.8% above the
    others', and no idle metric of it is flagged, while its lower compute
    still is."""
    d, truth = graph_job("--graph-short", "4:1", ranks=8)
    out, _ = analyse(d)
    g = table(out, "/graph_launches")
    shorts = g.groupby("rank").short_replays.sum()
    assert shorts.loc[1] == truth["ranks"]["1"]["short"] > 0 and shorts.drop(1).sum() == 0, g
    m = table(out, "/rank_metrics")
    idle = m[m.metric == "idle_time_us"].set_index("rank").value
    assert idle[1] > 1.07 * idle.drop(1).max(), idle
    o = table(out, "/outliers")
    mine = o[o["rank"] == 1]
    assert mine.metric.str.contains("compute").any(), o
    assert not mine.metric.str.contains("idle").any(), mine[["metric", "value", "median"]]


def test_negative_queue_graph_launches():
    """The real trace's graph launches, their kernels and GPU events, all
    recorded (the last step kept: the default drops some of them), in
    /graph_launches and beside HTA's columns of /launch_stats."""
    launches, kernels, gpu_events = raw_graph_counts("negative_queue")
    assert launches > 0 and kernels > launches, (launches, kernels)
    out, _ = analyse(trace_dir("negative_queue"), extra=["--include-last-step"])
    g = table(out, "/graph_launches")
    assert g.launches.sum() == launches and g.kernels.sum() == kernels, g
    assert g.gpu_events.sum() == gpu_events, g
    assert (g.recorded == g.launches).all(), g
    # Its 1-kernel graphs, subsequences of 2-kernel ones replayed as
    # often, are graphs of their own, not replays recorded short.
    assert (g.short_replays == 0).all() and (g.kernels_min == 1).any(), g
    ls = table(out, "/launch_stats").iloc[0]
    assert ls.graph_launches == launches and ls.graph_gpu_events == gpu_events, ls


def test_gpu_events_without_a_launch_are_counted():
    """negative_queue holds GPU events whose correlation no CPU event
    carries (work launched before profiling began): the step filter drops
    them and /ranks counts them, as the JSON does.  Without steps they
    stay in the analysed trace and are counted there."""
    events = raw_events("negative_queue")
    gpu = GPU_CATEGORIES | {"cuda_sync"}
    cpu = {e["args"]["correlation"] for e in events
           if e.get("cat") not in gpu and "correlation" in e.get("args", {})}
    want = sum(1 for e in events if e.get("cat") in gpu and "correlation" in e.get("args", {})
               and e["args"]["correlation"] not in cpu)
    assert want > 0
    out, _ = analyse(trace_dir("negative_queue"))
    assert trace_rows(out).unlaunched_gpu_events.tolist() == [want]
    launch = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
              "ts": 0, "dur": 5, "args": {"correlation": 1}}
    d = write_ranks({0: [launch, gpu_kernel("a", 10, 5, corr=1), gpu_kernel("b", 20, 5, corr=2),
                         gpu_kernel("c", 30, 5, corr=3), gpu_kernel("d", 40, 5)]})
    out, _ = analyse(d)
    ranks = table(out, "/ranks")
    assert ranks.step_filter_applied.tolist() == [0], ranks
    assert ranks.unlaunched_gpu_events.tolist() == [2], ranks


def test_replays_recorded_short_are_counted_under_their_graph():
    """Every fourth recorded replay lacks one kernel: its row counts the
    replays short, under the signature of the whole graph with the same
    first kernel, and the notes and the summary say so."""
    d, truth = graph_job("--graph-short", "4")
    out, p = analyse(d)
    g = table(out, "/graph_launches")
    assert_counts(g, truth)
    shorts = g.groupby("rank").short_replays.sum()
    for rank, want in truth["ranks"].items():
        assert shorts.loc[int(rank)] == want["short"] > 0, (rank, shorts)
    for _, row in g.iterrows():
        whole = g[(g["rank"] == row["rank"]) & (g.first_kernel == row.first_kernel)
                  & (g.kernels_min == 4)]
        assert len(whole) == 1, (row, g)
        if row.kernels_min == 3:
            assert row.short_replays == row.recorded and row.short_of == whole.signature.iloc[0]
        else:
            assert row.short_replays == 0 and row.short_of == "", row
    for note, (rank, want) in zip(table(out, "/ranks").input_notes, truth["ranks"].items()):
        assert f"{want['short']} of {want['recorded']} graph replays have fewer kernels than " \
               "their graph" in note, note
    total = sum(w["short"] for w in truth["ranks"].values())
    recorded = sum(w["recorded"] for w in truth["ranks"].values())
    assert f"Graph replays: {total} of {recorded} recorded replays have fewer kernels than " \
           "their graph, on 2 ranks" in p.stdout, p.stdout


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
