"""Real multi-node NCCL jobs recorded by Nsight Systems, one export per rank
(../shared/traces/nsys_multinode/, SOURCES.md there).  Each export stores
its times relative to its own session start unless exported with
--ts-normalize; hta-mpi must put every export on the UTC epoch clock its
metadata gives (docs/definitions.md, "Inputs", "Clock"), and never shift
one whose times are already absolute.

Everything expected is computed here from the SQLite with Python's
sqlite3: each rank (the recorded PMI_RANK), its absolute first and last
time and GPU records, and the all-reduce waits by a matcher of this file's
own (the k-th NCCL kernel of every rank is one instance; wait = latest
start - own start; the latest starter causes the instance's total wait).
chatterbug_saxpy_mpi_2rank is also checked against NVIDIA's own `nsys
stats` CSVs beside it."""
import csv
import os
import re
import shutil
import sqlite3

from common import TRACES, Skip, analyse, main, table, tmpdir

SETS = os.path.join(TRACES, "nsys_multinode")
FS24 = ["fs24_nccl_ring_2rank_2node", "fs24_nccl_ring_4rank_2node",
        "fs24_nccl_tree_9rank_3node", "fs24_nccl_ring_6rank_2node_abs_ts",
        "fs24_nccl_tree_9rank_missing_rank1"]
CHATTERBUG = "chatterbug_saxpy_mpi_2rank"
GPU_TABLES = ["KERNEL", "MEMCPY", "MEMSET", "SYNCHRONIZATION"]
RANK_VARIABLES = ["RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"]
US = 1000.0


def exports(name):
    folder = os.path.join(SETS, name, "traces")
    if not os.path.isdir(folder):
        raise Skip(f"the real multi-node exports are absent: no {folder}")
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".sqlite"))


def connect(path):
    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)


def has_table(db, name):
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def metadata(db):
    for name in ("META_DATA_EXPORT", "EXPORT_META_DATA"):
        if has_table(db, name):
            return dict(db.execute(f"SELECT name, value FROM {name}"))
    return {}


def clock_shift(db):
    """What puts the export's times on the UTC epoch clock: the session's
    start minus the shift the export already applied (its total,
    EXPORT_CONFIG_TIME_SHIFT, else the session start when normalised plus
    EXPORT_PARAM_TIME_SHIFT); exports that record neither (schema 2) are
    relative unless their times already lie after the session start."""
    start = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
    meta = metadata(db)
    if "EXPORT_CONFIG_TIME_SHIFT" in meta:
        return start - int(meta["EXPORT_CONFIG_TIME_SHIFT"])
    if "EXPORT_PARAM_TIME_NORMALIZE" in meta:
        applied = (start if meta["EXPORT_PARAM_TIME_NORMALIZE"] == "true" else 0) + \
            int(meta.get("EXPORT_PARAM_TIME_SHIFT") or 0)
        return start - applied
    first = db.execute("SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1").fetchone()[0]
    return 0 if first >= start else start


def recorded_rank(db):
    for (env,) in db.execute("SELECT value FROM TARGET_INFO_SYSTEM_ENV "
                             "WHERE name = 'DeviceEnvironment'"):
        for var in RANK_VARIABLES:
            m = re.search(rf"(?:^|[;\n\0]){var}=(\d+)", env)
            if m:
                return int(m.group(1))
    return None


def spans(db):
    """(start, end) as stored of every record hta-mpi reads: the GPU tables,
    the API calls and the NVTX ranges."""
    out = []
    for t in GPU_TABLES + ["RUNTIME"]:
        if has_table(db, f"CUPTI_ACTIVITY_KIND_{t}"):
            out += db.execute(f"SELECT start, end FROM CUPTI_ACTIVITY_KIND_{t}").fetchall()
    if has_table(db, "NVTX_EVENTS"):
        out += db.execute("SELECT start, end FROM NVTX_EVENTS "
                          "WHERE eventType IN (59, 60) AND end IS NOT NULL").fetchall()
    return out


def read_rank(path, relative=False):
    """One export as hta-mpi must read it (relative: as stored)."""
    db = connect(path)
    shift = 0 if relative else clock_shift(db)
    times = spans(db)
    nccl = db.execute("SELECT k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                      "JOIN StringIds s ON s.id = k.demangledName "
                      "WHERE s.value LIKE 'ncclKernel%' OR s.value LIKE 'ncclDevKernel%' "
                      "ORDER BY k.start").fetchall()
    gpu = sum(db.execute(f"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_{t}").fetchone()[0]
              for t in GPU_TABLES if has_table(db, f"CUPTI_ACTIVITY_KIND_{t}"))
    host = db.execute("SELECT value FROM TARGET_INFO_SYSTEM_ENV "
                      "WHERE name = 'Hostname'").fetchone()
    return {"rank": recorded_rank(db), "shift": shift, "gpu_events": gpu,
            "host": host[0] if host else None,
            "first": min(s for s, _ in times) + shift, "last": max(e for _, e in times) + shift,
            "nccl": [(s + shift, e + shift) for s, e in nccl]}


