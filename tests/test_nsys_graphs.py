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
files its own converter wrote can share the converter's mistake.  And what
only an export can say is noted: replays traced whole
(CUPTI_ACTIVITY_KIND_GRAPH_TRACE) and graph records without their launch.
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


# CUPTI_ACTIVITY_KIND_GRAPH_TRACE as the SQLite Schema Reference documents it.
GRAPH_TRACE = """CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL,
  end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  graphId INTEGER NOT NULL, graphExecId INTEGER NOT NULL)"""


def test_replays_traced_whole_are_noted():
    """nsys --cuda-graph-trace=graph: one GRAPH_TRACE row per replay and no
    node records.  The replays count as unrecorded, and the note says why
    and how to profile instead."""
    _, exports, _ = graph_job()
    path = os.path.join(exports, sorted(os.listdir(exports))[0])
    db = sqlite3.connect(path)
    db.execute(GRAPH_TRACE)
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE SELECT min(start), max(end), "
               "deviceId, contextId, NULL, streamId, correlationId, globalPid, graphId, graphId "
               "FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId > 0 GROUP BY correlationId")
    db.execute("DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId > 0")
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
               "streamId, correlationId, demangledName, shortName, registersPerThread, gridX, "
               "gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
               "localMemoryPerThread, localMemoryTotal, gridId, tensorSizeMinusOneElements) "
               "VALUES (1, 2, 0, 0, 7, NULL, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, '')")
    db.commit()
    whole, = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE").fetchone()
    db.close()
    assert whole == GRAPHS * (STEPS + 1), whole
    out, _ = analyse(path)
    note = table(out, "ranks").input_notes[0]
    assert f"{whole} CUDA graph replays traced as whole graphs (nsys --cuda-graph-trace=graph): " \
           "their kernels are not in the export and the GPU looks idle while they run; " \
           "profile with --cuda-graph-trace=node" in note, note
    g = table(out, "graph_launches")
    assert (g.recorded == 0).all() and g.launches.sum() == GRAPHS * STEPS, g


if __name__ == "__main__":
    main([test_same_tables_as_kineto_with_every_replay,
          test_same_tables_as_kineto_with_unrecorded_replays,
          test_graph_records_without_their_launch_are_noted,
          test_replays_traced_whole_are_noted])
