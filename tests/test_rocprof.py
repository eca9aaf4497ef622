"""rocprofv3's output (docs/definitions.md, "Inputs: rocprofv3").

Generated forms: a generated Kineto trace, cut to what rocprofv3 records,
is written as a rocpd database (and, by tests/rocprof_convert.py, in the
other forms); every form sits in one directory, is analysed in one run on
two processes, and every per-rank table must be the same for each.

The real JSON results (../shared/traces/rocprofv3/, one process of an 8 x
MI350X training job, kernel dispatches only) are analysed and checked
against values computed here from the raw file with Python's json: the
dispatch count, each kernel's count and total time, the RCCL total, the
span, the idle time and the exclusive time of each kernel-type
combination.  Bad files fail alone, with one line naming the file."""
import collections
import csv
import glob
import gzip
import json
import os
import shutil
import sqlite3

import h5py
import numpy as np

import rocprof_convert as rc
from common import all_tables, analyse, generated, main, require_traces, table, tmpdir, TRACES
from test_inputs import (BANDWIDTH_COLUMNS, CROSS_RANK, KINETO_ONLY, READ_COLUMNS,
                         assert_same_rows, rows_of, without_bandwidth)

REAL_JSON = "rocprofv3/tl_mi350x_pid908/908_results.json.gz"
REL_TOL = 1e-9


def real_json():
    require_traces()
    return os.path.join(TRACES, REAL_JSON)


def kernel_name(symbol):
    """The name the reader documents: formatted, else demangled, else as is."""
    return (symbol["formatted_kernel_name"] or symbol["demangled_kernel_name"]
            or symbol["kernel_name"])


def kernel_type(name):
    """HTA's name rules (docs/definitions.md, "Kernel type")."""
    if name.startswith(("nccl", "hip", "hccl")) or "ncclKernel" in name:
        return "COMMUNICATION"
    if name.startswith(("Memcpy", "Memset", "hipMemcpy", "hipMemset", "dma")):
        return "MEMORY"
    return "COMPUTATION"


def union_ns(intervals):
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def exclusive_by_combination(typed):
    """ns during which exactly each set of kernel types is active."""
    points = []
    for t, s, e in typed:
        points.append((s, 1, t))
        points.append((e, -1, t))
    points.sort(key=lambda p: (p[0], p[1]))
    active = collections.Counter()
    out = collections.Counter()
    last = None
    for at, step, t in points:
        kinds = frozenset(k for k, n in active.items() if n > 0)
        if last is not None and kinds and at > last:
            out[kinds] += at - last
        active[t] += step
        last = at
    return out


def combination_name(kinds):
    order = ["COMPUTATION", "COMMUNICATION", "MEMORY"]
    return " overlapping ".join(k for k in order if k in kinds)


def test_real_json():
    path = real_json()
    with gzip.open(path) as f:
        doc = json.load(f)["rocprofiler-sdk-tool"][0]
    symbols = {s["kernel_id"]: kernel_name(s) for s in doc["kernel_symbols"]}
    dispatches = doc["buffer_records"]["kernel_dispatch"]
    by_name = collections.defaultdict(list)
    typed = []
    for d in dispatches:
        name = symbols[d["dispatch_info"]["kernel_id"]]
        s, e = d["start_timestamp"], d["end_timestamp"]
        by_name[name].append(e - s)
        typed.append((kernel_type(name), s, e))
    span = max(e for _, _, e in typed) - min(s for _, s, _ in typed)
    idle = span - union_ns([(s, e) for _, s, e in typed])
    rccl = sum(sum(v) for n, v in by_name.items() if n.startswith("ncclDevKernel"))

    out, _ = analyse(path)
    ranks = table(out, "ranks")
    assert list(ranks["status"]) == ["ok"] and list(ranks["input_format"]) == ["rocprof-json"]
    assert ranks["gpu_events"][0] == len(dispatches) == 43915, ranks["gpu_events"][0]
    assert ranks["host"][0] == doc["metadata"]["node"]["hostname"], ranks["host"][0]
    assert "no HIP runtime calls" in ranks["input_notes"][0], ranks["input_notes"][0]

    kernels = table(out, "kernels").set_index("name")
    assert len(kernels) == len(by_name) == 80, len(kernels)
    for name, durations in by_name.items():
        row = kernels.loc[name]
        assert row["count"] == len(durations), (name, row["count"], len(durations))
        assert abs(row["sum_us"] - sum(durations) / 1e3) <= REL_TOL * sum(durations), name
    comm = kernels[kernels["kernel_type"] == "COMMUNICATION"]
    assert comm["count"].sum() == 1310, comm["count"].sum()
    assert abs(comm["sum_us"].sum() - rccl / 1e3) <= REL_TOL * rccl, (comm["sum_us"].sum(), rccl)

    tb = table(out, "temporal_breakdown")
    assert abs(tb["kernel_time_us"][0] - span / 1e3) < 1e-3, (tb["kernel_time_us"][0], span)
    assert abs(tb["idle_time_us"][0] - idle / 1e3) < 1e-3, (tb["idle_time_us"][0], idle)

    by_rank = table(out, "kernel_type_by_rank").set_index("kernel_type")["sum_us"]
    want = {combination_name(k): v / 1e3 for k, v in exclusive_by_combination(typed).items()}
    assert sorted(by_rank.index) == sorted(want), (list(by_rank.index), want)
    for k, v in want.items():
        assert abs(by_rank[k] - v) < 1e-3, (k, by_rank[k], v)


