"""Turns a Kineto (PyTorch profiler) trace into the two other inputs hta-mpi
reads, holding the same records:

  to_nsys_sqlite(trace, path)  an SQLite file with the tables and columns of
                               `nsys export --type sqlite` (NVIDIA's "SQLite
                               Export Schema Reference"); graph_trace=True
                               writes graph replays as nsys
                               --cuda-graph-trace=graph does: one
                               CUPTI_ACTIVITY_KIND_GRAPH_TRACE row per replay
                               spanning its GPU records, and none of those
  to_cupti_csv(trace, folder)  a CUPTI activity CSV folder in the CUPTI
                               notebook's layout (times in microseconds)

Only what those formats record is carried: GPU kernels, copies, sets and
synchronisations, CUDA runtime and driver calls, and user annotations (as
NVTX ranges).  CPU operators, Python functions, GPU-side annotations and
the profiler's own spans have no place in them and are left out.  Times
are exact: numbers are parsed as decimals, so "1712195495519689.047" us is
1712195495519689047 ns in SQLite and written back with three decimals in
CSV.  Rows keep the trace's order.

Used by tests/test_inputs.py; run alone it converts one file:
    python3 tests/kineto_convert.py TRACE.json.gz out.sqlite out_csv_folder
"""
import csv
import decimal
import gzip
import json
import os
import re
import sqlite3
import sys

# The session start written (Kineto's traces do not give it; any start
# serves, the times being already absolute).
SESSION_START_NS = 1
SCHEMA_VERSION = "hta-mpi-converter-1"   # what the files say in META_DATA_EXPORT

# The ENUM tables as real exports write them (nsys 2024.5 and 2024.6, see
# ../shared/traces/nsys/): id, name, label, with Kineto's spelling of each.
# Memory kinds are numbered Nsight's way (Pageable first), not CUPTI's.
COPY_KINDS = ["UNKNOWN", "HTOD", "DTOH", "HTOA", "ATOH", "ATOA", "ATOD", "DTOA", "DTOD",
              "HTOH", "PTOP"]
COPY_LABELS = ["Unknown", "Host-to-Device", "Device-to-Host", "Host-to-Array", "Array-to-Host",
               "Array-to-Array", "Array-to-Device", "Device-to-Array", "Device-to-Device",
               "Host-to-Host", "Peer-to-Peer"]
COPY_SPELLING = ["Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD",
                 "HtoH", "PtoP"]
MEM_KINDS = ["PAGEABLE", "PINNED", "DEVICE", "ARRAY", "MANAGED", "DEVICE_STATIC",
             "MANAGED_STATIC", "UNKNOWN"]
MEM_SPELLING = ["Pageable", "Pinned", "Device", "Array", "Managed", "Device Static",
                "Managed Static", "Unknown"]
SYNC_KINDS = ["UNKNOWN", "EVENT_SYNCHRONIZE", "STREAM_WAIT_EVENT", "STREAM_SYNCHRONIZE",
              "CONTEXT_SYNCHRONIZE"]
SYNC_LABELS = ["Unknown", "Event sync", "Stream wait sync", "Stream sync", "Context sync"]
SYNC_SPELLING = ["Unknown Sync", "Event Sync", "Stream Wait Event", "Stream Sync",
                 "Context Sync"]
NVTX_PUSH_POP_RANGE = 59

GPU_CATEGORIES = {"kernel": "kernel", "gpu_memcpy": "gpu_memcpy", "gpu_memset": "gpu_memset",
                  "cuda_sync": "cuda_sync"}
