"""CUDA graph replays in Nsight Systems exports (parse/nsys_sqlite.c,
docs/definitions.md "Inputs" and "Graph launches").

CUPTI gives every GPU record of a replay the correlation id of the
cudaGraphLaunch call that launched it, and in an Nsight export the
graph's id and the node's (CUPTI_ACTIVITY_KIND_KERNEL.graphId and
graphNodeId): hta-mpi maps a replay to its launch through that
correlation, as it does a Kineto trace's.  So `hta-tracegen --graphs G:N`
(and with --graph-drop K, some replays unrecorded) gives the same tables
as a Kineto trace and as the export tests/kineto_convert.py makes of it
(graphId and graphNodeId written as NVIDIA documents them).

Compared: /graph_launches (the replays), /launch_stats (the launch calls
and their delays), /kernels (the GPU records) and /idle_time (the idle
between them): what the export records.  Not compared: /ranks describes
each file (its name, format, size); on other jobs an export lacks the CPU
operators, Python functions and profiler spans the converter leaves out,
which the CPU-side tables are built from (tests/test_inputs.py).

The counts are checked again from the export alone with Python's sqlite3
(launches, distinct (graphId, correlationId) replays, kernels, nodes per
replay), not through the converter's truth, since a reader tested only on
files its own converter wrote can share the converter's mistake.  Graph
records without their launch are noted.  Replays traced whole (nsys
--cuda-graph-trace=graph, CUPTI_ACTIVITY_KIND_GRAPH_TRACE rows, written by
the converter's graph_trace mode) are one GPU event each: busy time is
checked against the union of the replays' spans computed from the Kineto
trace and from the export, the launches against the node-level export's.
"""
import json
import sqlite3

from common import *
import kineto_convert as kc

COMPARED = ("graph_launches", "launch_stats", "kernels", "idle_time")
GRAPHS, KERNELS, STEPS = 3, 4, 6


def graph_job(*extra):
    """The Kineto job, the export of each rank beside it in a folder of its
    own, and the generator's truth."""
    d = os.path.join(tmpdir(), "job")
    subprocess.run([TRACEGEN, "--graphs", f"{GRAPHS}:{KERNELS}", "--ranks", "2",
                    "--steps", str(STEPS), "-o", d] + list(extra), check=True)
    exports = tmpdir()
    for name in sorted(os.listdir(d)):
        kc.to_nsys_sqlite(os.path.join(d, name),
                          os.path.join(exports, name.split(".json")[0] + ".sqlite"))
    with open(d + ".graphs_truth.json") as f:
        return d, exports, json.load(f)


def sorted_rows(df):
    return df.sort_values(list(df.columns)).reset_index(drop=True)


def assert_same_tables(kineto, export):
    for name in COMPARED:
        a, b = sorted_rows(table(kineto, name)), sorted_rows(table(export, name))
        assert len(a) and list(a.columns) == list(b.columns), (name, a, b)
        pd.testing.assert_frame_equal(a, b, check_exact=True, obj=name)


def kept_launches(db):
    """{correlationId: start} of the graph launch calls in the steps the
    step filter keeps (every NVTX step but the last, as the generator
    writes one step more)."""
    steps = db.execute("SELECT start FROM NVTX_EVENTS ORDER BY start").fetchall()
    first, last = steps[0][0], steps[-1][0]
    return dict(db.execute(
        "SELECT r.correlationId, r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
        "JOIN StringIds s ON s.id = r.nameId "
        "WHERE s.value LIKE 'cudaGraphLaunch_v%' AND r.start >= ? AND r.start < ?",
        (first, last)))