def tiny_results(command, raw_file, output_file):
    """A results document of one dispatch, with the given command line and
    output path (as configured, and as rocprofv3 expanded it)."""
    return {"rocprofiler-sdk-tool": [{
        "metadata": {"pid": 1, "node": {"hostname": "node-a"}, "command": command,
                     "config": {"raw_output_path": "/out", "raw_output_file": raw_file,
                                "output_path": "/out", "output_file": output_file}},
        "agents": [{"id": {"handle": 9}, "type": 2, "logical_node_type_id": 0}],
        "kernel_symbols": [{"kernel_id": 1, "formatted_kernel_name": "gemm"}],
        "buffer_records": {"kernel_dispatch": [{
            "correlation_id": {"internal": 1}, "start_timestamp": 1000,
            "end_timestamp": 3000, "dispatch_info": {"agent_id": {"handle": 9},
                                                    "queue_id": {"handle": 2},
                                                    "kernel_id": 1}}]}}]}


def test_rank():
    """The rank: a launcher's variable in the command line, else the output
    path's placeholder, else the file name."""
    d = tmpdir()
    docs = {
        "a_results.json": tiny_results(["env", "OMPI_COMM_WORLD_RANK=5", "python", "t.py"],
                                       "%hostname%/%pid%", "node-a/1"),
        "b_results.json": tiny_results(["python", "t.py"], "r%env{OMPI_COMM_WORLD_RANK}%/%pid%",
                                       "r3/1"),
        "c_results.json": tiny_results(["python", "t.py"], "rank%rank%_%pid%", "rank2_1"),
        "rank-7_results.json": tiny_results(["python", "t.py"], "%hostname%/%pid%",
                                            "node-a/1"),
    }
    for name, doc in docs.items():
        with open(os.path.join(d, name), "w") as f:
            json.dump(doc, f)
    out, _ = analyse(d)
    ranks = table(out, "ranks")
    got = {os.path.basename(f): (r, src) for f, r, src in
           zip(ranks["file"], ranks["rank"], ranks["rank_source"])}
    assert got == {"a_results.json": (5, "recorded"), "b_results.json": (3, "recorded"),
                   "c_results.json": (2, "recorded"),
                   "rank-7_results.json": (7, "file_name")}, got
    assert set(ranks["input_format"]) == {"rocprof-json"}, set(ranks["input_format"])


def generated_forms():
    """A directory with a generated trace cut to what rocprofv3 records,
    and the same records as each rocprofv3 form; returns (dir, {form: file
    name})."""
    src = glob.glob(os.path.join(generated(ranks=1, size_mb=0.3), "*"))[0]
    d = tmpdir()
    kineto = os.path.join(d, "rank-0.json")
    rc.rocm_like(src, kineto)
    rc.to_rocpd(kineto, os.path.join(d, "rank-1_results.db"))
    rc.to_rocprof_csv(kineto, os.path.join(d, "rank-2_"))
    rc.to_rocprof_json(kineto, os.path.join(d, "rank-3_results.json"))
    return d, {"kineto": "rank-0.json", "rocpd": "rank-1_results.db",
               "rocprof-csv": "rank-2_kernel_trace.csv", "rocprof-json": "rank-3_results.json"}


