"""The Nsight Systems SQLite and CUPTI CSV readers (docs/definitions.md,
"Inputs").

Equivalence on real data: tests/kineto_convert.py turns each real Kineto
trace into an Nsight Systems export and a CUPTI CSV folder holding the same
records; the three forms sit side by side in one directory (so mixed
directories are tested too), are analysed in one run on two processes, and
every per-rank table must be the same for the three ranks they become.
What the other formats cannot carry is documented and left out of the
comparison: /activity_categories rows of categories they have no place
for (cpu_op, python_function, gpu_user_annotation, Trace, ...) and every
category's share of the total; /ranks' sizes and event counts; and, for
traces with whole-microsecond timestamps, the bandwidth columns of
/memory_bw (and the /rank_metrics rows made from them), since Kineto
computed its bandwidth from the unrounded duration the JSON no longer
holds, while the converted forms can only divide bytes by the rounded one.
The CPU-side tables (/ops, /annotations, /kernel_sequences, /sync_calls,
/memory, /op_perf and its /rank_metrics rows) rest on what the converted
forms do not carry (cpu_op events, their pid, tid and arguments, GPU
annotations, [memory] events), and so do the columns of /gpu_gaps that
name a CPU event, a sync call or a cause, and /steps' traced FLOPs; the
gaps themselves (times, neighbours, launch delays) are compared.

Hand-built exports test what only Nsight has (the copy-kind ENUM, NVTX
steps, several GPUs in one file), and bad inputs fail alone with one line
naming the file and the table or line."""
import os
import shutil
import sqlite3

import numpy as np

import kineto_convert as kc
from common import (
    FRACTIONAL_FOLDERS, all_tables, analyse, locked_database, main, require_traces, table, tmpdir,
    trace_dir, trace_rows)
from common import run as run_hta

# Every real trace with GPU events but three, whose numbers rest on records
# only Kineto has: old_categories' categories ("Kernel", "Runtime") predate
# the names the converters write; rccl_mi300_rank0's last step is found
# from a GPU-side "ProfilerStep#17" annotation (gpu_user_annotation); and
# triton has a cpu_op with a stream, which counts as GPU work.
FOLDERS = ["alexnet", "amd_mi250", "critical_path_event_sync",
           "critical_path_event_sync_multi_stream", "critical_path_simple_add", "nccl_data",
           "negative_queue", "ns_resolution", "plain_json", "trace_filter"]
CARRIED = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "cuda_runtime", "cuda_driver",
           "user_annotation"}
# Columns that say how a trace was read rather than what it holds.
READ_COLUMNS = {"claimed_rank", "rank_source", "file", "bytes", "json_bytes", "events",
                "skipped_events", "world_size", "first_ts_us", "last_ts_us", "parse_seconds",
                "analysis_seconds", "process", "threads", "input_format", "input_notes",
                "host"}
BANDWIDTH_COLUMNS = {"mean_gbps", "std_gbps", "min_gbps", "p25_gbps", "p50_gbps", "p75_gbps",
                     "max_gbps"}
# HTA orders the points of a queue-length series at one instant as the
# records come (numpy's quicksort of the launches, then the GPU records, in
# trace order).  Kineto's GPU records are in about, not exactly, time order
# and the other formats cannot keep its order, so the mean and std over
# the series' points (not the time-weighted ones) may differ that little.
ORDER_SENSITIVE = {("queue_length", "mean"), ("queue_length", "std")}
ORDER_REL_TOL = 1e-3
# /idle_time lists a rank's streams in the order of their first records in
# the trace, HTA's order, which the other formats cannot keep: its rows are
# compared in stream order.
TRACE_ORDERED = {"idle_time": ["stream", "idle_category"]}
CROSS_RANK = {"outliers", "cross_rank/kernels", "kernel_type_breakdown", "stragglers",
              "collective_wait", "timeline_ranks", "collectives", "collective_summary",
              "cross_rank/steps", "cross_rank/ops", "cross_rank/annotations",
              "cross_rank/kernel_sequences", "process_groups", "cross_rank/op_perf"}
# Built from the NCCL collective metadata of Kineto's args, which neither
# export carries.
KINETO_ONLY = {"comm_by_group"}
CPU_SIDE = {"ops", "annotations", "kernel_sequences", "sync_calls", "memory", "op_perf"}
GAP_CPU_COLUMNS = {"cpu_event", "cpu_event_overlap_us", "sync_call", "cause"}


