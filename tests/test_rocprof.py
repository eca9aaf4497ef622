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
import glob
import gzip
import json
import os
import shutil
import sqlite3

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
          test_mixed_directory, test_rocpd_without_dispatches, test_csv_missing_column, test_truncated_json, test_not_rocprof_json,
          test_dispatch_without_symbol])