def test_generated_forms_agree():
    d, forms = generated_forms()
    out, _ = analyse(d, processes=2)
    ranks = table(out, "ranks")
    rank_of = {os.path.basename(f): r for f, r in zip(ranks["file"], ranks["rank"])}
    fmt = {os.path.basename(f): x for f, x in zip(ranks["file"], ranks["input_format"])}
    assert {fmt[f] for f in forms.values()} == set(forms), fmt
    assert list(ranks["status"]) == ["ok"] * len(forms), list(ranks["error"])
    tables = all_tables(out)
    base = rank_of[forms["kineto"]]
    for form, name in forms.items():
        if form == "kineto":
            continue
        r = rank_of[name]
        for t, data in tables.items():
            if t in CROSS_RANK or t in KINETO_ONLY:
                continue
            if t == "timeline":
                order = list(tables["timeline_ranks"])
                assert np.array_equal(data[order.index(base)], data[order.index(r)]), form
                continue
            skip = {"rank"} | (READ_COLUMNS if t == "ranks" else set())
            a, b = rows_of(data, base), rows_of(data, r)
            if form == "rocprof-csv" and t == "memory_bw":  # rocprofv3's CSV has no bytes
                skip |= BANDWIDTH_COLUMNS | {"bytes", "count"}
            if form == "rocprof-csv" and t == "rank_metrics":
                a, b = without_bandwidth(a), without_bandwidth(b)
            assert_same_rows(t, a, b, skip, form)
    kernels = table(out, "kernels")
    assert len(kernels[kernels["rank"] == base]) > 5, "the generated trace has kernels"


def test_rocpd_one_rank_per_agent():
    """A database of two GPUs is two ranks, each with its own dispatches
    (one process drove both: its recorded rank is neither's); merged, one
    rank, its rank the launcher's variable in the recorded environment."""
    d = tmpdir()
    kineto = os.path.join(d, "k.json")
    rc.rocm_like(glob.glob(os.path.join(generated(ranks=1, size_mb=0.3), "*"))[0], kineto)
    db_path = os.path.join(tmpdir(), "node_results.db")
    rc.to_rocpd(kineto, db_path, environment={"OMPI_COMM_WORLD_RANK": "6", "PATH": "/bin"})
    os.remove(kineto)
    with sqlite3.connect(db_path) as db:
        db.execute('INSERT INTO "rocpd_info_agent_0f1e2d3c" (id, nid, pid, type, type_index) '
                   'VALUES (2, 1, 1, "GPU", 1)')
        db.execute('UPDATE "rocpd_kernel_dispatch_0f1e2d3c" SET agent_id = 2 WHERE id % 2 = 0')
        per_agent = dict(db.execute('SELECT agent_id, count(*) FROM '
                                    '"rocpd_kernel_dispatch_0f1e2d3c" GROUP BY agent_id'))
        # Every copy is agent 1's (tests/rocprof_convert.py).
        per_agent[1] += db.execute('SELECT count(*) FROM "rocpd_memory_copy_0f1e2d3c"').fetchone()[0]
    out, _ = analyse(db_path)
    ranks = table(out, "ranks").set_index("file")
    assert sorted(ranks.index) == [f"{db_path}@device=1", f"{db_path}@device=2"], ranks.index
    for agent, n in per_agent.items():
        got = ranks.loc[f"{db_path}@device={agent}", "gpu_events"]
        assert got == n, (agent, got, n)
    merged, _ = analyse(db_path, extra=["--merge-devices"])
    ranks = table(merged, "ranks")
    assert list(ranks["rank"]) == [6] and list(ranks["rank_source"]) == ["recorded"], ranks
    assert "devices" in ranks["input_notes"][0] or "device" in ranks["input_notes"][0], ranks