def read_set(name, relative=False):
    ranks = {}
    for path in exports(name):
        r = read_rank(path, relative)
        r["file"] = path
        ranks[r["rank"]] = r
    return ranks


def match(ranks):
    """The waits of the k-th NCCL kernel of every rank taken as one
    instance: {rank: {wait, last, caused}} in ns, and the clock violations
    (an instance that ended on one rank before another started it)."""
    counts = {len(r["nccl"]) for r in ranks.values()}
    assert len(counts) == 1, f"the ranks ran different numbers of NCCL kernels: {counts}"
    out = {rank: {"wait": 0, "last": 0, "caused": 0} for rank in ranks}
    violations = 0
    for k in range(counts.pop()):
        starts = {rank: r["nccl"][k][0] for rank, r in ranks.items()}
        latest = max(starts.values())
        waits = {rank: latest - s for rank, s in starts.items()}
        for rank, w in waits.items():
            out[rank]["wait"] += w
        if len(ranks) > 1:
            last = [rank for rank, s in starts.items() if s == latest]
            for rank in last:
                out[rank]["last"] += 1
                out[rank]["caused"] += sum(waits.values()) / len(last)
        violations += min(r["nccl"][k][1] for r in ranks.values()) < latest
    return out, violations


def run_set(name, processes=2, extra=()):
    out, _ = analyse([os.path.join(SETS, name, "traces")], processes=processes, extra=extra)
    return out


def assert_times(ranks, out, what):
    """/ranks: each export's rank, GPU records, host (the Hostname Nsight
    recorded: srun passes the launching node's HOSTNAME to every rank) and
    absolute span."""
    got = table(out, "ranks")
    got = got[got.status != "missing"].set_index("rank")  # ranks without an export
    assert sorted(got.index) == sorted(ranks), (what, list(got.index), sorted(ranks))
    for rank, r in ranks.items():
        row = got.loc[rank]
        assert row["file"] == r["file"], (what, rank, row["file"])
        assert row["gpu_events"] == r["gpu_events"], (what, rank, row["gpu_events"])
        if r["host"]:
            assert row["host"] == r["host"], (what, rank, row["host"], r["host"])
        for col, want in (("first_ts_us", r["first"]), ("last_ts_us", r["last"])):
            assert abs(row[col] - want / US) <= 1, (what, rank, col, row[col], want / US)


def assert_waits(ranks, out, what):
    want, violations = match(ranks)
    got = table(out, "collective_wait").set_index("rank")
    assert int(got["clock_violations"].sum()) == violations, \
        (what, "clock violations", list(got["clock_violations"]), violations)
    for rank, w in want.items():
        row = got.loc[rank]
        assert abs(row["total_wait_us"] - w["wait"] / US) <= 1, \
            (what, rank, "wait", row["total_wait_us"], w["wait"] / US)
        assert row["arrived_last"] == w["last"], (what, rank, row["arrived_last"], w["last"])
        assert abs(row["caused_wait_us"] - w["caused"] / US) <= 1, \
            (what, rank, "caused", row["caused_wait_us"], w["caused"] / US)


def test_every_set_on_the_absolute_clock():
    """Every fs24 set, on 2 and 3 processes: ranks, hosts, absolute spans
    and all-reduce waits as the SQLite gives them, on each export's clock
    (the hosts' clocks left as recorded: --align-clocks off)."""
    for name in FS24:
        ranks = read_set(name)
        for processes in (2, 3):
            out = run_set(name, processes, ["--align-clocks", "off"])
            assert_times(ranks, out, f"{name} on {processes}")
            assert_waits(ranks, out, f"{name} on {processes}")


def test_two_ranks_two_nodes():
    """The 2-rank job: rank 1 arrives last by about 2.8 ms at both
    all-reduces, the kernels' ends agree within about 1 ms and no clock
    condition is violated; read as stored, the same exports violate it."""
    ranks = read_set(FS24[0])
    assert all(r["shift"] > 0 for r in ranks.values()), "these exports are relative"
    for k in range(2):
        late = ranks[1]["nccl"][k][0] - ranks[0]["nccl"][k][0]
        assert 2.5e6 < late < 3.1e6, (k, late)
        assert abs(ranks[1]["nccl"][k][1] - ranks[0]["nccl"][k][1]) < 1.5e6, k
    assert match(ranks)[1] == 0
    assert match(read_set(FS24[0], relative=True))[1] > 0, \
        "read as stored the clocks disagree: the test would not tell"
    got = table(run_set(FS24[0]), "collective_wait").set_index("rank")
    assert got.loc[1, "arrived_last"] == 2 and got.loc[0, "arrived_last"] == 0
    assert got["clock_violations"].sum() == 0


