"""Real Nsight Systems exports (../shared/traces/nsys/, docs/definitions.md,
"Inputs"): what hta-mpi reads from each must agree with a computation
straight from the SQLite (Python's sqlite3 here, never the project's own
converter): kernels, copies and sets with Kineto's names, copy bandwidth
kinds, API calls counted once per call, the rank and world size the
recorded environment gives.  Exports without ENUM tables (nsys 2022) are
named through the numbering the newer exports' ENUM tables give.  Bad
real files (truncated, not SQLite, no kernel table, locked) each fail
alone with one line naming the file and the table, the other ranks
written."""
import os
import shutil
import sqlite3

from common import TRACES, Skip, analyse, locked_database, main, table, tmpdir

NSYS = os.path.join(TRACES, "nsys")
EXPORTS = {"pipit_saxpy": "saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
           "pipit_cloverleaf": "perlmutter-cloverleaf-cuda.sqlite",
           "nvfuser_report1": "report1.sqlite"}
NO_CUDA = ("jacc_no_cuda", "report1.sqlite")
# What each export's recorded environment says (SOURCE.md): (rank, world size).
RECORDED_RANK = {"pipit_saxpy": (0, 2), "pipit_cloverleaf": (0, 1), "nvfuser_report1": (-1, -1)}


def export(folder, name=None):
    path = os.path.join(NSYS, folder, name or EXPORTS[folder])
    if not os.path.isfile(path):
        raise Skip(f"the real Nsight exports are absent: no {path}")
    return path


def connect(path):
    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)


def has_table(db, name):
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def enum(db, table_name):
    """{id: name} of an ENUM table: the export's own, else pipit_cloverleaf's
    (nsys 2024.5), whose numbering is Nsight's."""
    if not has_table(db, table_name):
        db = connect(export("pipit_cloverleaf"))
    return dict(db.execute(f"SELECT id, name FROM {table_name}"))


def copy_spelling(name):
    """Kineto's spelling of CUDA_MEMCPY_KIND_HTOD: HtoD; Unified Memory
    migrations keep Nsight's key: UVM_HtoD."""
    key = name.split("CUDA_MEMCPY_KIND_")[1]
    uvm = key.startswith("UVM_")
    key = key[4:] if uvm else key
    word = "Unknown" if key == "UNKNOWN" else key[0] + "to" + key[3]
    return ("UVM_" if uvm else "") + word


def memory_spelling(name):
    """CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC: Device Static."""
    return name.split("MEMORY_KIND_")[1].replace("_", " ").title()


# Kineto's names of CUPTI's synchronisation types (libkineto's syncTypeString).
SYNC_SPELLING = {"UNKNOWN": "Unknown Sync", "EVENT_SYNCHRONIZE": "Event Sync",
                 "STREAM_WAIT_EVENT": "Stream Wait Event", "STREAM_SYNCHRONIZE": "Stream Sync",
                 "CONTEXT_SYNCHRONIZE": "Context Sync"}