def three_forms(folder):
    """A directory with each trace of folder, its SQLite export and its CSV
    folder; returns (dir, [(kineto, sqlite, csv) file names])."""
    d = tmpdir()
    forms = []
    for i, name in enumerate(sorted(os.listdir(trace_dir(folder)))):
        src = os.path.join(trace_dir(folder), name)
        shutil.copy(src, os.path.join(d, name))
        db, csv_dir = f"form.rank-{1000 + i}.sqlite", f"form.rank-{2000 + i}"
        kc.to_nsys_sqlite(src, os.path.join(d, db))
        kc.to_cupti_csv(src, os.path.join(d, csv_dir))
        forms.append((name, db, csv_dir))
    return d, forms


def rows_of(data, rank):
    return data[data["rank"] == rank]


def assert_same_rows(name, a, b, skip, what):
    assert len(a) == len(b), f"{name}: {len(a)} rows vs {len(b)} with {what}"
    if name in TRACE_ORDERED:
        a, b = (np.sort(x, order=TRACE_ORDERED[name], kind="stable") for x in (a, b))
    for c in a.dtype.names:
        if c in skip:
            continue
        if (name, c) in ORDER_SENSITIVE:
            same = np.allclose(a[c], b[c], rtol=ORDER_REL_TOL, atol=0, equal_nan=True)
        else:
            same = np.array_equal(a[c], b[c], equal_nan=a[c].dtype.kind == "f")
        assert same, f"{name}.{c} differs with {what}: {a[c][:6]} vs {b[c][:6]}"


# /rank_metrics rows of the CPU-side tables (/op_perf's).
CPU_SIDE_METRICS = {"gemm_tflops", "gemm_pct_peak", "attention_tflops"}


def without_bandwidth(rows):
    keep = np.array([not m.decode().endswith("_gbps") for m in rows["metric"]], dtype=bool)
    return rows[keep]


def carried_metrics(rows):
    keep = np.array([m.decode() not in CPU_SIDE_METRICS for m in rows["metric"]], dtype=bool)
    return rows[keep]


def carried_categories(rows):
    keep = np.array([c.decode() in CARRIED for c in rows["category"]], dtype=bool)
    return rows[keep]


def compare_forms(folder, round_like_hta=False):
    d, forms = three_forms(folder)
    out, _ = analyse(d, processes=2, extra=["--round-like-hta"] if round_like_hta else [])
    ranks = table(out, "ranks")
    rank_of = {os.path.basename(f): r for f, r in zip(ranks["file"], ranks["rank"])}
    fmt = {os.path.basename(f): x for f, x in zip(ranks["file"], ranks["input_format"])}
    tables = all_tables(out)
    integer_us = folder not in FRACTIONAL_FOLDERS
    for kineto, db, csv_dir in forms:
        assert (fmt[kineto], fmt[db], fmt[csv_dir]) == ("kineto", "nsys-sqlite", "cupti-csv")
        base = rank_of[kineto]
        for other in (db, csv_dir):
            r, what = rank_of[other], f"{folder}/{other}"
            for name, data in tables.items():
                if name in CROSS_RANK or name in KINETO_ONLY or name in CPU_SIDE:
                    continue
                if name == "timeline":
                    order = list(tables["timeline_ranks"])
                    assert np.array_equal(data[order.index(base)], data[order.index(r)]), what
                    continue
                a, b = rows_of(data, base), rows_of(data, r)
                skip = {"rank"}
                if name == "ranks":
                    skip |= READ_COLUMNS
                if name == "activity_categories":
                    a, b = carried_categories(a), carried_categories(b)
                    skip |= {"share"}
                if name == "gpu_gaps":
                    skip |= GAP_CPU_COLUMNS
                if name == "steps":  # the traced FLOPs need Input Dims
                    skip |= {"traced_flops", "traced_mfu_pct"}
                if name == "memory_bw" and integer_us:
                    skip |= BANDWIDTH_COLUMNS
                if name == "rank_metrics":
                    a, b = carried_metrics(a), carried_metrics(b)
                if name == "rank_metrics" and integer_us:
                    a, b = without_bandwidth(a), without_bandwidth(b)
                assert_same_rows(name, a, b, skip, what)
    return tables


