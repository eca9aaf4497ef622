"""--write-traces DIR: each analysed trace written back under its own name
(gzip when it was gzip), every original event kept, the critical path's
events marked "critical": 1 with flows where the path crosses CPU and GPU,
counter tracks (queue length per stream, memory bandwidth per copy kind,
timeline share per step) with the fields Perfetto and chrome://tracing
need, each collective's wait for its peers as an instant event, the rank's
outlier flags at the top level; hta-mpi reading the written traces gives
the same tables."""
import subprocess
import gzip
import json
import os

import numpy as np

from common import TRACEGEN, TRACES, analyse, critical_path_segments, table, tmpdir
from handbuilt import write_ranks
from critical_path_traces import steps_trace, synced_step

TABLES = ["temporal_breakdown", "kernels", "idle_time", "launch_stats", "queue_length",
          "memory_bw", "critical_path", "critical_path_events", "critical_path_names", "ops",
          "collective_wait"]


def load(path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rt") if gz else open(path)) as f:
        return gz, json.load(f)


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def check_added_events(events):
    """Every added event has what the viewers need."""
    added = [e for e in events if e.get("cat") in ("hta_mpi", "critical_path") or
             e.get("pid") == 999999]
    assert added, "nothing added"
    for e in added:
        assert e["ph"] in ("C", "s", "f", "M", "i"), e
        assert isinstance(e["name"], str) and e["name"], e
        assert is_number(e["pid"]) and is_number(e["tid"]), e
        if e["ph"] != "M":
            assert is_number(e["ts"]), e
        if e["ph"] == "C":
            assert e["args"] and all(is_number(v) for v in e["args"].values()), e
        if e["ph"] in ("s", "f"):
            assert is_number(e["id"]) and e["cat"] == "critical_path", e
        if e["ph"] == "f":
            assert e["bp"] == "e", e
        if e["ph"] == "i":
            assert e["s"] == "t" and is_number(e["args"]["wait_us"]), e
    flows = [e for e in added if e["ph"] in ("s", "f")]
    starts = sorted(e["id"] for e in flows if e["ph"] == "s")
    assert starts == sorted(e["id"] for e in flows if e["ph"] == "f")
    return added




def check_folder(inputs, processes=1):
    out_dir = os.path.join(tmpdir(), "written")
    first, _ = analyse(inputs, processes=processes,
                       extra=["--critical-path", "--write-traces", out_dir])
    files = sorted(os.listdir(out_dir))
    originals = {}
    for d in inputs:
        for name in os.listdir(d):
            originals[name] = os.path.join(d, name)
    assert files == sorted(originals), (files, originals)
    cp_events = critical_path_segments(first)
    for name in files:
        gz_in, orig = load(originals[name])
        gz_out, written = load(os.path.join(out_dir, name))
        assert gz_in == gz_out, name
        ev = written["traceEvents"]
        added = check_added_events(ev)
        kept = [e for e in ev if not any(e is a for a in added)]
        assert len(kept) == len(orig["traceEvents"]), name
        critical = [e for e in kept if isinstance(e.get("args"), dict) and e["args"].get("critical") == 1]
        assert critical and all(e["ph"] == "X" for e in critical), name
        for a, b in zip(orig["traceEvents"], kept):
            b = json.loads(json.dumps(b))
            if isinstance(b.get("args"), dict) and b["args"].pop("critical", None) == 1 and \
                    "args" not in a and not b["args"]:
                del b["args"]
            assert a == b, (a, b)
        # Every step's longest segment is an event marked critical.
        names = {e["name"] for e in critical}
        for _, g in cp_events.groupby(["rank", "step"]):
            top = g[g.position == 1].iloc[0]
            assert top["name"] == "" or top["name"] in names, top
        meta = written["hta_mpi"]
        assert {k: v for k, v in written.items() if k not in ("traceEvents", "hta_mpi")} == \
            {k: v for k, v in orig.items() if k != "traceEvents"}
        ranks = table(first, "ranks")
        rank = ranks[ranks.file.str.endswith("/" + name)]["rank"].iloc[0]
        assert meta["rank"] == rank, (meta, rank)
        out = table(first, "outliers")
        want = sorted(out[out["rank"] == rank].metric)
        assert sorted(o["metric"] for o in meta["outliers"]) == want, (name, meta, want)
    second, _ = analyse(out_dir, processes=processes, extra=["--critical-path"])
    for name in TABLES:
        a, b = table(first, name), table(second, name)
        assert a.equals(b), (name, a.compare(b) if a.shape == b.shape else (a.shape, b.shape))
    return out_dir


def check_without_gpu():
    """A CPU-only trace: its step's path is empty (no GPU event, no op in
    the step), so the written trace is the original with the added events
    and metadata and nothing marked critical."""
    src = os.path.join(TRACES, "hta", "cpu_only")
    out_dir = os.path.join(tmpdir(), "written")
    out, _ = analyse(src, extra=["--critical-path", "--write-traces", out_dir])
    assert table(out, "critical_path").nodes.tolist() == [0]
    assert sorted(os.listdir(out_dir)) == sorted(os.listdir(src))
    for name in os.listdir(out_dir):
        _, orig = load(os.path.join(src, name))
        _, written = load(os.path.join(out_dir, name))
        added = check_added_events(written["traceEvents"])
        kept = [e for e in written["traceEvents"] if not any(e is a for a in added)]
        assert kept == orig["traceEvents"], name


def check_counters():
    """One 40 ms kernel per step: the queue holds it from launch to start;
    the step's compute share is the kernel's 40 ms of the step window."""
    d = write_ranks({0: steps_trace(synced_step)})
    out_dir = check_folder([d])
    _, doc = load(os.path.join(out_dir, "rank-0.json"))
    ev = doc["traceEvents"]
    q = [(e["ts"], e["args"]["queue length"]) for e in ev if e["ph"] == "C" and
         e["name"] == "queue length (stream 7)"]
    assert q[:2] == [(1_000_015, 1), (1_000_040, 0)], q[:4]
    shares = [e for e in ev if e["ph"] == "C" and e["name"] == "timeline share"]
    assert len(shares) == 3 and shares[0]["ts"] == 1_000_000, shares
    assert abs(shares[0]["args"]["compute"] - 40_000 / 99_990) < 1e-6, shares[0]
    assert abs(sum(shares[0]["args"].values()) - 1) < 1e-5
    flows = [e for e in ev if e["ph"] in ("s", "f")]
    # launch -> kernel and kernel -> sync call, each step.
    assert len(flows) == 3 * 2 * 2, flows


def check_outliers():
    """A generated straggler (rank 2, 1.5x compute): its flags are in its
    trace, and the other ranks' traces list none of its."""
    d = tmpdir()
    subprocess.run([TRACEGEN, "-o", d, "--ranks", "4", "--size-mb", "1", "--straggler", "2:1.5"],
                   check=True, capture_output=True)
    out_dir = check_folder([d], processes=2)
    with open(os.path.join(out_dir, "rank-2.json")) as f:
        meta = json.load(f)["hta_mpi"]
    assert meta["rank"] == 2 and any(o["metric"] == "compute_time_us" for o in meta["outliers"])
    for o in meta["outliers"]:
        assert set(o) == {"metric", "value", "z", "robust_z", "classification"}, o


def check_collective_waits():
    """A tensor x data parallel job, rank 3 slow: each rank's instant
    events add up to its /collective_wait figures, and match the
    generator's own waits."""
    d = os.path.join(tmpdir(), "job")
    subprocess.run([TRACEGEN, "--tp", "2", "--dp", "2", "--slow", "3:1.3", "-o", d],
                   check=True, capture_output=True)
    with open(d + ".truth.json") as f:
        truth = {w["rank"]: w for w in json.load(f)["ranks"]}
    out_dir = check_folder([d], processes=2)
    results, _ = analyse(d, processes=2)
    cw = table(results, "collective_wait").set_index("rank")
    for rank in cw.index:
        _, doc = load(os.path.join(out_dir, f"rank-{rank}.json"))
        waits = [e for e in doc["traceEvents"] if e["ph"] == "i" and e.get("pid") == 999999]
        track = [e for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"
                 and e.get("pid") == 999999]
        assert track and track[0]["args"]["name"] == "collective wait", track
        row = cw.loc[rank]
        assert abs(sum(e["args"]["wait_us"] for e in waits) - row.total_wait_us) < 1e-3 * len(waits)
        assert abs(sum(e["args"]["caused_wait_us"] for e in waits) - row.caused_wait_us) < \
            1e-3 * len(waits)
        assert sum(e["args"]["arrived_last"] for e in waits) == row.arrived_last, rank
        assert all(e["name"] == ("wait for peers" if e["args"]["wait_us"] > 0 else "arrived last")
                   for e in waits), waits
        assert abs(row.total_wait_us - truth[rank]["total_wait_us"]) < 1e-3 * len(waits), \
            (rank, row.total_wait_us, truth[rank])


check_outliers()
check_collective_waits()
check_folder([os.path.join(TRACES, "hta", "trace_filter")], processes=2)
check_folder([os.path.join(TRACES, "hta", "critical_path_event_sync_multi_stream")])
check_folder([os.path.join(TRACES, "hta", "negative_queue")])
check_without_gpu()
check_counters()
print("ok")