API_CATEGORIES = {"cuda_runtime", "cuda_driver"}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def ns(value):
    """Kineto microseconds (int or Decimal) to integer nanoseconds, rounded
    half up at the fourth decimal as hta-mpi's JSON reader does."""
    return int((decimal.Decimal(value) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def is_number(v):
    return isinstance(v, (int, decimal.Decimal)) and not isinstance(v, bool)


def records(events):
    """(category, event, start_ns, end_ns) of every record the formats carry."""
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat, ts, dur = e.get("cat"), e.get("ts"), e.get("dur")
        if not (is_number(ts) and is_number(dur)):
            continue
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if cat in GPU_CATEGORIES and not is_number(args.get("stream")):
            continue
        if cat in GPU_CATEGORIES or cat in API_CATEGORIES or cat == "user_annotation":
            start = ns(ts)
            yield cat, e, args, start, start + ns(dur)


def correlation(args):
    c = args.get("correlation")
    return int(c) if is_number(c) else None


def memory_kind(db, spelling):
    """The ENUM_CUDA_MEM_KIND id of a Kineto memory kind.  ROCm traces name
    kinds CUDA has not ("Host"): those get rows of their own, which the
    reader knows only by their label."""
    if spelling in MEM_SPELLING:
        return MEM_SPELLING.index(spelling)
    row = db.execute("SELECT id FROM ENUM_CUDA_MEM_KIND WHERE label = ?", (spelling,)).fetchone()
    if row:
        return row[0]
    new = db.execute("SELECT max(id) + 1 FROM ENUM_CUDA_MEM_KIND").fetchone()[0]
    db.execute("INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?, ?, ?)",
               (new, "CUDA_MEMOPR_MEMORY_KIND_OTHER_" + str(new), spelling))
    return new


def copy_kinds(db, name):
    """(copyKind, srcKind, dstKind) of "Memcpy HtoD (Pageable -> Device)"."""
    m = re.match(r"Memcpy (\w+) \((.+) -> (.+)\)$", name)
    if not m:
        return 0, 0, 0
    kind = COPY_SPELLING.index(m[1]) if m[1] in COPY_SPELLING else 0
    return kind, memory_kind(db, m[2]), memory_kind(db, m[3])


def memset_kind(db, name):
    m = re.match(r"Memset \((.+)\)$", name)
    return memory_kind(db, m[1]) if m else 0


# The tables as NVIDIA's "SQLite Schema Reference" documents them: the
# kernel table in the form of schema 3.28.1 (Nsight Systems 2026.4), whose
# kernels carry graphId ("Kernel graph ID.") beside graphNodeId
# ("REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)"); the others in the
# form of the 2024.5 and 2024.6 exports of ../shared/traces/nsys/, where
# copies and sets carry graphNodeId only.
NSYS_SCHEMA = """
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,
  gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER,
  sharedMemoryLimitConfig INTEGER, qmdBulkReleaseDone INTEGER, qmdPreexitDone INTEGER,
  qmdLastCtaDone INTEGER, graphId INTEGER, clusterX INTEGER, clusterY INTEGER,
  clusterZ INTEGER, clusterSchedulingPolicy INTEGER, maxPotentialClusterSize INTEGER,
  maxActiveClusters INTEGER, sharedMemoryRequestedPercentage INTEGER,
  tensorSizeMinusOneElements TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
  returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
  deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER,
  srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,
  graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
  graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,
  int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
  floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
"""


# CUPTI_ACTIVITY_KIND_GRAPH_TRACE, the export of CUPTI's
# CUpti_ActivityGraphTrace2 (correlationId, start, end, deviceId, contextId,
# streamId, graphId), with the columns nsys adds to every GPU table
# (greenContextId, globalPid) and graphExecId, as public readers of nsys
# 2024 exports declare it (NVIDIA's schema reference has no entry we found).
GRAPH_TRACE_SCHEMA = """CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL,
  end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  graphId INTEGER NOT NULL, graphExecId INTEGER NOT NULL)"""


# The kernel columns the converters write, in this order, and the insert
# (tensorSizeMinusOneElements, NOT NULL, is left empty).
KERNEL_COLUMNS = ("start", "end", "deviceId", "contextId", "streamId", "correlationId",
                  "globalPid", "demangledName", "shortName", "mangledName", "launchType",
                  "cacheConfig", "registersPerThread", "gridX", "gridY", "gridZ", "blockX",
                  "blockY", "blockZ", "staticSharedMemory", "dynamicSharedMemory",
                  "localMemoryPerThread", "localMemoryTotal", "gridId", "sharedMemoryExecuted",
                  "graphNodeId", "sharedMemoryLimitConfig", "graphId")
INSERT_KERNEL = (f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL ({', '.join(KERNEL_COLUMNS)}, "
                 f"tensorSizeMinusOneElements) VALUES ({', '.join('?' * len(KERNEL_COLUMNS))}, '')")


def enum_rows(prefix, keys, spellings):
    return [(i, prefix + k, s) for i, (k, s) in enumerate(zip(keys, spellings))]


def create_nsys_database(path, version=SCHEMA_VERSION):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.executescript(NSYS_SCHEMA)
    db.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', ?)", (version,))
    # Kineto's times are UTC epoch times, as `nsys export --ts-normalize=true`
    # stores them: the total shift applied is the session's start.
    db.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '', '')",
               (SESSION_START_NS,))
    db.executemany("INSERT INTO META_DATA_EXPORT VALUES (?, ?)",
                   [("EXPORT_PARAM_TIME_NORMALIZE", "true"),
                    ("EXPORT_CONFIG_TIME_SHIFT", str(SESSION_START_NS))])
    db.executemany("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?,?,?)",
                   enum_rows("CUDA_MEMCPY_KIND_", COPY_KINDS, COPY_LABELS))
    db.executemany("INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?,?,?)",
                   enum_rows("CUDA_MEMOPR_MEMORY_KIND_", MEM_KINDS, MEM_SPELLING))
    db.executemany("INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (?,?,?)",
                   enum_rows("CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_", SYNC_KINDS, SYNC_LABELS))
    return db


class Strings:
    def __init__(self, db):
        self.db, self.ids = db, {}

    def __call__(self, text):
        if text not in self.ids:
            self.ids[text] = len(self.ids)
            self.db.execute("INSERT INTO StringIds VALUES (?, ?)", (self.ids[text], text))
        return self.ids[text]


# The API version Nsight appends to a runtime call's name (the CUPTI
# callback's), for the calls whose version is not v7000's.
API_VERSIONS = {"cudaGraphLaunch": "v10000"}


def api_name(name):
    """Nsight's runtime names carry the API version ("cudaLaunchKernel_v7000",
    "cudaGraphLaunch_v10000")."""
    return f"{name}_{API_VERSIONS.get(name, 'v7000')}" if name.startswith("cuda") else name


GRAPH_LAUNCHES = {"cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"}


def graph_nodes(events):
    """{correlation: {id(event): (graphId, graphNodeId)}} of the GPU records of
    graph replays, as CUPTI records them: a replay's records carry the
    correlation of the graph launch call (CUpti_ActivityKernel11:
    "identical to the correlation ID in the driver or runtime API activity
    record that launched the kernel"), the graph's id and each its node's.
    Kineto keeps no graph identity: replays with the same GPU records' names
    in start order are taken for one graph, each position for one node;
    graphs and nodes are numbered from 1 in order of first replay."""
    launches = {correlation(args) for cat, e, args, _, _ in records(events)
                if cat in API_CATEGORIES and e.get("name") in GRAPH_LAUNCHES}
    replays = {}
    for cat, e, args, start, _ in records(events):
        if cat in GPU_CATEGORIES and correlation(args) in launches:
            replays.setdefault(correlation(args), []).append((start, str(e.get("name", "")), e))
    graphs, ids = {}, {}
    for corr, members in replays.items():
        members.sort(key=lambda m: m[0])
        signature = tuple(name for _, name, _ in members)
        if signature not in graphs:
            first_node = 1 + sum(len(s) for s in graphs)
            graphs[signature] = (len(graphs) + 1, first_node)
        graph, first_node = graphs[signature]
        ids[corr] = {id(e): (graph, first_node + i) for i, (_, _, e) in enumerate(members)}
    return ids


def dim(args, key, i):
    v = args.get(key)
    return int(v[i]) if isinstance(v, list) and len(v) > i and is_number(v[i]) else 0


def write_graph_trace(db, replays):
    """One GRAPH_TRACE row per replay: {correlation: [start, end, device,
    context, stream, graphId]}, in order of start."""
    db.execute(GRAPH_TRACE_SCHEMA)
    for corr, (start, end, device, context, stream, graph) in sorted(
            replays.items(), key=lambda kv: kv[1][0]):
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (?,?,?,?,NULL,?,?,1,?,?)",
                   (start, end, device, context, stream, corr, graph, graph))