def test_equivalence_on_real_traces():
    require_traces()
    for folder in FOLDERS:
        compare_forms(folder)


def test_equivalence_rounded_like_hta():
    require_traces()
    for folder in FRACTIONAL_FOLDERS:
        if folder in FOLDERS:
            compare_forms(folder, round_like_hta=True)


def test_equivalence_checks_something():
    """The comparison above sees the readers' rows: kernels and launches."""
    require_traces()
    tables = compare_forms("ns_resolution")
    kernels = tables["kernels"]
    assert len(kernels) > 0 and len(set(kernels["rank"])) == 3
    launch = tables["launch_stats"]
    assert len(launch) == 3 and (launch["launches"] > 1000).all(), launch["launches"]
    assert len(set(launch["launches"])) == 1


# ---- hand-built exports ------------------------------------------------------

def hand_built_export(path, kernels, memcpys=(), nvtx=(), runtime=(), enum_order=None):
    """An export written with the documented tables.  kernels: (start, end,
    device, stream, correlation, name); memcpys: (start, end, device,
    stream, correlation, bytes, copyKind, srcKind, dstKind); nvtx: (start,
    end, text); runtime: (start, end, correlation, name)."""
    db = kc.create_nsys_database(path)
    if enum_order:   # renumber the copy kinds: the reader must use the ENUM
        db.execute("DELETE FROM ENUM_CUDA_MEMCPY_OPER")
        db.executemany("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?,?,?)", enum_order)
    strings = kc.Strings(db)
    for s, e, dev, stream, corr, name in kernels:
        n = strings(name)
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
                   "streamId, correlationId, demangledName, shortName, registersPerThread, "
                   "gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, "
                   "dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, "
                   "tensorSizeMinusOneElements) VALUES (?,?,?,1,?,?,?,?,0,1,1,1,1,1,1,0,0,0,0,0,'')",
                   (s, e, dev, stream, corr, n, n))
    for s, e, dev, stream, corr, nbytes, kind, src, dst in memcpys:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, "
                   "streamId, correlationId, bytes, copyKind, srcKind, dstKind) "
                   "VALUES (?,?,?,1,?,?,?,?,?,?)", (s, e, dev, stream, corr, nbytes, kind, src, dst))
    for s, e, text in nvtx:
        db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, textId) VALUES (?,?,59,?)",
                   (s, e, strings(text)))
    for s, e, corr, name in runtime:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, "
                   "correlationId, nameId, returnValue) VALUES (?,?,0,?,?,0)",
                   (s, e, corr, strings(name)))
    db.commit()
    db.close()