def test_json_one_rank_per_agent():
    """A JSON result of one process that drove two of its node's eight GPUs
    is two ranks, each with its own dispatches and copies (computed here
    from the document), none for the GPUs without work; the process's
    recorded rank is neither's.  Renamed, the file is read as one rank."""
    d = tmpdir()
    kineto = os.path.join(d, "k.json")
    rc.rocm_like(glob.glob(os.path.join(generated(ranks=1, size_mb=0.3), "*"))[0], kineto)
    path = os.path.join(tmpdir(), "4242_results.json")
    rc.to_rocprof_json(kineto, path)
    with open(path) as f:
        doc = json.load(f)
    process = doc["rocprofiler-sdk-tool"][0]
    process["metadata"]["command"] = ["env", "RANK=6", "python"]
    # Eight GPUs, handles 100.. with indices 0..7: the work goes to 2 and 5.
    process["agents"] = [{"id": {"handle": 99}, "type": 1}] + [
        {"id": {"handle": 100 + i}, "type": 2, "logical_node_type_id": i, "product_name": ""}
        for i in range(8)]
    records = process["buffer_records"]
    records["marker_api"] = []  # no steps: every kernel is in /kernels
    for i, rec in enumerate(records["kernel_dispatch"]):
        rec["dispatch_info"]["agent_id"]["handle"] = 102 if i % 3 else 105
    for i, rec in enumerate(records["memory_copy"]):
        rec["dst_agent_id"]["handle"] = 105 if i % 2 else 102
    with open(path, "w") as f:
        json.dump(doc, f)
    symbols = {s["kernel_id"]: kernel_name(s) for s in process["kernel_symbols"]}
    want = {}
    for agent, index in ((102, 2), (105, 5)):
        kernels = collections.defaultdict(list)
        for rec in records["kernel_dispatch"]:
            if rec["dispatch_info"]["agent_id"]["handle"] == agent:
                kernels[symbols[rec["dispatch_info"]["kernel_id"]]].append(
                    rec["end_timestamp"] - rec["start_timestamp"])
        copies = sum(rec["dst_agent_id"]["handle"] == agent for rec in records["memory_copy"])
        want[f"{path}@device={index}"] = (kernels, sum(map(len, kernels.values())) + copies)

    out, _ = analyse(path, processes=2)
    ranks = table(out, "ranks")
    assert sorted(ranks["file"]) == sorted(want), list(ranks["file"])
    assert list(ranks["status"]) == ["ok", "ok"], list(ranks["error"])
    assert set(ranks["input_format"]) == {"rocprof-json"}, set(ranks["input_format"])
    assert 6 not in set(ranks["rank"]), list(ranks["rank"])
    kernels = table(out, "kernels")
    for f, r, gpu_events in zip(ranks["file"], ranks["rank"], ranks["gpu_events"]):
        by_name, events = want[f]
        assert gpu_events == events, (f, gpu_events, events)
        mine = kernels[kernels["rank"] == r].set_index("name")
        mine = mine[~mine.index.str.startswith("Memcpy")]
        assert sorted(mine.index) == sorted(by_name), (f, sorted(mine.index))
        for name, durations in by_name.items():
            assert mine.loc[name, "count"] == len(durations), (f, name)
            assert abs(mine.loc[name, "sum_us"] - sum(durations) / 1e3) <= 1e-6 * sum(durations)

    renamed = os.path.join(tmpdir(), "4242.json")
    shutil.copy(path, renamed)
    out, _ = analyse(renamed)
    ranks = table(out, "ranks")
    assert list(ranks["file"]) == [renamed] and list(ranks["rank"]) == [6], ranks
    assert "2 devices" in ranks["input_notes"][0], ranks["input_notes"][0]


# ---- RCCL calls' collective metadata ---------------------------------------

RCCL_RANKS = 3
# (communicator, call, count argument, count, datatype as RCCL prints it),
# in the order every rank issues them: two communicators, interleaved.
RCCL_CALLS = [("A", "ncclAllReduce", "count", 1024, "7"),
              ("A", "ncclAllReduce", "count", 4096, "7"),
              ("B", "ncclAllGather", "sendcount", 512, "ncclBfloat16"),
              ("A", "ncclAllReduce", "count", 2048, "7"),
              ("B", "ncclAllGather", "sendcount", 512, "ncclBfloat16"),
              ("A", "ncclAllReduce", "count", 8192, "7")]
COLLECTIVE = {"ncclAllReduce": "allreduce", "ncclAllGather": "allgather"}


