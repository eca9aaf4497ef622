"""Writes the records of a Kineto trace in rocprofv3's three forms, from
their documented layouts (ROCm/rocprofiler-sdk): the JSON results
(--output-format json), the CSV files (<pid>_kernel_trace.csv, ...) and a
rocpd database (schema 3, source/share/rocprofiler-sdk-rocpd/
rocpd_tables.sql: the base tables with a _<uuid> suffix, only the columns
the reader reads and the NOT NULL ones).  No real rocpd database or CSV
output is public: the CSV and rocpd readers are tested on these files
only.

rocprofv3 records less than Kineto, so the trace is first cut to what it
can hold (rocm_like): kernels, copies, runtime calls and user annotations,
HIP's call names (cudaLaunchKernel -> hipLaunchKernel), copies named by
direction as the readers name them ("Memcpy HtoD (Host -> Device)") with
the bandwidth bytes / duration, no distributedInfo, and times on a boot
clock as rocprofv3's are (whole seconds taken off).  The three forms
then hold exactly the cut trace's records."""
import csv
import decimal
import gzip
import json
import os
import sqlite3

CARRIED = {"kernel", "gpu_memcpy", "cuda_runtime", "user_annotation"}
COPY_DIRECTIONS = {"HtoD": ("MEMORY_COPY_HOST_TO_DEVICE", "Memcpy HtoD (Host -> Device)"),
                   "DtoH": ("MEMORY_COPY_DEVICE_TO_HOST", "Memcpy DtoH (Device -> Host)"),
                   "DtoD": ("MEMORY_COPY_DEVICE_TO_DEVICE", "Memcpy DtoD (Device -> Device)"),
                   "HtoH": ("MEMORY_COPY_HOST_TO_HOST", "Memcpy HtoH (Host -> Host)")}
MARKER_CORRELATION = 10**9
BOOT_SECONDS = 63855
GPU_AGENT = 1


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return json.loads(f.read(), parse_float=decimal.Decimal)


def number(d):
    """A Decimal as JSON writes it: whole, or the float whose repr is its
    text (times of at most 15 significant digits)."""
    return int(d) if d == d.to_integral_value() else float(d)