def replays_from_sqlite(path):
    """Per graphId: (first kernel, {correlationId: nodes}) of the replays of
    the kept launches, and the launches with no graph record, from the
    export alone."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    launches = kept_launches(db)
    graphs = {}
    for graph, corr, nodes, first in db.execute(
            "SELECT k.graphId, k.correlationId, count(DISTINCT k.graphNodeId), "
            "(SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL f JOIN StringIds s "
            " ON s.id = f.demangledName WHERE f.correlationId = k.correlationId "
            " ORDER BY f.start LIMIT 1) "
            "FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE k.graphId IS NOT NULL "
            "GROUP BY k.graphId, k.correlationId"):
        if corr in launches:
            graphs.setdefault(graph, (first, {}))[1][corr] = nodes
    recorded = {c for _, replays in graphs.values() for c in replays}
    return graphs, len(launches) - len(recorded)


def check_against_sqlite(export_dir, result):
    """/graph_launches of each rank equals what sqlite3 reads from its
    export: a row per graph with its replays and kernels, and the
    unrecorded launches in a row without a signature."""
    g = table(result, "graph_launches")
    ranks = table(result, "ranks").set_index("file")["rank"]
    for name in sorted(os.listdir(export_dir)):
        path = os.path.join(export_dir, name)
        rows = g[g["rank"] == ranks[path]]
        graphs, unrecorded = replays_from_sqlite(path)
        assert len(graphs) == GRAPHS, (path, graphs)
        for first, replays in graphs.values():
            row = rows[rows.first_kernel == first]
            assert len(row) == 1, (first, rows)
            row = row.iloc[0]
            assert (row.launches, row.recorded) == (len(replays), len(replays)), (row, replays)
            assert row.kernels == sum(replays.values()), (row, replays)
            assert (row.kernels_min, row.kernels_max) == (min(replays.values()),
                                                          max(replays.values())), row
        missing = rows[rows.signature == ""]
        assert list(missing.launches) == ([unrecorded] if unrecorded else []), (missing, unrecorded)
        assert (missing.recorded == 0).all(), missing
    return g


def test_same_tables_as_kineto_with_every_replay():
    d, exports, truth = graph_job()
    kineto, _ = analyse(d)
    export, _ = analyse(exports)
    assert_same_tables(kineto, export)
    g = check_against_sqlite(exports, export)
    assert (g.recorded == g.launches).all() and (g.kernels_min == KERNELS).all(), g
    assert g.launches.sum() == sum(w["launches"] for w in truth["ranks"].values()), g
    assert (table(export, "ranks").input_notes == "").all()


def test_same_tables_as_kineto_with_unrecorded_replays():
    """Every fourth replay unrecorded (some of each graph): the same
    tables, the unrecorded launches counted apart, and both forms note the
    coverage alike."""
    d, exports, truth = graph_job("--graph-drop", "4")
    kineto, _ = analyse(d)
    export, _ = analyse(exports)
    assert_same_tables(kineto, export)
    g = check_against_sqlite(exports, export)
    missing = sum(w["launches"] - w["recorded"] for w in truth["ranks"].values())
    assert g[g.signature == ""].launches.sum() == missing > 0, g
    notes = table(export, "ranks").input_notes
    assert list(notes) == list(table(kineto, "ranks").input_notes), notes
    assert notes.str.contains("graph replays under-recorded").all(), notes


def test_graph_records_without_their_launch_are_noted():
    """The first two launch calls of rank 0 removed from its export (the
    capture began after them): the note counts the GPU records left
    without a launch, as sqlite3 counts them."""
    _, exports, _ = graph_job()
    path = os.path.join(exports, sorted(os.listdir(exports))[0])
    db = sqlite3.connect(path)
    gone = [c for c, in db.execute("SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                                   "ORDER BY start LIMIT 2")]
    db.execute(f"DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId IN "
               f"({','.join('?' * len(gone))})", gone)
    db.commit()
    orphans, = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId > 0 "
                          "AND correlationId NOT IN (SELECT correlationId "
                          "FROM CUPTI_ACTIVITY_KIND_RUNTIME)").fetchone()
    db.close()
    assert orphans == 2 * KERNELS, orphans
    out, _ = analyse(path)
    note = table(out, "ranks").input_notes[0]
    assert note == f"{orphans} GPU records of CUDA graph nodes have no launch call in the " \
                   "export: their replays are not in /graph_launches", note


def graph_level_job():
    """The job of graph_job, and each rank's export written as nsys
    --cuda-graph-trace=graph writes it: one GRAPH_TRACE row per replay
    spanning its kernels, and no kernel rows."""
    d, node_level, truth = graph_job()
    graph_level = tmpdir()
    for name in sorted(os.listdir(d)):
        kc.to_nsys_sqlite(os.path.join(d, name),
                          os.path.join(graph_level, name.split(".json")[0] + ".sqlite"),
                          graph_trace=True)
    return d, node_level, graph_level, truth


def union_us(spans):
    """The length of the union of [start, end) spans, and first start to
    last end, in us."""
    busy, reach = 0, None
    for start, end in sorted(spans):
        if reach is None or start >= reach:
            busy += end - start
            reach = end
        elif end > reach:
            busy += end - reach
            reach = end
    return busy / 1000, (max(e for _, e in spans) - min(s for s, _ in spans)) / 1000


def replay_spans_from_json(path):
    """The replays of the launches the step filter keeps (every step but
    the last) as [first kernel start, last kernel end) in ns, from the
    Kineto trace."""
    events = list(kc.records(kc.load(path)))
    steps = sorted(start for cat, e, _, start, _ in events
                   if cat == "user_annotation" and str(e.get("name")).startswith("ProfilerStep"))
    kept = {kc.correlation(args) for cat, e, args, start, _ in events
            if e.get("name") == "cudaGraphLaunch" and steps[0] <= start < steps[-1]}
    spans = {}
    for cat, _, args, start, end in events:
        if cat == "kernel" and kc.correlation(args) in kept:
            s = spans.setdefault(kc.correlation(args), [start, end])
            s[0], s[1] = min(s[0], start), max(s[1], end)
    return [tuple(s) for s in spans.values()]


def replay_spans_from_sqlite(path):
    """The GRAPH_TRACE rows of the kept launches, from the export alone."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    launches = kept_launches(db)
    rows = db.execute("SELECT correlationId, start, end "
                      "FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE").fetchall()
    db.close()
    return [(start, end) for corr, start, end in rows if corr in launches]