def rccl_delay(rank, slot):
    """When rank's kernel of the slot-th call starts after the slot's
    time, ns."""
    return ((rank * 37 + slot * 11) % 5) * 10000


def rccl_rank_records(rank):
    """Rank's records: (slot, call record, launch record, kernel record),
    each (start, end, correlation); its stream and communicator handles
    differ from every other rank's, as a process's do."""
    out = []
    for slot, _ in enumerate(RCCL_CALLS):
        base = 10**12 + slot * 10**6
        start = base + rccl_delay(rank, slot)
        end = base + 5 * 10000 + 200000   # every rank ends together
        corr = 2 * slot + 1
        out.append((slot, (start - 50000, start - 2000, corr + 1),
                    (start - 40000, start - 30000, corr), (start, end, corr)))
    return out


def rccl_args(rank, slot):
    comm, call, count_name, count, dtype = RCCL_CALLS[slot]
    handle = f"0x{0x5500 + rank * 0x100 + (comm == 'B'):x}0000"
    return [{"pos": 0, "type": "const void*", "name": "sendbuff", "value": "0x7f0000"},
            {"pos": 2, "type": "unsigned long", "name": count_name, "value": str(count)},
            {"pos": 3, "type": "ncclDataType_t", "name": "datatype", "value": dtype},
            {"pos": 4, "type": "ncclComm*", "name": "comm", "value": handle}]


def rccl_json(rank, path, with_args=True):
    """rocprofv3 JSON results of one rank of the RCCL job (documented
    layout; the RCCL_API_EXT records' args as rocprofiler-sdk writes
    them)."""
    calls = sorted({c[1] for c in RCCL_CALLS})
    buffers = {"kernel_dispatch": [], "hip_api": [], "rccl_api": []}
    stream = 100 + 7 * rank
    for slot, call, launch, kernel in rccl_rank_records(rank):
        buffers["rccl_api"].append(dict(
            kind=2, operation=calls.index(RCCL_CALLS[slot][1]), thread_id=1,
            correlation_id={"internal": call[2], "external": 0},
            start_timestamp=call[0], end_timestamp=call[1],
            **({"args": rccl_args(rank, slot)} if with_args else {})))
        buffers["hip_api"].append(dict(kind=1, operation=1, thread_id=1,
                                       correlation_id={"internal": launch[2], "external": 0},
                                       start_timestamp=launch[0], end_timestamp=launch[1]))
        buffers["kernel_dispatch"].append(dict(
            kind=3, operation=2, correlation_id={"internal": kernel[2], "external": 0},
            start_timestamp=kernel[0], end_timestamp=kernel[1], stream_id={"handle": stream},
            dispatch_info={"agent_id": {"handle": 100}, "queue_id": {"handle": 1},
                           "kernel_id": 1}))
    doc = {"rocprofiler-sdk-tool": [{
        "metadata": {"pid": 10 + rank, "node": {"hostname": "node-a"}, "command": ["python"],
                     "config": {}},
        "agents": [{"id": {"handle": 100}, "type": 2, "logical_node_type_id": 0}],
        "strings": {"buffer_records": [
            {"kind": "NONE", "operations": []},
            {"kind": "HIP_RUNTIME_API_EXT", "operations": ["hipNone", "hipLaunchKernel"]},
            {"kind": "RCCL_API_EXT", "operations": calls},
            {"kind": "KERNEL_DISPATCH", "operations": []}]},
        "kernel_symbols": [{"kernel_id": 1, "formatted_kernel_name": "ncclDevKernel_Generic_1"}],
        "buffer_records": buffers}]}
    with open(path, "w") as f:
        json.dump(doc, f)