def rocm_like(src, dst):
    """Writes src cut to what rocprofv3 records (see above) to dst."""
    doc = load(src)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    kept = []
    # rocprofv3's clock is the boot clock (tens of hours of nanoseconds, as
    # in the real result), not the epoch: whole seconds are taken off.
    first = min(decimal.Decimal(str(e["ts"])) for e in events if e.get("ph") == "X")
    shift = (first // 1000000 - BOOT_SECONDS) * 1000000
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in CARRIED:
            continue
        e = dict(e)
        e["ts"] = decimal.Decimal(str(e["ts"])) - shift
        if e["cat"] == "cuda_runtime" and e["name"].startswith("cuda"):
            e["name"] = "hip" + e["name"][4:]
        if e["cat"] == "gpu_memcpy":
            e["name"] = COPY_DIRECTIONS[e["name"].split()[1]][1]
            args = dict(e["args"])
            dur_ns = int(decimal.Decimal(e["dur"]) * 1000)
            args.setdefault("bytes", 0)
            args["memory bandwidth (GB/s)"] = args["bytes"] / dur_ns if dur_ns else 0
            e["args"] = args
        kept.append(e)
    with open(dst, "w") as f:
        json.dump({"traceEvents": kept}, f, default=number)


def records(path):
    """The cut trace's records: (kind, name, start_ns, end_ns, correlation,
    stream, bytes), kinds kernel, copy, call, marker; in trace order."""
    out = []
    markers = 0
    for e in load(path)["traceEvents"]:
        start = int(decimal.Decimal(str(e["ts"])) * 1000)
        end = start + int(decimal.Decimal(str(e["dur"])) * 1000)
        args = e.get("args", {})
        corr = args.get("correlation")
        if e["cat"] == "user_annotation":
            out.append(("marker", e["name"], start, end, MARKER_CORRELATION + markers, None, None))
            markers += 1
            continue
        kind = {"kernel": "kernel", "gpu_memcpy": "copy", "cuda_runtime": "call"}[e["cat"]]
        out.append((kind, e["name"], start, end, corr, args.get("stream"), args.get("bytes")))
    return out


def direction_of(name):
    return COPY_DIRECTIONS[name.split()[1]][0]


# ---- rocpd -----------------------------------------------------------------

def to_rocpd(trace, path, uuid="0f1e2d3c", environment=None):
    """A rocpd database (schema 3) holding trace's records."""
    s = "_" + uuid
    db = sqlite3.connect(path)
    db.executescript(f"""
        CREATE TABLE "rocpd_metadata{s}" (id INTEGER PRIMARY KEY, tag TEXT NOT NULL,
            value TEXT NOT NULL);
        CREATE TABLE "rocpd_string{s}" (id INTEGER PRIMARY KEY, guid TEXT, string TEXT NOT NULL
            UNIQUE);
        CREATE TABLE "rocpd_info_node{s}" (id INTEGER PRIMARY KEY, guid TEXT, hash BIGINT,
            machine_id TEXT, hostname TEXT);
        CREATE TABLE "rocpd_info_process{s}" (id INTEGER PRIMARY KEY, guid TEXT,
            nid INTEGER NOT NULL, ppid INTEGER, pid INTEGER NOT NULL, command TEXT,
            environment JSONB DEFAULT "{{}}" NOT NULL, extdata JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE "rocpd_info_agent{s}" (id INTEGER PRIMARY KEY, guid TEXT,
            nid INTEGER NOT NULL, pid INTEGER NOT NULL, type TEXT, absolute_index INTEGER,
            logical_index INTEGER, type_index INTEGER, name TEXT, product_name TEXT,
            extdata JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE "rocpd_info_kernel_symbol{s}" (id INTEGER PRIMARY KEY, guid TEXT,
            nid INTEGER NOT NULL, pid INTEGER NOT NULL, code_object_id INTEGER NOT NULL,
            kernel_name TEXT, display_name TEXT, extdata JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE "rocpd_event{s}" (id INTEGER PRIMARY KEY, guid TEXT, category_id INTEGER,
            stack_id INTEGER, parent_stack_id INTEGER, correlation_id INTEGER,
            extdata JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE "rocpd_region{s}" (id INTEGER PRIMARY KEY, guid TEXT,
            nid INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER NOT NULL,
            start BIGINT NOT NULL, end BIGINT NOT NULL, name_id INTEGER NOT NULL,
            event_id INTEGER, extdata JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE "rocpd_kernel_dispatch{s}" (id INTEGER PRIMARY KEY, guid TEXT,
            nid INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER,
            agent_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL,
            dispatch_id INTEGER NOT NULL, queue_id INTEGER NOT NULL,
            stream_id INTEGER NOT NULL, start BIGINT NOT NULL, end BIGINT NOT NULL,
            workgroup_size_x INTEGER NOT NULL, workgroup_size_y INTEGER NOT NULL,
            workgroup_size_z INTEGER NOT NULL, grid_size_x INTEGER NOT NULL,
            grid_size_y INTEGER NOT NULL, grid_size_z INTEGER NOT NULL,
            region_name_id INTEGER, event_id INTEGER, extdata JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE "rocpd_memory_copy{s}" (id INTEGER PRIMARY KEY, guid TEXT,
            nid INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER, start BIGINT NOT NULL,
            end BIGINT NOT NULL, name_id INTEGER NOT NULL, dst_agent_id INTEGER,
            dst_address INTEGER, src_agent_id INTEGER, src_address INTEGER,
            size INTEGER NOT NULL, queue_id INTEGER, stream_id INTEGER,
            region_name_id INTEGER, event_id INTEGER, extdata JSONB DEFAULT "{{}}" NOT NULL);
        CREATE VIEW rocpd_kernel_dispatch AS SELECT * FROM "rocpd_kernel_dispatch{s}";
    """)
    strings = {}

    def string(text):
        if text not in strings:
            strings[text] = len(strings) + 1
            db.execute(f'INSERT INTO "rocpd_string{s}" (id, string) VALUES (?, ?)',
                       (strings[text], text))
        return strings[text]

    db.execute(f'INSERT INTO "rocpd_metadata{s}" (tag, value) VALUES ("schema_version", "3")')
    db.execute(f'INSERT INTO "rocpd_info_node{s}" (id, hash, machine_id, hostname) '
               'VALUES (1, 7, "m", "node-a")')
    db.execute(f'INSERT INTO "rocpd_info_process{s}" (id, nid, pid, command, environment) '
               'VALUES (1, 1, 4242, "python train.py", ?)', (json.dumps(environment or {}),))
    db.execute(f'INSERT INTO "rocpd_info_agent{s}" (id, nid, pid, type, type_index, name, '
               'product_name) VALUES (0, 1, 1, "CPU", 0, "cpu", "EPYC"), '
               f'(?, 1, 1, "GPU", 0, "gfx942", "")', (GPU_AGENT,))
    symbols = {}
    for i, (kind, name, start, end, corr, stream, size) in enumerate(records(trace)):
        category = {"kernel": "KERNEL_DISPATCH", "copy": "MEMORY_COPY",
                    "call": "HIP_RUNTIME_API", "marker": "MARKER_CORE_RANGE_API"}[kind]
        event = db.execute(f'INSERT INTO "rocpd_event{s}" (category_id, correlation_id) '
                           'VALUES (?, ?)', (string(category), corr)).lastrowid
        if kind == "kernel":
            if name not in symbols:
                symbols[name] = len(symbols) + 1
                db.execute(f'INSERT INTO "rocpd_info_kernel_symbol{s}" (id, nid, pid, '
                           'code_object_id, kernel_name, display_name, extdata) '
                           'VALUES (?, 1, 1, 1, ?, ?, ?)',
                           (symbols[name], name + ".kd", name,
                            json.dumps({"formatted_kernel_name": name})))
            db.execute(f'INSERT INTO "rocpd_kernel_dispatch{s}" (nid, pid, tid, agent_id, '
                       'kernel_id, dispatch_id, queue_id, stream_id, start, end, '
                       'workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, '
                       'grid_size_y, grid_size_z, event_id) '
                       'VALUES (1, 1, 1, ?, ?, ?, 1, ?, ?, ?, 1, 1, 1, 1, 1, 1, ?)',
                       (GPU_AGENT, symbols[name], i, stream, start, end, event))
        elif kind == "copy":
            to_gpu = direction_of(name).endswith("TO_DEVICE")
            db.execute(f'INSERT INTO "rocpd_memory_copy{s}" (nid, pid, tid, start, end, '
                       'name_id, dst_agent_id, src_agent_id, size, queue_id, stream_id, '
                       'event_id) VALUES (1, 1, 1, ?, ?, ?, ?, ?, ?, 1, ?, ?)',
                       (start, end, string(direction_of(name)), GPU_AGENT if to_gpu else 0,
                        0 if to_gpu else GPU_AGENT, size, stream, event))
        else:
            db.execute(f'INSERT INTO "rocpd_region{s}" (nid, pid, tid, start, end, name_id, '
                       'event_id) VALUES (1, 1, 1, ?, ?, ?, ?)',
                       (start, end, string(name), event))
    db.commit()
    db.close()


# ---- CSV -------------------------------------------------------------------

KERNEL_HEADER = ["Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id",
                 "Kernel_Id", "Kernel_Name", "Correlation_Id", "Start_Timestamp",
                 "End_Timestamp", "Workgroup_Size_X", "Grid_Size_X"]
COPY_HEADER = ["Kind", "Direction", "Stream_Id", "Source_Agent_Id", "Destination_Agent_Id",
               "Correlation_Id", "Start_Timestamp", "End_Timestamp"]
API_HEADER = ["Domain", "Function", "Process_Id", "Thread_Id", "Correlation_Id",
              "Start_Timestamp", "End_Timestamp"]


def to_rocprof_csv(trace, prefix):
    """rocprofv3's CSV files of trace's records: PREFIXkernel_trace.csv,
    PREFIXmemory_copy_trace.csv (no bytes column, as rocprofv3 writes it),
    PREFIXhip_api_trace.csv, PREFIXmarker_api_trace.csv."""
    rows = {"kernel": [], "copy": [], "call": [], "marker": []}
    for i, (kind, name, start, end, corr, stream, _) in enumerate(records(trace)):
        if kind == "kernel":
            rows[kind].append(["KERNEL_DISPATCH", GPU_AGENT, 1, stream, 1, i, 0, name, corr,
                               start, end, 64, 4096])
        elif kind == "copy":
            to_gpu = direction_of(name).endswith("TO_DEVICE")
            rows[kind].append(["MEMORY_COPY", direction_of(name), stream,
                               0 if to_gpu else GPU_AGENT, GPU_AGENT if to_gpu else 0, corr,
                               start, end])
        else:
            domain = "HIP_RUNTIME_API" if kind == "call" else "MARKER_CORE_RANGE_API"
            rows[kind].append([domain, name, 4242, 1, corr, start, end])
    for kind, ending, header in (("kernel", "kernel_trace.csv", KERNEL_HEADER),
                                 ("copy", "memory_copy_trace.csv", COPY_HEADER),
                                 ("call", "hip_api_trace.csv", API_HEADER),
                                 ("marker", "marker_api_trace.csv", API_HEADER)):
        with open(prefix + ending, "w", newline="") as f:
            w = csv.writer(f, quoting=csv.QUOTE_ALL)
            w.writerow(header)
            w.writerows(rows[kind])


# ---- JSON ------------------------------------------------------------------

def to_rocprof_json(trace, path):
    """rocprofv3's JSON results of trace's records."""
    calls, symbols, kinds = ["hipNone"], {}, ["NONE", "HIP_RUNTIME_API", "MARKER_CORE_RANGE_API",
                                               "MEMORY_COPY", "KERNEL_DISPATCH"]
    copies_ops = ["MEMORY_COPY_NONE"] + [v[0] for v in COPY_DIRECTIONS.values()]
    buffers = {"kernel_dispatch": [], "hip_api": [], "marker_api": [], "memory_copy": []}
    messages = []
    for kind, name, start, end, corr, stream, size in records(trace):
        base = {"correlation_id": {"internal": corr, "external": 0},
                "start_timestamp": start, "end_timestamp": end}
        if kind == "kernel":
            symbols.setdefault(name, len(symbols) + 1)
            buffers["kernel_dispatch"].append(dict(base, kind=4, operation=2, dispatch_info={
                "agent_id": {"handle": 100}, "queue_id": {"handle": 1},
                "kernel_id": symbols[name]}, stream_id={"handle": stream}))
        elif kind == "copy":
            buffers["memory_copy"].append(dict(base, kind=3,
                                               operation=copies_ops.index(direction_of(name)),
                                               bytes=size, dst_agent_id={"handle": 100},
                                               src_agent_id={"handle": 100},
                                               stream_id={"handle": stream}))
        elif kind == "call":
            if name not in calls:
                calls.append(name)
            buffers["hip_api"].append(dict(base, kind=1, operation=calls.index(name)))
        else:
            messages.append({"key": corr, "value": name})
            buffers["marker_api"].append(dict(base, kind=2, operation=0))
    ops = {"HIP_RUNTIME_API": calls, "MARKER_CORE_RANGE_API": ["roctxRangePushA"],
           "MEMORY_COPY": copies_ops}
    doc = {"rocprofiler-sdk-tool": [{
        "metadata": {"pid": 4242, "node": {"hostname": "node-a"}, "command": ["python"],
                     "config": {}},
        "agents": [{"id": {"handle": 99}, "type": 1},
                   {"id": {"handle": 100}, "type": 2, "logical_node_type_id": GPU_AGENT,
                    "product_name": ""}],
        "strings": {"buffer_records": [{"kind": k, "operations": ops.get(k, [])} for k in kinds],
                    "marker_api": messages},
        "kernel_symbols": [{"kernel_id": i, "formatted_kernel_name": n, "kernel_name": n + ".kd"}
                           for n, i in symbols.items()],
        "buffer_records": buffers}]}
    with open(path, "w") as f:
        json.dump(doc, f)