def to_nsys_sqlite(trace_path, out_path, graph_trace=False):
    db = create_nsys_database(out_path)
    string = Strings(db)
    nvtx_count = 0
    events = load(trace_path)
    nodes = graph_nodes(events)
    replays = {}
    for cat, e, args, start, end in records(events):
        name = str(e.get("name", ""))
        corr = correlation(args)
        gpu = (start, end, int(args.get("device", 0)) if is_number(args.get("device")) else 0,
               int(args.get("context", 0)) if is_number(args.get("context")) else 0,
               int(args["stream"]) if cat in GPU_CATEGORIES else 0, corr, 1)
        graph, node = nodes.get(corr, {}).get(id(e), (None, None))
        if graph_trace and graph is not None:
            span = replays.setdefault(corr, [start, end, gpu[2], gpu[3], gpu[4], graph])
            span[0], span[1] = min(span[0], start), max(span[1], end)
            continue
        if cat == "kernel":
            name_id = string(name)
            db.execute(INSERT_KERNEL,
                       gpu + (name_id, string(name.split("(")[0].split("<")[0].split()[-1]
                                              if name.split() else name), name_id, 0, 0,
                              int(args.get("registers per thread", 0) or 0),
                              dim(args, "grid", 0), dim(args, "grid", 1), dim(args, "grid", 2),
                              dim(args, "block", 0), dim(args, "block", 1), dim(args, "block", 2),
                              int(args.get("shared memory", 0) or 0), 0, 0, 0, 0, 0, node, 0,
                              graph))
        elif cat == "gpu_memcpy":
            kind, src, dst = copy_kinds(db, name)
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES "
                       "(?,?,?,?,?,?,?,?,?,0,?,?,0,0,0,0,0,?)",
                       gpu + (int(args.get("bytes", 0)), kind, src, dst, node))
        elif cat == "gpu_memset":
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?,?,?,?,?,?,?,0,?,?,?)",
                       gpu + (int(args.get("bytes", 0)), node, memset_kind(db, name)))
        elif cat == "cuda_sync":
            kind = SYNC_SPELLING.index(name) if name in SYNC_SPELLING else 0
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?,?,?,?,?,?,?,?,0)",
                       gpu + (kind,))
        elif cat in API_CATEGORIES:
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,0,1,?,?,0,0)",
                       (start, end, corr, string(api_name(name))))
        else:
            # Newer exports keep the text in StringIds (textId), older ones
            # inline (text): alternate, so the reader is tested on both.
            nvtx_count += 1
            inline = nvtx_count % 2
            db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid) "
                       "VALUES (?,?,?,?,?,1)",
                       (start, end, NVTX_PUSH_POP_RANGE, name if inline else None,
                        None if inline else string(name)))
    if graph_trace:
        write_graph_trace(db, replays)
    db.commit()
    db.close()