def rccl_rocpd(rank, path):
    """The same records as a rocpd database: regions of category
    RCCL_API_EXT with their rocpd_arg rows, the internal correlation as
    the event's stack_id (rocprofv3 writes the external one as
    correlation_id)."""
    empty = os.path.join(tmpdir(), "empty.json")
    with open(empty, "w") as f:
        json.dump({"traceEvents": []}, f)
    rc.to_rocpd(empty, path)
    s = "_0f1e2d3c"
    db = sqlite3.connect(path)
    db.execute(f'CREATE TABLE "rocpd_arg{s}" (id INTEGER PRIMARY KEY, guid TEXT, '
               'event_id INTEGER NOT NULL, position INTEGER NOT NULL, type TEXT NOT NULL, '
               'name TEXT NOT NULL, value TEXT, extdata JSONB DEFAULT "{}" NOT NULL)')
    strings = {}

    def string(text):
        if text not in strings:
            strings[text] = db.execute(f'INSERT INTO "rocpd_string{s}" (string) VALUES (?)',
                                       (text,)).lastrowid
        return strings[text]

    def event(category, corr):
        return db.execute(f'INSERT INTO "rocpd_event{s}" (category_id, stack_id, '
                          'correlation_id) VALUES (?, ?, 0)', (string(category), corr)).lastrowid

    db.execute(f'INSERT INTO "rocpd_info_kernel_symbol{s}" (id, nid, pid, code_object_id, '
               'kernel_name, display_name) VALUES (1, 1, 1, 1, "k.kd", '
               '"ncclDevKernel_Generic_1")')
    for slot, call, launch, kernel in rccl_rank_records(rank):
        e = event("RCCL_API_EXT", call[2])
        db.execute(f'INSERT INTO "rocpd_region{s}" (nid, pid, tid, start, end, name_id, '
                   'event_id) VALUES (1, 1, 1, ?, ?, ?, ?)',
                   (call[0], call[1], string(RCCL_CALLS[slot][1]), e))
        for a in rccl_args(rank, slot):
            db.execute(f'INSERT INTO "rocpd_arg{s}" (event_id, position, type, name, value) '
                       'VALUES (?, ?, ?, ?, ?)', (e, a["pos"], a["type"], a["name"], a["value"]))
        e = event("HIP_RUNTIME_API_EXT", launch[2])
        db.execute(f'INSERT INTO "rocpd_region{s}" (nid, pid, tid, start, end, name_id, '
                   'event_id) VALUES (1, 1, 1, ?, ?, ?, ?)',
                   (launch[0], launch[1], string("hipLaunchKernel"), e))
        e = event("KERNEL_DISPATCH", kernel[2])
        db.execute(f'INSERT INTO "rocpd_kernel_dispatch{s}" (nid, pid, tid, agent_id, kernel_id, '
                   'dispatch_id, queue_id, stream_id, start, end, workgroup_size_x, '
                   'workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, '
                   'event_id) VALUES (1, 1, 1, ?, 1, ?, 1, ?, ?, ?, 1, 1, 1, 1, 1, 1, ?)',
                   (rc.GPU_AGENT, slot + 1, 100 + 7 * rank, kernel[0], kernel[1], e))
    db.commit()
    db.close()


def expected_collectives():
    """Per communicator ("rccl0" is A, the first one called), its instances
    in order: (collective, dtype, bytes, arrival skew us, total wait us)."""
    want = {"rccl0": [], "rccl1": []}
    for slot, (comm, call, count_name, count, dtype) in enumerate(RCCL_CALLS):
        delays = [rccl_delay(r, slot) for r in range(RCCL_RANKS)]
        torch_dtype = "Float" if dtype == "7" else "BFloat16"
        # An all-gather's sendcount is its input: its output, the message,
        # is unknown without the communicator's size.
        size = count * 4 if call == "ncclAllReduce" else -1
        want["rccl0" if comm == "A" else "rccl1"].append(
            (COLLECTIVE[call], torch_dtype, size, (max(delays) - min(delays)) / 1e3,
             sum(max(delays) - d for d in delays) / 1e3))
    return want


def check_collectives(job, form):
    """The job's directory, analysed on two processes: every rank read in
    `form`, no note of stream order, the instances expected."""
    out, _ = analyse(job, processes=2)
    ranks = table(out, "ranks")
    assert list(ranks["status"]) == ["ok"] * RCCL_RANKS, list(ranks["error"])
    assert set(ranks["input_format"]) == {form}, set(ranks["input_format"])
    assert not any("order on each stream" in n for n in ranks["input_notes"]), \
        list(ranks["input_notes"])
    got = table(out, "collectives")
    want = expected_collectives()
    assert sorted(set(got["group"])) == sorted(want), sorted(set(got["group"]))
    for group, instances in want.items():
        rows = got[got["group"] == group].sort_values("start_us")
        assert len(rows) == len(instances), (group, len(rows))
        for (_, row), (collective, dtype, size, skew, wait) in zip(rows.iterrows(), instances):
            assert row["n_ranks"] == RCCL_RANKS, (group, row["n_ranks"])
            assert (row["collective"], row["dtype"], row["bytes"]) == (collective, dtype, size), \
                (group, row["collective"], row["dtype"], row["bytes"])
            assert abs(row["arrival_skew_us"] - skew) < 1e-6, (group, row["arrival_skew_us"], skew)
            assert abs(row["total_wait_us"] - wait) < 1e-6, (group, row["total_wait_us"], wait)
            assert row["mismatched_ranks"] == "", row


