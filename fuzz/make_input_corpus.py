"""Seeds for fuzz_nsys_sqlite and fuzz_cupti_csv (fuzz/input_targets.c),
made at fuzz time from the real inputs beside the checkout, so nothing big
enters the repository:

  nsys_sqlite  each real Nsight export of TRACES/nsys/ cut down to a small
               export of the same schema (the tables the reader reads, their
               first rows, the strings those name, the ENUM and metadata
               tables, the environment's launcher variables only), on
               512-byte pages; and corrupt copies of each, after the cases of
               SQLite's own corruption tests (corrupt*.test): truncated
               files, a bad page size or page count in the header, b-tree
               pages of a wrong type or with too many cells, cell pointers off
               the page, a table rooted at page 1 or past the end, a schema
               whose SQL disagrees with the table, a bogus freelist.
  cupti_csv    small windows of the real Kineto traces of TRACES/hta/ as
               CUPTI CSV folders (tests/kineto_convert.py writes them), and
               hand-written odd folders (quotes, CRLF, a BOM, dur instead of
               end, missing columns).
  rocprof_json the real rocprofv3 results of TRACES/rocprofv3/ cut down to
               small documents of the same layout (metadata, the GPU
               agents, the first dispatches and the symbols they name, the
               strings the records name), with HIP calls, copies and
               marker ranges added around the dispatches; two of them
               also with their dispatches on two GPUs and RCCL calls
               with their args around the HIP calls (read per GPU too).
  rocprof_csv  the same windows as rocprofv3's CSV files (kernel_trace.csv,
               hip_api_trace.csv, memory_copy_trace.csv, marker_api_trace.csv,
               rccl_api_trace.csv, separated as for cupti_csv).
  rocpd        small windows of the real Kineto traces of TRACES/hta/ as
               rocpd databases (tests/rocprof_convert.py writes them, on
               512-byte pages), and corrupt copies of each as for
               nsys_sqlite.

Each input gets the harness's leading options byte (fuzz/targets.h).
usage: make_input_corpus.py TRACES_DIR OUT_DIR"""
import copy
import gzip
import json
import os
import random
import shutil
import sqlite3
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import kineto_convert as kc  # noqa: E402
import rocprof_convert as rc  # noqa: E402

LIMIT = 60 * 1024
SEPARATOR = b"\n=====\n"     # HTA_FUZZ_CSV_SEPARATOR
ACTIVITY = ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME",
            "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
            "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS"]
WHOLE = ["META_DATA_EXPORT", "EXPORT_META_DATA", "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND",
         "ENUM_CUPTI_SYNC_TYPE", "TARGET_INFO_CUDA_CONTEXT_INFO", "MPI_RANKS",
         "TARGET_INFO_SESSION_START_TIME"]
STRING_COLUMNS = ["nameId", "demangledName", "shortName", "textId"]
LAUNCHER = ("RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK",
            "PMI_SIZE", "PMIX_RANK", "SLURM_PROCID", "SLURM_NTASKS")


def save(out, kind, lead, data):
    path = os.path.join(out, kind, f"{kind}-{len(os.listdir(os.path.join(out, kind))):03d}")
    with open(path, "wb") as f:
        f.write(bytes([lead]) + data)