def test_copy_kind_from_enum():
    """copyKind 5 is HtoD here because this export's ENUM says so (CUPTI's
    own numbering has 1): the kind in /memory_bw comes from the ENUM."""
    d = tmpdir()
    order = [(5, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"),
             (1, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host")]
    hand_built_export(os.path.join(d, "rank-0.sqlite"),
                      kernels=[(1000, 2000, 0, 7, 1, "gemm")],
                      memcpys=[(3000, 5000, 0, 7, 2, 4000, 5, 2, 3),    # 4000 B / 2000 ns
                               (6000, 7000, 0, 7, 3, 3000, 1, 3, 1)],   # 3000 B / 1000 ns
                      runtime=[(500, 900, 1, "cudaLaunchKernel_v7000"),
                               (2500, 2900, 2, "cudaMemcpyAsync_v3020"),
                               (5500, 5900, 3, "cudaMemcpyAsync_v3020")],
                      enum_order=order)
    out, _ = analyse(d)
    bw = table(out, "memory_bw").set_index("kind")
    assert set(bw.index) == {"Memcpy HtoD", "Memcpy DtoH"}, bw.index
    assert bw.loc["Memcpy HtoD", "bytes"] == 4000 and bw.loc["Memcpy DtoH", "bytes"] == 3000
    assert abs(bw.loc["Memcpy HtoD", "max_gbps"] - 2.0) < 1e-12
    assert abs(bw.loc["Memcpy DtoH", "max_gbps"] - 3.0) < 1e-12
    # The API version suffixes are dropped: all three calls count as launches.
    assert list(table(out, "launch_stats")["launches"]) == [3]


def three_steps(path, names):
    """Three NVTX steps, a kernel launched in each."""
    hand_built_export(path,
                      kernels=[(1500, 2500, 0, 7, 1, "gemm_a"), (11500, 12500, 0, 7, 2, "gemm_b"),
                               (21500, 22000, 0, 7, 3, "gemm_c")],
                      nvtx=[(0, 10000, names[0]), (10000, 20000, names[1]),
                            (20000, 30000, names[2]), (100, 200, "forward")],
                      runtime=[(1000, 1200, 1, "cudaLaunchKernel_v7000"),
                               (11000, 11200, 2, "cudaLaunchKernel_v7000"),
                               (21000, 21200, 3, "cudaLaunchKernel_v7000")])


def assert_last_step_dropped(out):
    ranks = table(out, "ranks")
    assert ranks["step_filter_applied"][0] == 1 and ranks["filtered_gpu_events"][0] == 1, ranks
    kernels = set(table(out, "kernels")["name"])
    assert kernels == {"gemm_a", "gemm_b"}, kernels


def test_nvtx_profiler_steps():
    """NVTX ranges named like the PyTorch profiler's steps drive the step
    filter: the kernel launched in the last step is dropped."""
    d = tmpdir()
    three_steps(os.path.join(d, "rank-0.sqlite"),
                ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"])
    out, _ = analyse(d)
    assert_last_step_dropped(out)
    cats = set(table(out, "activity_categories")["category"])
    assert "user_annotation" in cats and "cuda_runtime" in cats, cats


def test_step_regex():
    """Megatron-style step ranges are steps with --step-regex, in SQLite
    exports and in user_annotation.csv; without it they are not."""
    d = tmpdir()
    three_steps(os.path.join(d, "rank-0.sqlite"), ["iteration 7", "iteration 8", "iteration 9"])
    out, _ = analyse(d)
    assert table(out, "ranks")["step_filter_applied"][0] == 0
    assert len(table(out, "kernels")) == 3
    out, _ = analyse(d, extra=["--step-regex", "^iteration [0-9]+$"])
    assert_last_step_dropped(out)
    csv_dir = os.path.join(tmpdir(), "rank-0")
    os.makedirs(csv_dir)
    with open(os.path.join(csv_dir, "kernel.csv"), "w") as f:
        f.write("start,end,name,correlation,stream\n1.5,2.5,gemm_a,1,7\n11.5,12.5,gemm_b,2,7\n"
                "21.5,22,gemm_c,3,7\n")
    with open(os.path.join(csv_dir, "cuda_runtime.csv"), "w") as f:
        f.write("start,end,name,correlation\n1,1.2,cudaLaunchKernel,1\n"
                "11,11.2,cudaLaunchKernel,2\n21,21.2,cudaLaunchKernel,3\n")
    with open(os.path.join(csv_dir, "user_annotation.csv"), "w") as f:
        f.write("start,dur,name\n0,10,iteration 7\n10,10,iteration 8\n20,10,iteration 9\n")
    out, _ = analyse(csv_dir, extra=["--step-regex", "^iteration"])
    assert_last_step_dropped(out)
    p = run_hta([d, "-o", os.path.join(tmpdir(), "x.h5"), "--step-regex", "(unclosed"], expect=2)
    assert "--step-regex" in p.stderr, p.stderr


def test_step_regex_keeps_unified_memory_migrations():
    """Unified Memory migrations (copyKind 11-13, correlationId 0: no call
    launched them) are judged by their own start under --step-regex: the
    ones in kept steps stay, each direction a /memory_bw kind of its own;
    only the last step's are dropped."""
    d = tmpdir()
    path = os.path.join(d, "rank-0.sqlite")
    three_steps(path, ["iteration 7", "iteration 8", "iteration 9"])
    db = sqlite3.connect(path)
    db.executemany("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?,?,?)",
                   [(11, "CUDA_MEMCPY_KIND_UVM_HTOD", "Unified Host-to-Device"),
                    (12, "CUDA_MEMCPY_KIND_UVM_DTOH", "Unified Device-to-Host")])
    for start, kind in ((3000, 11), (13000, 12), (23000, 11)):
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, "
                   "streamId, correlationId, bytes, copyKind, srcKind, dstKind) "
                   "VALUES (?,?,0,1,9,0,4096,?,4,4)", (start, start + 1000, kind))
    db.commit()
    db.close()
    out, _ = analyse(d, extra=["--step-regex", "^iteration [0-9]+$"])
    ranks = table(out, "ranks")
    assert ranks["filtered_gpu_events"][0] == 2, ranks     # gemm_c and the last migration
    kernels = table(out, "kernels").set_index("name")
    assert kernels.loc["Memcpy UVM_HtoD (Managed -> Managed)", "count"] == 1, kernels
    assert kernels.loc["Memcpy UVM_DtoH (Managed -> Managed)", "count"] == 1, kernels
    bw = table(out, "memory_bw").set_index("kind")
    assert set(bw.index) == {"Memcpy UVM_HtoD", "Memcpy UVM_DtoH"}, bw
    metrics = set(table(out, "rank_metrics")["metric"])
    assert {"memory_bw_memcpy_uvm_htod_mean_gbps",
            "memory_bw_memcpy_uvm_dtoh_mean_gbps"} <= metrics, metrics


def test_several_gpus_in_one_file():
    """An export with kernels on two devices: every kernel is read (one
    rank per file), with its stream; the note in /ranks says so."""
    d = tmpdir()
    hand_built_export(os.path.join(d, "rank-0.sqlite"),
                      kernels=[(1000, 2000, 0, 7, 1, "k0"), (1000, 4000, 1, 7, 2, "k1")])
    out, _ = analyse(d)
    k = table(out, "kernels").set_index("name")
    assert set(k.index) == {"k0", "k1"}
    ranks = table(out, "ranks")
    assert "2 devices" in ranks["input_notes"][0], ranks["input_notes"][0]


def export_with_environment(path, duration, table_sql, rows):
    """A one-kernel export whose TARGET_INFO_SYSTEM_ENV is table_sql with
    rows ((sql, values) inserts)."""
    hand_built_export(path, kernels=[(1000, 1000 + duration, 0, 7, 1, "gemm")])
    db = sqlite3.connect(path)
    db.execute(table_sql)
    for sql, values in rows:
        db.execute(sql, values)
    db.commit()
    db.close()


def test_rank_from_environment():
    """The launcher's rank variable in the environment Nsight Systems
    records gives the rank, with the environment inline or as StringIds,
    whatever separates the variables; LOCAL_RANK is not RANK."""
    d = tmpdir()
    inline, by_id = os.path.join(d, "trace_a.sqlite"), os.path.join(d, "trace_b.sqlite")
    insert = "INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (?, ?)"
    export_with_environment(
        inline, 1000, "CREATE TABLE TARGET_INFO_SYSTEM_ENV (name TEXT, value TEXT)",
        [(insert, ("Hostname", "node7")),
         (insert, ("DeviceEnvironment", "LOCAL_RANK=1;PATH=/usr/bin;RANK=5;WORLD_SIZE=8"))])
    export_with_environment(
        by_id, 2000, "CREATE TABLE TARGET_INFO_SYSTEM_ENV (nameId INTEGER, valueId INTEGER)",
        [("INSERT INTO StringIds VALUES (?, ?)", (1000, "DeviceEnvironment")),
         ("INSERT INTO StringIds VALUES (?, ?)",
          (1001, "HOME=/root\nOMPI_COMM_WORLD_RANK=2\nOMPI_COMM_WORLD_SIZE=8")),
         (insert, (1000, 1001))])
    out, _ = analyse(d)
    everyone = table(out, "ranks")
    missing = everyone[everyone.status == "missing"]
    assert list(missing["rank"]) == [0, 1, 3, 4, 6, 7], everyone  # of the world size 8
    ranks = trace_rows(out).set_index("file")
    assert ranks.loc[inline, "rank"] == 5 and ranks.loc[by_id, "rank"] == 2, ranks
    assert set(ranks["rank_source"]) == {"recorded"}, ranks
    assert set(ranks["world_size"]) == {8}, ranks
    sums = table(out, "kernels").set_index("rank")["sum_us"]
    assert sums[5] == 1.0 and sums[2] == 2.0, sums


def test_mpi_ranks_first():
    """A one-process export whose MPI_RANKS names its rank: that rank, not
    the recorded environment's (README, "Inputs")."""
    d = tmpdir()
    path = os.path.join(d, "trace.sqlite")
    export_with_environment(
        path, 1000, "CREATE TABLE TARGET_INFO_SYSTEM_ENV (name TEXT, value TEXT)",
        [("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (?, ?)", ("DeviceEnvironment", "RANK=3"))])
    db = sqlite3.connect(path)
    db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = ?", (100 << 24,))
    db.execute("CREATE TABLE MPI_RANKS (globalTid INTEGER, rank INTEGER)")
    db.execute("INSERT INTO MPI_RANKS VALUES (?, 5)", ((100 << 24) | 101,))
    db.commit()
    db.close()
    out, _ = analyse(d)
    ranks = table(out, "ranks")
    assert list(ranks["claimed_rank"]) == [5] and list(ranks["rank_source"]) == ["recorded"], ranks


def two_process_node_export(path):
    """What `nsys profile mpirun -n 2 ...` records on one node: processes
    100 and 200 (MPI ranks 3 and 2) on devices 0 and 1, each launching
    a kernel on its stream 7 with its correlation id 1, each in an NVTX
    range of its own; process 200 also holds an idle context on device 0."""
    db = kc.create_nsys_database(path)
    strings = kc.Strings(db)
    db.execute("CREATE TABLE TARGET_INFO_CUDA_CONTEXT_INFO (nullStreamId INTEGER, hwId INTEGER, "
               "vmId INTEGER, processId INTEGER, deviceId INTEGER, contextId INTEGER, "
               "parentContextId INTEGER, isGreenContext INTEGER)")
    db.execute("CREATE TABLE MPI_RANKS (globalTid INTEGER, rank INTEGER)")
    # A context without work, as PyTorch leaves on device 0 in every process.
    db.execute("INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO VALUES (7, 0, 0, 200, 0, 2, NULL, 0)")
    for pid, device, rank, end in ((100, 0, 3, 2000), (200, 1, 2, 4000)):
        tid = (pid << 24) | pid      # a serialized GlobalId: pid in bits 24-47
        db.execute("INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO VALUES (7, 0, 0, ?, ?, 1, NULL, 0)",
                   (pid, device))
        db.execute("INSERT INTO MPI_RANKS VALUES (?, ?)", (tid, rank))
        name = strings(f"kernel_on_{device}")
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
                   "streamId, correlationId, globalPid, demangledName, shortName, "
                   "registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
                   "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
                   "localMemoryTotal, gridId, tensorSizeMinusOneElements) VALUES (1000, ?, ?, "
                   "1, 7, 1, ?, ?, ?, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, '')", (end, device, pid << 24, name, name))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
                   "correlationId, nameId, returnValue) VALUES (500, 900, 0, ?, 1, ?, 0)",
                   (tid, strings("cudaLaunchKernel_v7000")))
        db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) "
                   "VALUES (0, 5000, 59, ?, ?)", (f"range_of_{pid}", tid))
    db.commit()
    db.close()