def test_rccl_metadata_json():
    """Three ranks' JSON results whose RCCL calls keep their args, each rank
    on its own stream (as its process numbers them): the collectives are
    matched by their metadata, per communicator, with the skews and waits
    of the construction; without the args, the notes say stream order."""
    d = tmpdir()
    for r in range(RCCL_RANKS):
        rccl_json(r, os.path.join(d, f"rank-{r}_results.json"))
    check_collectives(d, "rocprof-json")

    bare = tmpdir()
    for r in range(RCCL_RANKS):
        rccl_json(r, os.path.join(bare, f"rank-{r}_results.json"), with_args=False)
    out, _ = analyse(bare)
    notes = list(table(out, "ranks")["input_notes"])
    assert all("no collective metadata: collectives are matched across ranks by their order "
               "on each stream" in n for n in notes), notes
    with h5py.File(out, "r") as f:
        matched = "collectives" in f and set(table(out, "collectives")["group"])
    assert not matched or not matched & {"rccl0", "rccl1"}, matched


def test_rccl_metadata_rocpd():
    """The same job as rocpd databases (rocpd_arg rows): the same matches."""
    d = tmpdir()
    for r in range(RCCL_RANKS):
        rccl_rocpd(r, os.path.join(d, f"rank-{r}_results.db"))
    check_collectives(d, "rocpd")


def test_rccl_csv_stream_order():
    """rocprofv3's CSV keeps no RCCL arguments: its collectives are matched
    by stream order, and its notes say so."""
    d = tmpdir()
    prefix = os.path.join(d, "rank-0_")
    rows = {"kernel": [], "hip": [], "rccl": []}
    for slot, call, launch, kernel in rccl_rank_records(0):
        rows["kernel"].append(["KERNEL_DISPATCH", 1, 1, 100, 1, slot, 1,
                               "ncclDevKernel_Generic_1", kernel[2], kernel[0], kernel[1]])
        rows["hip"].append(["HIP_RUNTIME_API_EXT", "hipLaunchKernel", 10, 1, launch[2],
                            launch[0], launch[1]])
        rows["rccl"].append(["RCCL_API_EXT", RCCL_CALLS[slot][1], 10, 1, call[2], call[0],
                             call[1]])
    for kind, ending, header in (("kernel", "kernel_trace.csv", rc.KERNEL_HEADER[:11]),
                                 ("hip", "hip_api_trace.csv", rc.API_HEADER),
                                 ("rccl", "rccl_api_trace.csv", rc.API_HEADER)):
        with open(prefix + ending, "w", newline="") as f:
            w = csv.writer(f, quoting=csv.QUOTE_ALL)
            w.writerow(header)
            w.writerows(rows[kind])
    out, _ = analyse(prefix + "kernel_trace.csv")
    ranks = table(out, "ranks")
    assert list(ranks["status"]) == ["ok"], list(ranks["error"])
    assert "no collective metadata: collectives are matched across ranks by their order on " \
        "each stream" in ranks["input_notes"][0], ranks["input_notes"][0]


def test_mixed_directory():
    """rocprofv3 JSON (the real one and a generated one), CSV files, a rocpd
    database and a Kineto trace in one directory of one run: a rank each,
    each read by its own reader."""
    d, forms = generated_forms()
    shutil.copy(real_json(), os.path.join(d, "rank-5_results.json.gz"))
    out, _ = analyse(d, processes=3)
    ranks = table(out, "ranks")
    got = {os.path.basename(f): (fmt, status) for f, fmt, status in
           zip(ranks["file"], ranks["input_format"], ranks["status"])}
    assert got == {"rank-0.json": ("kineto", "ok"), "rank-1_results.db": ("rocpd", "ok"),
                   "rank-2_kernel_trace.csv": ("rocprof-csv", "ok"),
                   "rank-3_results.json": ("rocprof-json", "ok"),
                   "rank-5_results.json.gz": ("rocprof-json", "ok")}, got
    assert sorted(ranks["rank"]) == [0, 1, 2, 3, 5], list(ranks["rank"])
    kernels = table(out, "kernels")
    assert kernels[kernels["rank"] == 5]["count"].sum() == 43915


