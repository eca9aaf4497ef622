"""Hand-built Kineto traces for tests whose answers are known by
construction: GPU events as the PyTorch profiler writes them, one JSON file
per rank in a fresh directory."""
import json
import os

from common import tmpdir

# Kineto's stream for events that belong to no stream (Context Sync).
NO_STREAM = 4294967295


def gpu_kernel(name, ts, dur, stream=7, corr=-1):
    """A GPU event; ts and dur in us, fractions allowed."""
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts,
            "dur": dur, "args": {"stream": stream, "correlation": corr, "device": 0}}


def write_ranks(traces):
    """Writes {rank: [events]} as rank-<r>.json into a fresh directory; returns it."""
    d = tmpdir()
    for rank, events in traces.items():
        with open(os.path.join(d, f"rank-{rank}.json"), "w") as f:
            json.dump({"distributedInfo": {"rank": rank, "world_size": len(traces)},
                       "traceEvents": events}, f)
    return d