def test_one_rank_per_device():
    """An export holding two GPUs is two ranks, each with its device's
    kernels and its process's launches and NVTX ranges, ranked by
    MPI_RANKS; --merge-devices makes it one rank again."""
    d = tmpdir()
    export = os.path.join(d, "node0.sqlite")
    two_process_node_export(export)
    out, _ = analyse(d, processes=2)
    ranks = table(out, "ranks").set_index("rank")
    assert list(ranks.index) == [2, 3], ranks
    assert ranks.loc[3, "file"] == export + "@device=0", ranks
    assert ranks.loc[2, "file"] == export + "@device=1", ranks
    assert set(ranks["rank_source"]) == {"recorded"} and set(ranks["status"]) == {"ok"}, ranks
    kernels = table(out, "kernels")
    assert sorted(zip(kernels["rank"], kernels["name"], kernels["sum_us"])) == \
        [(2, "kernel_on_1", 3.0), (3, "kernel_on_0", 1.0)], kernels
    assert list(table(out, "launch_stats")["launches"]) == [1, 1]
    notes = table(out, "activity_categories")
    annotations = notes[notes["category"] == "user_annotation"]
    assert list(annotations["count"]) == [1, 1], notes
    out, _ = analyse(d, extra=["--merge-devices"])
    ranks = table(out, "ranks")
    assert list(ranks["file"]) == [export] and "2 devices" in ranks["input_notes"][0], ranks
    # Two processes of two MPI ranks: the merged trace claims neither.
    assert list(ranks["claimed_rank"]) == [-1], ranks
    assert len(table(out, "kernels")) == 2
    assert list(table(out, "launch_stats")["launches"]) == [2]