def busy_and_span(result, rank):
    """(busy, first GPU start to last GPU end) in us of a rank, from
    /temporal_breakdown (busy = kernel_time - idle_time)."""
    row = table(result, "temporal_breakdown").set_index("rank").loc[rank]
    return row.kernel_time_us - row.idle_time_us, row.kernel_time_us


def test_replays_traced_whole_are_one_gpu_event_each():
    """nsys --cuda-graph-trace=graph: each GRAPH_TRACE row is one GPU event
    of its launch.  Busy time is the union of the replays' spans (the
    generator leaves 5 us between a replay's kernels, which a graph-level
    row cannot show), checked against the Kineto trace and the export;
    the launches are those of the node-level job, each replay one kernel
    "CUDA graph <graphId>"; the note says the kernels are missing."""
    d, node_level, graph_level, truth = graph_level_job()
    nodes, _ = analyse(node_level)
    graphs, _ = analyse(graph_level)
    ranks = table(graphs, "ranks").set_index("file")["rank"]
    node_ranks = table(nodes, "ranks").set_index("file")["rank"]
    for name in sorted(os.listdir(d)):
        export = name.split(".json")[0] + ".sqlite"
        rank = ranks[os.path.join(graph_level, export)]
        assert node_ranks[os.path.join(node_level, export)] == rank
        spans = replay_spans_from_json(os.path.join(d, name))
        assert sorted(spans) == sorted(replay_spans_from_sqlite(
            os.path.join(graph_level, export))), name
        busy, span = union_us(spans)
        assert len(spans) == GRAPHS * STEPS and busy == len(spans) * (45 * KERNELS - 5), busy
        got_busy, got_span = busy_and_span(graphs, rank)
        node_busy, node_span = busy_and_span(nodes, rank)
        assert abs(got_busy - busy) < 1e-6 and abs(got_span - span) < 1e-6, (got_busy, busy)
        # The node-level job is busy only while its kernels run: the span
        # is the same, the gaps inside the replays are idle there.
        assert abs(node_span - span) < 1e-6 and \
            abs(node_busy - len(spans) * 40 * KERNELS) < 1e-6, node_busy
    g = table(graphs, "graph_launches").sort_values(["rank", "first_kernel"])
    n = table(nodes, "graph_launches").sort_values(["rank", "first_kernel"])
    assert list(g.launches) == list(n.launches) and list(g.recorded) == list(n.recorded), (g, n)
    assert (g.kernels == g.recorded).all() and (g.kernels_max == 1).all(), g
    assert set(g.first_kernel) == {f"CUDA graph {i}" for i in range(1, GRAPHS + 1)}, g
    assert g.launches.sum() == sum(w["launches"] for w in truth["ranks"].values()), g
    stats = table(graphs, "launch_stats").set_index("rank")
    node_stats = table(nodes, "launch_stats").set_index("rank")
    assert (stats.graph_launches == node_stats.graph_launches).all(), stats
    assert (stats.graph_gpu_events == stats.graph_launches).all(), stats
    k = table(graphs, "kernels")
    assert set(k.name) == set(g.first_kernel) and (k["count"] == STEPS).all(), k
    whole = GRAPHS * (STEPS + 1)
    for note in table(graphs, "ranks").input_notes:
        assert note == f"{whole} CUDA graph replays traced as whole graphs (nsys " \
                       "--cuda-graph-trace=graph): each is one GPU event \"CUDA graph " \
                       "<graphId>\" and their kernels are not in the export; profile with " \
                       "--cuda-graph-trace=node for node-level detail", note