CSV_FILES = {"kernel": "kernel.csv", "gpu_memcpy": "gpu_memcpy.csv",
             "gpu_memset": "gpu_memset.csv", "cuda_sync": "cuda_sync.csv",
             "cuda_runtime": "cuda_runtime.csv", "cuda_driver": "cuda_driver.csv",
             "user_annotation": "user_annotation.csv"}
CSV_COLUMNS = ["start", "end", "dur", "name", "correlation", "stream", "device", "context",
               "grid", "block", "shared memory", "cat"]


def us(value_ns):
    """Nanoseconds as microseconds with three decimals, exactly."""
    sign = "-" if value_ns < 0 else ""
    value_ns = abs(value_ns)
    return f"{sign}{value_ns // 1000}.{value_ns % 1000:03d}"


def to_cupti_csv(trace_path, folder):
    os.makedirs(folder, exist_ok=True)
    rows = {cat: [] for cat in CSV_FILES}
    for cat, e, args, start, end in records(load(trace_path)):
        corr = correlation(args)
        row = [us(start), us(end), us(end - start), str(e.get("name", "")),
               "" if corr is None else corr,
               int(args["stream"]) if cat in GPU_CATEGORIES else "",
               args.get("device", ""), args.get("context", ""),
               str(args.get("grid", "")), str(args.get("block", "")),
               args.get("shared memory", ""), cat]
        if cat in ("gpu_memcpy", "gpu_memset"):
            row.append(int(args.get("bytes", 0)))
        rows[cat].append(row)
    for cat, file in CSV_FILES.items():
        if cat != "kernel" and not rows[cat]:
            continue
        with open(os.path.join(folder, file), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(CSV_COLUMNS + (["bytes"] if cat in ("gpu_memcpy", "gpu_memset") else []))
            w.writerows(rows[cat])


if __name__ == "__main__":
    to_nsys_sqlite(sys.argv[1], sys.argv[2])
    to_cupti_csv(sys.argv[1], sys.argv[3])