def expected_records(path):
    """{name: (count, sum_ns, bytes)} of the kernels, copies, sets and
    synchronisations (which /kernels lists, as HTA does)."""
    db = connect(path)
    out = {}

    def add(name, dur, nbytes=0):
        c, s, b = out.get(name, (0, 0, 0))
        out[name] = (c + 1, s + dur, b + nbytes)

    for name, dur in db.execute("SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                                "JOIN StringIds s ON s.id = k.demangledName"):
        add(name, dur)
    copy, memory = enum(db, "ENUM_CUDA_MEMCPY_OPER"), enum(db, "ENUM_CUDA_MEM_KIND")
    if has_table(db, "CUPTI_ACTIVITY_KIND_MEMCPY"):
        for dur, nbytes, kind, src, dst in db.execute(
                "SELECT end - start, bytes, copyKind, srcKind, dstKind "
                "FROM CUPTI_ACTIVITY_KIND_MEMCPY"):
            add(f"Memcpy {copy_spelling(copy[kind])} "
                f"({memory_spelling(memory[src])} -> {memory_spelling(memory[dst])})", dur, nbytes)
    if has_table(db, "CUPTI_ACTIVITY_KIND_MEMSET"):
        for dur, nbytes, kind in db.execute("SELECT end - start, bytes, memKind "
                                            "FROM CUPTI_ACTIVITY_KIND_MEMSET"):
            add(f"Memset ({memory_spelling(memory[kind])})", dur, nbytes)
    if has_table(db, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"):
        sync = enum(db, "ENUM_CUPTI_SYNC_TYPE")
        for dur, kind in db.execute("SELECT end - start, syncType "
                                    "FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"):
            add(SYNC_SPELLING[sync[kind].split("SYNCHRONIZATION_TYPE_")[1]], dur)
    return out


def expected_calls(path):
    """{(category, name): calls}: one call per correlation id (an old
    export stores a call with a backtrace twice under one id), names
    without the API version suffix."""
    calls = {}
    for corr, name in connect(path).execute(
            "SELECT r.correlationId, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
            "JOIN StringIds s ON s.id = r.nameId"):
        base = name.rsplit("_v", 1)[0] if "_v" in name and name.rsplit("_v", 1)[1].isdigit() \
            else name
        cat = "cuda_driver" if base.startswith("cu") and not base.startswith("cuda") \
            else "cuda_runtime"
        calls.setdefault((cat, base), set()).add(corr)
    return {k: len(v) for k, v in calls.items()}


RESULTS = {}


def setup():
    """Each real export read as it is (two of them claim rank 0: one run
    each)."""
    for folder in EXPORTS:
        RESULTS[folder], _ = analyse(export(folder))


def result(folder, name):
    """A table of folder's run, after checking the rank was read."""
    ranks = table(RESULTS[folder], "ranks")
    traces = ranks[ranks.status != "missing"]  # the job's other ranks, without an export
    assert list(traces["status"]) == ["ok"] and list(traces["file"]) == [export(folder)], ranks
    return traces.reset_index(drop=True) if name == "ranks" else table(RESULTS[folder], name)


def test_kernels_copies_and_sets():
    """Every kernel, copy and set with Kineto's name, count and total time;
    copies named from the ENUM tables (CUDA_MEMCPY_KIND_*), or in an
    export without them through Nsight's numbering."""
    for folder in EXPORTS:
        got = result(folder, "kernels").set_index("name")
        want = expected_records(export(folder))
        assert set(got.index) == set(want), (folder, set(got.index) ^ set(want))
        for name, (count, sum_ns, _) in want.items():
            assert got.loc[name, "count"] == count, (folder, name)
            assert abs(got.loc[name, "sum_us"] - sum_ns / 1000) < 1e-6, (folder, name)


def test_copy_names_on_each_layout():
    """The names a Kineto trace of these programs would carry (SOURCE.md)."""
    names = {folder: {n for n in result(folder, "kernels")["name"] if n.startswith("Mem")}
             for folder in EXPORTS}
    both = {"Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pageable)"}
    assert names["pipit_saxpy"] == both, names
    assert names["pipit_cloverleaf"] == both, names
    assert names["nvfuser_report1"] == {"Memcpy DtoH (Device -> Pinned)", "Memset (Device)"}, names


def test_memory_bw_kinds():
    """/memory_bw's kinds, counts and bytes: HtoD and DtoH apart."""
    for folder in EXPORTS:
        got = result(folder, "memory_bw").set_index("kind")
        want = {}
        for name, (count, _, nbytes) in expected_records(export(folder)).items():
            if name.startswith("Mem"):
                kind = "Memset" if name.startswith("Memset") else name[:11]
                c, b = want.get(kind, (0, 0))
                want[kind] = (c + count, b + nbytes)
        assert set(got.index) == set(want), (folder, got.index, want)
        for kind, (count, nbytes) in want.items():
            assert (got.loc[kind, "count"], got.loc[kind, "bytes"]) == (count, nbytes), \
                (folder, kind, got.loc[kind])


def test_api_calls_counted_once():
    """pipit_saxpy stores 38 of its 57 calls twice (a backtrace record
    around the call's own): /activity_categories counts 57, /sync_calls 15
    cudaMemcpy; the newer exports' counts are their rows'."""
    for folder in EXPORTS:
        sync = result(folder, "sync_calls")
        want = expected_calls(export(folder))
        got = result(folder, "activity_categories").set_index("category")["count"]
        for cat in ("cuda_runtime", "cuda_driver"):
            assert got.get(cat, 0) == sum(n for (c, _), n in want.items() if c == cat), \
                (folder, cat, got)
        memcpy = sync[sync["api"] == "cudaMemcpy"]["count"]
        assert list(memcpy) == ([want[("cuda_runtime", "cudaMemcpy")]]
                                if ("cuda_runtime", "cudaMemcpy") in want else []), (folder, memcpy)
    saxpy = result("pipit_saxpy", "activity_categories").set_index("category")["count"]
    assert saxpy["cuda_runtime"] + saxpy["cuda_driver"] == 57, saxpy


def test_recorded_rank():
    """The rank and world size the recorded environment gives, its
    variables separated by NUL bytes (pipit_saxpy) or ';'."""
    for folder, (rank, size) in RECORDED_RANK.items():
        row = result(folder, "ranks").iloc[0]
        assert (row["claimed_rank"], row["world_size"]) == (rank, size), (folder, row)
        assert row["rank_source"] == ("recorded" if rank >= 0 else "fallback"), (folder, row)


def span_and_busy(path, tables):
    """(span, busy) in ns of the records of the GPU tables named: first
    start to last end, and the time their union covers."""
    db = connect(path)
    spans = []
    for t in tables:
        if has_table(db, "CUPTI_ACTIVITY_KIND_" + t):
            spans += db.execute(f"SELECT start, end FROM CUPTI_ACTIVITY_KIND_{t}").fetchall()
    spans.sort()
    busy, cur_s, cur_e = 0, None, None
    for s, e in spans:
        if cur_e is None or s > cur_e:
            busy += 0 if cur_e is None else cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    busy += cur_e - cur_s
    return max(e for _, e in spans) - spans[0][0], busy


WORK = ("KERNEL", "MEMCPY", "MEMSET")


def test_gpu_span_and_idle_like_hta():
    """/temporal_breakdown (HTA's rule: synchronisation records are GPU
    events): span from the first GPU record's start to the last's end,
    idle = span minus their union."""
    for folder in EXPORTS:
        span, busy = span_and_busy(export(folder), WORK + ("SYNCHRONIZATION",))
        row = result(folder, "temporal_breakdown").iloc[0]
        assert abs(row["kernel_time_us"] - span / 1000) < 1e-3, (folder, row, span)
        assert abs(row["idle_time_us"] - (span - busy) / 1000) < 1e-3, (folder, row, span - busy)


def test_waits_are_not_gpu_work():
    """hta-mpi's own tables leave the synchronisation records out, host
    waits as they are: /overlap_breakdown tiles the span of the kernels,
    copies and sets, and /gpu_gaps' idle (above and below the threshold)
    is that span minus their union.  pipit_cloverleaf (1312 Event Sync
    records) and nvfuser_report1 (one) have waits; pipit_saxpy none."""
    stretched = 0
    for folder in EXPORTS:
        span, busy = span_and_busy(export(folder), WORK)
        hta_span, _ = span_and_busy(export(folder), WORK + ("SYNCHRONIZATION",))
        stretched += hta_span > span
        parts = result(folder, "overlap_breakdown").iloc[0]
        got = sum(parts[f"{p}_us"] for p in ("compute", "communicate", "overlap", "empty"))
        assert abs(got - span / 1000) < 1e-3, (folder, got, span)
        metrics = result(folder, "rank_metrics").set_index("metric")["value"]
        idle = (metrics["gpu_gap_idle_above_threshold_us"] +
                metrics["gpu_gap_idle_below_threshold_us"])
        assert abs(idle - (span - busy) / 1000) < 1e-3, (folder, idle, span - busy)
    assert stretched >= 1, "no export has waits beyond its GPU work: the test tests nothing"


def test_graph_ids_absent_on_real_exports():
    """The three exports (schemas 2.9.1, 3.13.2, 3.16.1) have graphNodeId
    and no graphId on their kernels, NULL on every row (no graph launched
    them): nothing is noted of CUDA graphs."""
    with_node_column = 0
    for folder in EXPORTS:
        db = connect(export(folder))
        columns = {c for _, c, *_ in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")}
        assert "graphId" not in columns, folder
        if "graphNodeId" in columns:
            with_node_column += 1
            ids, = db.execute("SELECT count(graphNodeId) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
            assert ids == 0, (folder, ids)
        note = result(folder, "ranks")["input_notes"][0]
        assert "CUDA graph" not in note, (folder, note)
    assert with_node_column == 3, with_node_column


# ---- bad real files ------------------------------------------------------------

def copy_of(folder, d, name):
    path = os.path.join(d, name)
    shutil.copy(export(folder), path)
    os.chmod(path, 0o644)
    return path


def test_bad_real_files_fail_alone():
    """A truncated export, a file that is not SQLite, an export without
    CUDA tables and a locked one, beside a good one: each fails with one
    line naming the file and the table (or the lock), the good rank is
    written, and the progress line counts the failures as such."""
    d = tmpdir()
    good = copy_of("pipit_saxpy", d, "good.sqlite")
    truncated = copy_of("pipit_cloverleaf", d, "truncated.sqlite")
    with open(truncated, "r+b") as f:
        f.truncate(os.path.getsize(truncated) // 3)
    not_sqlite = os.path.join(d, "not_sqlite.sqlite")
    shutil.copy(os.path.join(NSYS, "pipit_saxpy", "SOURCE.md"), not_sqlite)
    no_cuda = os.path.join(d, "no_cuda.sqlite")
    shutil.copy(export(*NO_CUDA), no_cuda)
    locked = copy_of("nvfuser_report1", d, "locked.sqlite")
    with locked_database(locked):
        out, p = analyse(d, processes=2, expect=1)
    ranks = table(out, "ranks").set_index("file")
    assert ranks.loc[good, "status"] == "ok", ranks
    expected = {truncated: "sqlite_master: database disk image is malformed",
                not_sqlite: "file is not a database",
                no_cuda: "schema 3.24.14): CUPTI_ACTIVITY_KIND_KERNEL: no such table",
                locked: "locked"}
    for path, what in expected.items():
        error = ranks.loc[path, "error"]
        assert ranks.loc[path, "status"] == "failed" and path in error and what in error, \
            (path, error)
        lines = [line for line in p.stderr.splitlines() if path + ":" in line]
        assert len(lines) == 1 and what in lines[0], (path, p.stderr)
    assert len(table(out, "kernels")) == len(expected_records(good))
    progress = [line for line in p.stderr.splitlines() if line.startswith("hta-mpi: analysed")]
    assert progress and progress[-1].startswith("hta-mpi: analysed 1/5 traces, 4 failed"), \
        p.stderr


def test_old_schema_named_in_errors():
    """An nsys 2022 export (EXPORT_META_DATA, schema 2.9.1) that lacks the
    kernel table: the error quotes its schema."""
    d = tmpdir()
    path = copy_of("pipit_saxpy", d, "no_kernels.sqlite")
    db = sqlite3.connect(path)
    db.execute("DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL")
    db.commit()
    db.close()
    out, _ = analyse(d, expect=1)
    error = table(out, "ranks")["error"][0]
    assert "(schema 2.9.1): CUPTI_ACTIVITY_KIND_KERNEL: no such table" in error, error


if __name__ == "__main__":
    main([test_kernels_copies_and_sets, test_copy_names_on_each_layout, test_memory_bw_kinds,
          test_api_calls_counted_once, test_recorded_rank, test_gpu_span_and_idle_like_hta,
          test_waits_are_not_gpu_work, test_graph_ids_absent_on_real_exports,
          test_bad_real_files_fail_alone, test_old_schema_named_in_errors], setup=setup)