def run_bad(write, expected, name="bad_results.json", extra=()):
    """A bad file beside the real one: it fails alone, with one line."""
    d = tmpdir()
    shutil.copy(real_json(), os.path.join(d, "good_results.json.gz"))
    bad = os.path.join(d, name)
    write(bad)
    out, _ = analyse(d, expect=1, extra=extra)
    ranks = table(out, "ranks").set_index("file")
    assert ranks.loc[os.path.join(d, "good_results.json.gz"), "status"] == "ok"
    error = ranks.loc[bad, "error"]
    assert ranks.loc[bad, "status"] == "failed" and "\n" not in error, error
    assert error.startswith(bad) and expected in error, error


def test_rocpd_without_dispatches():
    def write(path):
        db = sqlite3.connect(path)
        db.execute('CREATE TABLE "rocpd_string_ab" (id INTEGER PRIMARY KEY, string TEXT)')
        db.execute('CREATE TABLE "rocpd_kernel_dispatch_ab" (id INTEGER PRIMARY KEY, '
                   'start BIGINT, end BIGINT)')
        db.commit()
        db.close()
    run_bad(write, "rocpd_event_ab: no such table", name="bad_results.db")


def test_damaged_database():
    """A damaged or empty *.db fails alone as a rocpd database, not as
    another form."""
    with sqlite3.connect(os.path.join(tmpdir(), "x.db")) as db:
        db.execute('CREATE TABLE "rocpd_kernel_dispatch_ab" (id INTEGER PRIMARY KEY)')
        path = db.execute("PRAGMA database_list").fetchone()[2]
    with open(path, "rb") as f:
        good = f.read()
    damaged = good[:100] + b"\xff" * (len(good) - 100)
    run_bad(lambda p: open(p, "wb").write(damaged), "rocpd database (schema unknown): "
            "sqlite_master: database disk image is malformed", name="bad_results.db")
    run_bad(lambda p: open(p, "wb").write(b""), "rocpd database (schema unknown): empty file",
            name="bad_results.db")


def test_csv_missing_column():
    def write(path):
        with open(path, "w") as f:
            f.write('"Kind","Kernel_Name","Correlation_Id","Start_Timestamp"\n'
                    '"KERNEL_DISPATCH","gemm","1","10"\n')
    run_bad(write, "line 1: no column 'End_Timestamp' in the header",
            name="9_kernel_trace.csv")


def test_truncated_json():
    with gzip.open(real_json()) as f:
        head = f.read(300000)
    run_bad(lambda p: open(p, "wb").write(head), "parse error at byte")


def test_not_rocprof_json():
    run_bad(lambda p: open(p, "w").write('{"traceEvents": []}'),
            'no "rocprofiler-sdk-tool" member', extra=["--input-format", "rocprof-json"])


def test_dispatch_without_symbol():
    doc = {"rocprofiler-sdk-tool": [{"kernel_symbols": [], "buffer_records": {
        "kernel_dispatch": [{"correlation_id": {"internal": 1}, "start_timestamp": 10,
                             "end_timestamp": 20, "dispatch_info": {"kernel_id": 7}}]}}]}
    run_bad(lambda p: open(p, "w").write(json.dumps(doc)), "names no kernel symbol")


if __name__ == "__main__":
    main([test_real_json, test_rank, test_generated_forms_agree, test_rocpd_one_rank_per_agent,
          test_json_one_rank_per_agent, test_rccl_metadata_json, test_rccl_metadata_rocpd,
          test_rccl_csv_stream_order,
          test_mixed_directory, test_rocpd_without_dispatches, test_damaged_database, test_csv_missing_column, test_truncated_json, test_not_rocprof_json,
          test_dispatch_without_symbol])