def test_replay_without_timestamps_counts_as_unrecorded():
    """A GRAPH_TRACE row with start = end = 0 (CUPTI: "timestamp
    information could not be collected") is no GPU event: its launch is
    an unrecorded replay, and the notes say so.  A row on deviceId
    INT_MAX is the rank's, not another device's."""
    _, _, graph_level, _ = graph_level_job()
    path = os.path.join(graph_level, sorted(os.listdir(graph_level))[0])
    db = sqlite3.connect(path)
    corr, = db.execute("SELECT correlationId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE "
                       "ORDER BY start LIMIT 1 OFFSET 1").fetchone()
    db.execute("UPDATE CUPTI_ACTIVITY_KIND_GRAPH_TRACE SET start = 0, end = 0 "
               "WHERE correlationId = ?", (corr,))
    # CUPTI's deviceId INT_MAX: the graph starts with a host node, on no
    # device of the rank's (no note of several devices).
    db.execute("UPDATE CUPTI_ACTIVITY_KIND_GRAPH_TRACE SET deviceId = 2147483647 "
               "WHERE correlationId = ?", (corr + 1,))
    db.commit()
    untimed, = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE "
                          "WHERE start = 0 AND end = 0").fetchone()
    launches = len(kept_launches(db))
    db.close()
    assert untimed == 1 and corr in kept_launches(sqlite3.connect(path))
    out, _ = analyse(path)
    g = table(out, "graph_launches")
    assert list(g[g.signature == ""].launches) == [untimed], g
    assert g.recorded.sum() == launches - untimed and g.launches.sum() == launches, g
    note = table(out, "ranks").input_notes[0]
    assert f"; {untimed} of them have no timestamps and count as unrecorded" in note, note
    assert "graph replays under-recorded: 1 of" in note, note
    assert "analysed as one rank" not in note, note


def test_critical_path_takes_whole_replays():
    """--graph-sync: each step's replays end in a device synchronize, so
    the path runs through every replay.  Traced whole, a replay is one
    kernel on the path, its span (45 N - 5 us) its compute time, beside
    the 5 us step_prologue kernel of each step."""
    d = os.path.join(tmpdir(), "job")
    subprocess.run([TRACEGEN, "--graphs", f"2:{KERNELS}", "--graph-sync", "--ranks", "1",
                    "--steps", "3", "-o", d], check=True)
    export = os.path.join(tmpdir(), "rank0.sqlite")
    kc.to_nsys_sqlite(os.path.join(d, os.listdir(d)[0]), export, graph_trace=True)
    out, _ = analyse(export, extra=["--critical-path"])
    path = table(out, "critical_path")
    assert len(path) == 3 and (path.graph_ok == 1).all(), path
    assert (path.gpu_compute_bound_us == 2 * (45 * KERNELS - 5) + 5).all(), path
    names = set(table(out, "critical_path_names").name)
    assert {"CUDA graph 1", "CUDA graph 2"} <= names, names


if __name__ == "__main__":
    main([test_same_tables_as_kineto_with_every_replay,
          test_same_tables_as_kineto_with_unrecorded_replays,
          test_graph_records_without_their_launch_are_noted,
          test_replays_traced_whole_are_one_gpu_event_each,
          test_replay_without_timestamps_counts_as_unrecorded,
          test_critical_path_takes_whole_replays])