# ---- bad inputs ---------------------------------------------------------------

def good_export(path):
    hand_built_export(path, kernels=[(1000, 2000, 0, 7, 1, "gemm")])


def run_bad(make, expected_error, name="bad.rank-1.sqlite"):
    """One good and one bad input: the bad one fails alone, exit 1, one
    stderr line naming it; the good one is written."""
    d = tmpdir()
    good_export(os.path.join(d, "good.rank-0.sqlite"))
    bad = os.path.join(d, name)
    make(bad)
    out, p = analyse(d, expect=1)
    ranks = table(out, "ranks").set_index("rank")
    assert ranks.loc[0, "status"] == "ok", ranks
    assert ranks.loc[1, "status"] == "failed", ranks
    error = ranks.loc[1, "error"]
    assert bad in error and expected_error in error, error
    assert "\n" not in error
    lines = [line for line in p.stderr.splitlines() if bad in line]
    assert len(lines) == 1 and expected_error in lines[0], p.stderr
    assert len(table(out, "kernels")) == 1
    return error


def test_not_sqlite():
    def make(path):
        with open(path, "w") as f:
            f.write("this is not a database\n" * 100)
    run_bad(make, "file is not a database")


def test_no_kernel_table():
    def make(path):
        db = kc.create_nsys_database(path)
        db.execute("DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL")
        db.commit()
        db.close()
    error = run_bad(make, "CUPTI_ACTIVITY_KIND_KERNEL: no such table")
    assert f"schema {kc.SCHEMA_VERSION}" in error, error