def test_absolute_exports_are_not_shifted():
    """The 6-rank job was exported with --ts-normalize=true: its times are
    already UTC epoch nanoseconds and are kept as stored."""
    name = "fs24_nccl_ring_6rank_2node_abs_ts"
    ranks = read_set(name)
    assert all(r["shift"] == 0 for r in ranks.values())
    assert_times(read_set(name, relative=True), run_set(name), name)


def test_schema_2_export_already_absolute():
    """A schema-2 export records no export parameters; the same export with
    its times moved to the epoch clock (as --ts-normalize writes them) reads
    exactly as the relative original does."""
    src = exports(CHATTERBUG)
    d = tmpdir()
    for path in src:
        copy = os.path.join(d, os.path.basename(path))
        shutil.copy(path, copy)
        db = sqlite3.connect(copy)
        start = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
        for t in GPU_TABLES + ["RUNTIME"]:
            if has_table(db, f"CUPTI_ACTIVITY_KIND_{t}"):
                db.execute(f"UPDATE CUPTI_ACTIVITY_KIND_{t} SET start = start + ?, "
                           "end = end + ?", (start, start))
        db.execute("UPDATE NVTX_EVENTS SET start = start + ?, end = end + ?", (start, start))
        db.commit()
        db.close()
    base = table(run_set(CHATTERBUG), "ranks").set_index("rank")
    moved, _ = analyse([d], processes=2)
    moved = table(moved, "ranks").set_index("rank")
    for col in ("first_ts_us", "last_ts_us", "gpu_events"):
        assert list(base[col]) == list(moved[col]), (col, list(base[col]), list(moved[col]))


def stats_csv(path, start_col, dur_col):
    with open(path, newline="") as f:
        return [(int(row[start_col]), int(row[dur_col]), row) for row in csv.DictReader(f)]


def test_chatterbug_against_nsys_stats():
    """NVIDIA's `nsys stats` reports of each export (times relative to the
    session start, as stored): with the session start added, the first and
    last times of the API, GPU and NVTX traces are /ranks' span, the GPU
    trace's rows its GPU records, and the kernel trace's durations
    /kernels' per-name counts and sums."""
    stats = os.path.join(SETS, CHATTERBUG, "nsys_stats_csv")
    ranks = read_set(CHATTERBUG)
    out = run_set(CHATTERBUG)
    assert_times(ranks, out, CHATTERBUG)
    got = table(out, "ranks").set_index("rank")
    kernels = table(out, "kernels")
    for rank, r in ranks.items():
        stem = os.path.join(stats, os.path.basename(r["file"])[:-len(".sqlite")])
        api = stats_csv(stem + "_cudaapitrace.csv", "Start Time (ns)", "Duration (ns)")
        gpu = stats_csv(stem + "_gputrace.csv", "Start (ns)", "Duration (ns)")
        nvtx = stats_csv(stem + "_nvtxpptrace.csv", "Start (ns)", "Duration (ns)")
        every = api + gpu + nvtx
        first = min(s for s, _, _ in every) + r["shift"]
        last = max(s + d for s, d, _ in every) + r["shift"]
        assert abs(got.loc[rank, "first_ts_us"] - first / US) <= 1, (rank, first)
        assert abs(got.loc[rank, "last_ts_us"] - last / US) <= 1, (rank, last)
        assert got.loc[rank, "gpu_events"] == len(gpu), (rank, len(gpu))
        launched = stats_csv(stem + "_kernexectrace.csv", "Kernel Start (ns)",
                             "Kernel Dur (ns)")
        for name in {row["Kernel Name"] for _, _, row in launched}:
            durs = [d for _, d, row in launched if row["Kernel Name"] == name]
            row = kernels[(kernels["rank"] == rank) & (kernels["name"] == name)].iloc[0]
            assert row["count"] == len(durs), (rank, name, row["count"], len(durs))
            assert abs(row["sum_us"] - sum(durs) / US) <= 0.001 * len(durs), (rank, name)


if __name__ == "__main__":
    main([test_every_set_on_the_absolute_clock, test_two_ranks_two_nodes,
          test_absolute_exports_are_not_shifted, test_schema_2_export_already_absolute,
          test_chatterbug_against_nsys_stats])