def tables_of(db):
    return {name.decode(): sql.decode() for name, sql in db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table'")}


def launcher_only(env):
    """The launcher's variables of a recorded environment, its separator kept."""
    sep = "\0" if "\0" in env else ";"
    return sep.join(v for v in env.split(sep) if v.split("=")[0] in LAUNCHER)


def small_export(src, dst, rows):
    """dst: src cut down to `rows` rows of each activity table."""
    db = sqlite3.connect(f"file:{src}?mode=ro&immutable=1", uri=True)
    db.text_factory = bytes
    schema = tables_of(db)
    if os.path.exists(dst):
        os.remove(dst)                      # an earlier, larger cut or another export
    out = sqlite3.connect(dst)
    out.execute("PRAGMA page_size = 512")
    strings = set()
    for table in ACTIVITY + WHOLE + ["StringIds", "TARGET_INFO_SYSTEM_ENV"]:
        if table in schema:
            out.execute(schema[table])
    for table in ACTIVITY + WHOLE:
        if table not in schema:
            continue
        cols = [r[1].decode() for r in db.execute(f"PRAGMA table_info({table})")]
        limit = f"ORDER BY start LIMIT {rows}" if table in ACTIVITY else ""
        for row in db.execute(f"SELECT * FROM {table} {limit}"):
            out.execute(f"INSERT INTO {table} VALUES ({','.join('?' * len(row))})", row)
            strings.update(row[cols.index(c)] for c in STRING_COLUMNS if c in cols)
    for i in strings - {None}:
        row = db.execute("SELECT id, value FROM StringIds WHERE id = ?", (i,)).fetchone()
        if row:
            out.execute("INSERT INTO StringIds VALUES (?, ?)", row)
    if "TARGET_INFO_SYSTEM_ENV" in schema:
        cols = [r[1].decode() for r in db.execute("PRAGMA table_info(TARGET_INFO_SYSTEM_ENV)")]
        if "value" in cols and "name" in cols:
            for row in db.execute("SELECT * FROM TARGET_INFO_SYSTEM_ENV "
                                  "WHERE name = 'DeviceEnvironment'"):
                row = list(row)
                row[cols.index("value")] = launcher_only(
                    row[cols.index("value")].decode("utf-8", "replace")).encode()
                out.execute(f"INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES "
                            f"({','.join('?' * len(row))})", row)
    out.commit()
    out.execute("VACUUM")
    out.close()


def page_size(data):
    size = struct.unpack(">H", data[16:18])[0]
    return 65536 if size == 1 else size


def btree_pages(data):
    """Offsets of the b-tree page headers (page 1's follows the file header)."""
    size = page_size(data)
    for page in range(len(data) // size):
        at = page * size + (100 if page == 0 else 0)
        if data[at] in (2, 5, 10, 13):
            yield at


def with_schema_edit(path, sql, args):
    copy = path + ".edit"
    shutil.copy(path, copy)
    db = sqlite3.connect(copy)
    db.execute("PRAGMA writable_schema = ON")
    db.execute(sql, args)
    db.commit()
    db.close()
    with open(copy, "rb") as f:
        return f.read()


def corruptions(path):
    """Corrupt copies of the export at path, after SQLite's corrupt*.test."""
    with open(path, "rb") as f:
        good = f.read()
    size, rng = page_size(good), random.Random(len(good))
    yield good[:len(good) // 2]
    yield good[:size + 10]
    yield good[:100]
    bad = bytearray(good); bad[16:18] = struct.pack(">H", 3); yield bytes(bad)
    bad = bytearray(good); bad[28:32] = struct.pack(">I", 1 << 30); yield bytes(bad)
    bad = bytearray(good); bad[32:36] = struct.pack(">I", 7777); bad[36:40] = b"\0\0\0\1"
    yield bytes(bad)
    pages = list(btree_pages(good))
    for at in rng.sample(pages, min(4, len(pages))):
        bad = bytearray(good); bad[at] = 0; yield bytes(bad)
        bad = bytearray(good); bad[at + 3:at + 5] = b"\xff\xff"; yield bytes(bad)
        cells = at + (12 if good[at] in (2, 5) else 8)
        bad = bytearray(good); bad[cells:cells + 2] = struct.pack(">H", size + 7)
        yield bytes(bad)
    yield with_schema_edit(path, "UPDATE sqlite_master SET rootpage = ? WHERE name = ?",
                           (1, "CUPTI_ACTIVITY_KIND_KERNEL"))
    yield with_schema_edit(path, "UPDATE sqlite_master SET rootpage = ? WHERE name = ?",
                           (99999, "StringIds"))
    yield with_schema_edit(path, "UPDATE sqlite_master SET sql = ? WHERE name = ?",
                           ("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start, x)",
                            "CUPTI_ACTIVITY_KIND_KERNEL"))
    for _ in range(4):
        bad = bytearray(good)
        for _ in range(8):
            bad[rng.randrange(100, len(bad))] = rng.randrange(256)
        yield bytes(bad)


def nsys_seeds(traces, out, scratch):
    folder = os.path.join(traces, "nsys")
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if not os.path.isdir(os.path.join(folder, name)):
            continue                        # each export sits in a folder of its own
        for file in sorted(os.listdir(os.path.join(folder, name))):
            if not file.endswith(".sqlite"):
                continue
            small = os.path.join(scratch, name + ".sqlite")
            for rows in (24, 12, 6, 3):
                small_export(os.path.join(folder, name, file), small, rows)
                if os.path.getsize(small) <= LIMIT:
                    break
            with open(small, "rb") as f:
                save(out, "nsys_sqlite", 0, f.read())
            with open(small, "rb") as f:
                save(out, "nsys_sqlite", 3, f.read())
            for i, bad in enumerate(corruptions(small)):
                save(out, "nsys_sqlite", i % 4, bad)


ODD_CSV = [
    b"start,end,name,correlation,stream\n1.5,2.5,\"gemm<float, 2>\",1,7\n",
    b"\xef\xbb\xbfstart,dur,name,correlation,stream\r\n1,2,\"a \"\"quoted\"\"\nname\",1,7\r\n",
    b"start,end,name\n1,2,no_stream\n",
    b"start,end,name,correlation,stream\nx,2,gemm,1,7\n",
    b"start,end,name,correlation,stream\n1e400,2,gemm,1,7\n-5,3,gemm,2,7\n",
    b"start,end,name,correlation,stream\n1,2,gemm,1,7" + SEPARATOR +
    b"start,end,name,correlation\n0.5,0.9,cudaLaunchKernel,1\n" + SEPARATOR +
    b"start,end,name,correlation,stream,bytes\n3,4,Memcpy HtoD (Pinned -> Device),2,7,1024\n" +
    SEPARATOR + b"start,end,name,correlation,stream,bytes\n5,6,Memset (Device),3,7,\n" +
    SEPARATOR + b"start,end,name,correlation,stream\n7,9,Event Sync,4,7\n" + SEPARATOR +
    b"start,dur,name\n0,10,step 1\n10,10,step 2\n",
]


def csv_seeds(traces, out, scratch):
    folder = os.path.join(traces, "hta")
    for name in ("trace_filter", "nccl_data", "amd_mi250", "critical_path_event_sync"):
        path = os.path.join(folder, name)
        if not os.path.isdir(path):
            continue
        trace = os.path.join(path, sorted(os.listdir(path))[0])
        csv_dir = os.path.join(scratch, name)
        kc.to_cupti_csv(trace, csv_dir)
        for rows in (3, 12, 40):
            parts = []
            for file in ("kernel.csv", "cuda_runtime.csv", "gpu_memcpy.csv", "gpu_memset.csv",
                         "cuda_sync.csv", "user_annotation.csv", "cuda_driver.csv"):
                p = os.path.join(csv_dir, file)
                lines = open(p, "rb").read().split(b"\n") if os.path.exists(p) else [b""]
                parts.append(b"\n".join(lines[:rows + 1]) + b"\n")
            data = SEPARATOR.join(parts)
            if len(data) <= LIMIT:
                save(out, "cupti_csv", rows % 4, data)
        shutil.rmtree(csv_dir)
    for i, data in enumerate(ODD_CSV):
        save(out, "cupti_csv", i % 4, data)


def small_rocprof(doc, rows):
    """The first rows dispatches of a rocprofv3 results document, with what
    they name, and a HIP call, a copy and a marker range for each."""
    dispatches = doc["buffer_records"]["kernel_dispatch"][:rows]
    used = {d["dispatch_info"]["kernel_id"] for d in dispatches}
    names = ("kernel_id", "formatted_kernel_name", "demangled_kernel_name", "kernel_name")
    symbols = [{k: s[k] for k in names} for s in doc["kernel_symbols"] if s["kernel_id"] in used]
    kinds = [{"kind": k["kind"], "operations": k["operations"][:8]}
             for k in doc["strings"]["buffer_records"][:11]]
    kinds[5]["operations"] = ["hipNone", "hipLaunchKernel", "hipMemcpyAsync"]
    kinds[7]["kind"], kinds[7]["operations"] = "MARKER_CORE_RANGE_API", ["none", "roctxRange"]
    kinds[10]["operations"] = ["NONE", "MEMORY_COPY_HOST_TO_HOST", "MEMORY_COPY_HOST_TO_DEVICE",
                               "MEMORY_COPY_DEVICE_TO_HOST", "MEMORY_COPY_DEVICE_TO_DEVICE"]
    calls, copies, markers = [], [], []
    for i, d in enumerate(dispatches):
        c, s = d["correlation_id"]["internal"], d["start_timestamp"]
        calls.append({"kind": 5, "operation": 1, "correlation_id": {"internal": c},
                      "start_timestamp": s - 900, "end_timestamp": s - 400})
        copies.append({"kind": 10, "operation": 1 + i % 4, "correlation_id": {"internal": c},
                       "start_timestamp": s - 300, "end_timestamp": s - 100, "bytes": 4096,
                       "dst_agent_id": d["dispatch_info"]["agent_id"],
                       "stream_id": d["stream_id"]})
        markers.append({"kind": 7, "operation": 1, "correlation_id": {"internal": 10**6 + i},
                        "start_timestamp": s - 1000, "end_timestamp": d["end_timestamp"] + 10})
    gpus = [{k: a[k] for k in ("id", "type", "logical_node_type_id", "product_name")}
            for a in doc["agents"]]
    return {"rocprofiler-sdk-tool": [{
        "metadata": {k: doc["metadata"][k] for k in ("pid", "node", "command", "config")},
        "agents": gpus, "kernel_symbols": symbols,
        "strings": {"buffer_records": kinds,
                    "marker_api": [{"key": 10**6 + i, "value": f"step {i}"}
                                   for i in range(len(markers))]},
        "buffer_records": {"kernel_dispatch": dispatches, "hip_api": calls,
                           "memory_copy": copies, "marker_api": markers}}]}


def two_gpus_rccl(small):
    """small with every other dispatch (and its copy) on a second GPU, and
    an RCCL call with its args (RCCL_API_EXT, as rocprofiler-sdk writes
    them) around each HIP call: a seed read whole and per GPU."""
    doc = copy.deepcopy(small)
    process = doc["rocprofiler-sdk-tool"][0]
    gpus = [a["id"] for a in process["agents"] if a.get("type") == 2][:2]
    records = process["buffer_records"]
    for i, (d, c) in enumerate(zip(records["kernel_dispatch"], records["memory_copy"])):
        d["dispatch_info"]["agent_id"] = c["dst_agent_id"] = gpus[i % len(gpus)]
    kinds = process["strings"]["buffer_records"]
    kinds.append({"kind": "RCCL_API_EXT", "operations": ["ncclAllGather", "ncclAllReduce"]})
    records["rccl_api"] = [
        {"kind": len(kinds) - 1, "operation": i % 2,
         "correlation_id": {"internal": 10**7 + i},
         "start_timestamp": call["start_timestamp"] - 50,
         "end_timestamp": call["end_timestamp"] + 50,
         "args": [{"pos": 2, "type": "unsigned long", "name": ("count", "sendcount")[i % 2],
                   "value": str(1024 << i)},
                  {"pos": 3, "type": "ncclDataType_t", "name": "datatype", "value": str(i % 12)},
                  {"pos": 5, "type": "ncclComm*", "name": "comm", "value": hex(0x5500 + i % 2)}]}
        for i, call in enumerate(records["hip_api"])]
    return doc


def rocprof_seeds(traces, out):
    folder = os.path.join(traces, "rocprofv3")
    for root, _, files in os.walk(folder):
        for name in sorted(f for f in files if f.endswith((".json", ".json.gz"))):
            path = os.path.join(root, name)
            opener = gzip.open if name.endswith(".gz") else open
            with opener(path, "rb") as f:
                doc = json.load(f)["rocprofiler-sdk-tool"][0]
            for rows in (1, 3, 10, 30, 60):
                data = json.dumps(small_rocprof(doc, rows)).encode()
                if len(data) <= LIMIT:
                    save(out, "rocprof_json", rows % 2, data)
            for rows in (4, 12):
                data = json.dumps(two_gpus_rccl(small_rocprof(doc, rows))).encode()
                if len(data) <= LIMIT:
                    save(out, "rocprof_json", 2 | rows % 3, data)


def window(src, dst, events):
    """The first `events` events of a Kineto trace, as a trace."""
    doc = rc.load(src)
    kept = [e for e in doc["traceEvents"] if e.get("ph") == "X"][:events]
    with open(dst, "w") as f:
        json.dump({"traceEvents": kept}, f, default=rc.number)


def rocpd_seeds(traces, out, scratch):
    folder = os.path.join(traces, "hta")
    for name in ("trace_filter", "nccl_data", "amd_mi250"):
        path = os.path.join(folder, name)
        if not os.path.isdir(path):
            continue
        trace = os.path.join(path, sorted(os.listdir(path))[0])
        for events in (10, 40, 120):
            part, cut, db = (os.path.join(scratch, f"{name}{events}{x}")
                             for x in (".json", "-rocm.json", ".db"))
            window(trace, part, events)
            rc.rocm_like(part, cut)
            rc.to_rocprof_csv(cut, os.path.join(scratch, "csv_"))
            parts = []
            for ending in ("kernel_trace.csv", "hip_api_trace.csv", "memory_copy_trace.csv",
                           "marker_api_trace.csv", "rccl_api_trace.csv"):
                p = os.path.join(scratch, "csv_" + ending)
                parts.append(open(p, "rb").read() if os.path.exists(p) else b"")
            if len(SEPARATOR.join(parts)) <= LIMIT:
                save(out, "rocprof_csv", events % 2, SEPARATOR.join(parts))
            rc.to_rocpd(cut, db)
            small = sqlite3.connect(db)
            small.execute("PRAGMA page_size = 512")
            small.execute("VACUUM")
            small.close()
            if os.path.getsize(db) > LIMIT:
                continue
            with open(db, "rb") as f:
                data = f.read()
            save(out, "rocpd", events % 4, data)
            for i, bad in enumerate(corruptions(db)):
                save(out, "rocpd", i % 4, bad)


def main():
    traces, out = sys.argv[1:3]
    for kind in ("nsys_sqlite", "cupti_csv", "rocprof_json", "rocpd", "rocprof_csv"):
        shutil.rmtree(os.path.join(out, kind), ignore_errors=True)
        os.makedirs(os.path.join(out, kind))
    scratch = tempfile.mkdtemp(prefix="hta-fuzz-seeds-")
    try:
        nsys_seeds(traces, out, scratch)
        csv_seeds(traces, out, scratch)
        rocprof_seeds(traces, out)
        rocpd_seeds(traces, out, scratch)
    finally:
        shutil.rmtree(scratch)
    print(f"corpus: {len(os.listdir(os.path.join(out, 'nsys_sqlite')))} nsys_sqlite inputs, "
          f"{len(os.listdir(os.path.join(out, 'cupti_csv')))} cupti_csv inputs, "
          f"{len(os.listdir(os.path.join(out, 'rocprof_json')))} rocprof_json, "
          f"{len(os.listdir(os.path.join(out, 'rocpd')))} rocpd, "
          f"{len(os.listdir(os.path.join(out, 'rocprof_csv')))} rocprof_csv inputs in {out}")


if __name__ == "__main__":
    main()