def test_missing_column():
    def make(path):
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
        db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, streamId INT)")
        db.commit()
        db.close()
    run_bad(make, "CUPTI_ACTIVITY_KIND_KERNEL: no column correlationId")


def test_truncated_database():
    def make(path):
        hand_built_export(path, kernels=[(i * 10, i * 10 + 5, 0, 7, i, f"kernel_{i % 50}")
                                         for i in range(20000)])
        size = os.path.getsize(path)
        with open(path, "r+b") as f:
            f.truncate(size // 2)
    run_bad(make, "malformed")


def test_locked_database():
    """A writer holding the database locked: the rank fails at once."""
    d = tmpdir()
    good_export(os.path.join(d, "good.rank-0.sqlite"))
    bad = os.path.join(d, "bad.rank-1.sqlite")
    good_export(bad)
    with locked_database(bad):
        out, p = analyse(d, expect=1)
    ranks = table(out, "ranks").set_index("rank")
    assert ranks.loc[0, "status"] == "ok"
    assert ranks.loc[1, "status"] == "failed"
    assert bad in ranks.loc[1, "error"] and "locked" in ranks.loc[1, "error"], ranks.loc[1, "error"]


def csv_folder(path, kernel_text):
    os.makedirs(path)
    with open(os.path.join(path, "kernel.csv"), "w") as f:
        f.write(kernel_text)


GOOD_CSV = ("start,end,dur,name,correlation,stream,device,context,grid,block,shared memory,cat\n"
            "1.000,2.500,1.500,\"void gemm<float, 4>(float*)\",1,7,0,1,\"[1, 1, 1]\",\"[1, 1, 1]\",0,kernel\n")


def run_bad_csv(kernel_text, expected_error):
    d = tmpdir()
    csv_folder(os.path.join(d, "rank-0"), GOOD_CSV)
    csv_folder(os.path.join(d, "rank-1"), kernel_text)
    out, p = analyse(d, expect=1)
    ranks = table(out, "ranks").set_index("rank")
    assert ranks.loc[0, "status"] == "ok", ranks
    assert ranks.loc[1, "status"] == "failed", ranks
    error = ranks.loc[1, "error"]
    assert os.path.join(d, "rank-1", "kernel.csv") in error and expected_error in error, error
    kernels = table(out, "kernels")
    assert list(kernels["name"]) == ["void gemm<float, 4>(float*)"], kernels
    assert abs(kernels["sum_us"][0] - 1.5) < 1e-9, kernels


def test_csv_missing_column():
    run_bad_csv("start,end,name,correlation\n1,2,k,1\n", "no column 'stream'")


def test_csv_non_numeric_time():
    run_bad_csv("start,end,name,correlation,stream\n1,2,k,1,7\nsoon,3,k,2,7\n",
                "line 3: column start: not a time in us 'soon'")


def test_csv_records():
    """The CSV forms a dump may take: CRLF line ends, quoted names holding
    commas, doubled quotes and a newline, header names in any case and
    order, extra columns, blank lines, dur instead of end, and times with
    more than three decimals (rounded to the nanosecond, half up)."""
    d = os.path.join(tmpdir(), "rank-3")
    os.makedirs(d)
    with open(os.path.join(d, "conc_kernel.csv"), "w", newline="") as f:
        f.write("Cat,Stream,Name,Start,Dur,Correlation,grid\r\n"
                "kernel,7,\"void f<int, 2>(\"\"x\"\")\",10,2.0004,1,\"[1, 2, 3]\"\r\n"
                "\r\n"
                "kernel,7,\"two\nlines\",20.0005,1.5,2,\r\n")
    out, _ = analyse(d + "/")     # the folder's name gives the rank, slash or not
    k = table(out, "kernels").set_index("name")
    assert set(k.index) == {'void f<int, 2>("x")', "two\nlines"}, k.index
    assert k.loc['void f<int, 2>("x")', "sum_us"] == 2.0
    assert k.loc["two\nlines", "sum_us"] == 1.5
    ranks = table(out, "ranks")
    assert ranks["first_ts_us"][0] == 10.0 and ranks["last_ts_us"][0] == 21.501, ranks
    assert ranks["rank"][0] == 3 and ranks["rank_source"][0] == "file_name", ranks
    assert "no cuda_runtime.csv" in ranks["input_notes"][0], ranks["input_notes"][0]


def test_csv_without_bytes():
    """The CUPTI notebook's gpu_memcpy.csv has no bytes: /memory_bw keeps
    the copies' busy time, has no bandwidth or bytes, and /ranks says why
    (with the missing runtime file, on one line)."""
    d = os.path.join(tmpdir(), "rank-0")
    csv_folder(d, GOOD_CSV)
    with open(os.path.join(d, "gpu_memcpy.csv"), "w") as f:
        f.write("start,end,name,correlation,stream\n3,5,Memcpy HtoD (Pinned -> Device),2,7\n")
    out, _ = analyse(d)
    bw = table(out, "memory_bw")
    assert list(bw["kind"]) == ["Memcpy HtoD"] and bw["count"][0] == 0 and bw["bytes"][0] == 0
    assert bw["busy_us"][0] == 2.0, bw
    notes = table(out, "ranks")["input_notes"][0]
    assert "gpu_memcpy.csv has no bytes column" in notes and "no cuda_runtime.csv" in notes, notes
    assert "\n" not in notes


def test_csv_ambiguous_folder():
    """A folder with both kernel.csv and JSON traces needs --input-format."""
    require_traces()
    d = tmpdir()
    csv_folder(os.path.join(d, "run"), GOOD_CSV)
    shutil.copy(os.path.join(trace_dir("plain_json"), "backward_thread.json"),
                os.path.join(d, "run"))
    p = run_hta([os.path.join(d, "run"), "-o", os.path.join(d, "x.h5")], expect=2)
    assert "--input-format" in p.stderr, p.stderr
    out, _ = analyse(os.path.join(d, "run"), extra=["--input-format", "cupti-csv"])
    assert list(table(out, "ranks")["input_format"]) == ["cupti-csv"]
    out, _ = analyse(os.path.join(d, "run"), extra=["--input-format", "kineto"])
    assert list(table(out, "ranks")["input_format"]) == ["kineto"]


if __name__ == "__main__":
    main([test_equivalence_on_real_traces, test_equivalence_rounded_like_hta,
          test_equivalence_checks_something,
          test_copy_kind_from_enum, test_nvtx_profiler_steps, test_step_regex,
          test_step_regex_keeps_unified_memory_migrations,
          test_several_gpus_in_one_file,
          test_rank_from_environment, test_mpi_ranks_first, test_one_rank_per_device,
          test_not_sqlite, test_no_kernel_table, test_missing_column, test_truncated_database,
          test_locked_database, test_csv_missing_column, test_csv_non_numeric_time,
          test_csv_records, test_csv_without_bytes, test_csv_ambiguous_folder])
