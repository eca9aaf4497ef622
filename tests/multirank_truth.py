"""Expected collective waits of a real multi-rank Kineto job, computed from
the raw JSON by a small matcher of the tests' own (never through hta-mpi).

Per rank: its NCCL kernels (HTA's step filter applied: with two or more
ProfilerSteps, only those launched before the last one starts); a kernel
launched inside a send's or recv's op is point-to-point and left out, any
other is a collective.  The k-th collective kernel on stream s of every
rank using s is one instance; each rank waits latest start - own start,
the ranks starting at the latest start arrived last (when not all did),
sharing the others' wait as the wait they caused.  The straggler verdict
follows docs/crossrank.md: a binomial test on the last arrivals, or more
than half of all the wait caused and twice any other rank's, and nothing
when even arriving last every time would not pass the test."""
import collections
import gzip
import json
import math
import os

P2P_OPS = {"nccl:send", "nccl:recv", "c10d::send", "c10d::recv_", "c10d::recv_any_source_"}


def _events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        trace = json.load(f)
    return trace, [e for e in trace["traceEvents"] if e.get("ph") == "X" and "dur" in e]


def _is_gpu(e):
    return isinstance(e.get("args", {}).get("stream"), int)


def _is_p2p_launch(launch, ops_by_thread):
    """Whether an op enclosing the launch on its thread is a send or recv."""
    for op in ops_by_thread.get((launch["pid"], launch["tid"]), ()):
        if op["ts"] <= launch["ts"] <= op["ts"] + op["dur"]:
            if op["name"] in P2P_OPS or "batch_isend_irecv" in op["name"]:
                return True
    return False


def rank_kernels(path):
    """(rank, world size, [(stream, start_us, end_us)] of the rank's
    collective kernels in start order)."""
    trace, events = _events(path)
    steps = sorted(e["ts"] for e in events if e["name"].startswith("ProfilerStep#"))
    cutoff = steps[-1] if len(steps) >= 2 else math.inf
    launches = {e["args"]["correlation"]: e for e in events
                if not _is_gpu(e) and "correlation" in e.get("args", {})}
    ops = collections.defaultdict(list)
    for e in events:
        if e.get("cat") in ("cpu_op", "user_annotation"):
            ops[(e["pid"], e["tid"])].append(e)
    kernels = []
    for e in events:
        if not (_is_gpu(e) and e.get("cat") == "kernel" and "nccl" in e["name"].lower()):
            continue
        launch = launches.get(e["args"].get("correlation"))
        if launch is None or launch["ts"] >= cutoff or _is_p2p_launch(launch, ops):
            continue
        kernels.append((e["args"]["stream"], e["ts"], e["ts"] + e["dur"]))
    kernels.sort(key=lambda k: k[1])
    info = trace["distributedInfo"]
    return info["rank"], info["world_size"], kernels


def match(kernels_by_rank):
    """Per rank: wait, matched, arrived_last, caused wait (us), clock
    violations; and the instances as lists of (rank, start, end)."""
    figures = {r: dict(wait=0.0, matched=0, arrived_last=0, caused=0.0, violations=0,
                       expected_last=0.0)
               for r in kernels_by_rank}
    by_stream = collections.defaultdict(dict)
    for r, kernels in kernels_by_rank.items():
        for stream, start, end in kernels:
            by_stream[stream].setdefault(r, []).append((start, end))
    instances = []
    for stream in sorted(by_stream):
        ranks = by_stream[stream]
        for k in range(min(len(v) for v in ranks.values())):
            inst = [(r, ranks[r][k][0], ranks[r][k][1]) for r in sorted(ranks)]
            instances.append(inst)
            latest = max(s for _, s, _ in inst)
            last = [r for r, s, _ in inst if s == latest]
            contested = len(last) < len(inst)
            waited = sum(latest - s for _, s, _ in inst)
            for r, s, e in inst:
                f = figures[r]
                f["matched"] += 1
                f["wait"] += latest - s
                f["violations"] += e < latest
                if contested:
                    f["arrived_last"] += s == latest
                    f["expected_last"] += 1 / len(inst)
            for r in last if contested else ():
                figures[r]["caused"] += waited / len(last)
    return figures, instances


def _binomial_tail(k, n, p):
    return min(1.0, sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                                 + i * math.log(p) + (n - i) * math.log1p(-p))
                        for i in range(k, n + 1)))


def flagged_stragglers(figures):
    """The ranks docs/crossrank.md flags as stragglers."""
    ranks = [r for r, f in figures.items() if f["matched"]]
    total = sum(f["caused"] for f in figures.values())
    out = set()
    for r in ranks:
        f = figures[r]
        if f["caused"] <= 0:
            continue
        fair = f["expected_last"] / f["matched"]
        if _binomial_tail(f["matched"], f["matched"], fair) >= 0.001 / len(ranks):
            continue  # too few collectives to tell from chance
        share = f["arrived_last"] / f["matched"]
        by_chance = (0 < fair < 1 and share >= min(2 * fair, (1 + fair) / 2)
                     and _binomial_tail(f["arrived_last"], f["matched"], fair) < 0.001 / len(ranks))
        others = max((figures[q]["caused"] for q in ranks if q != r), default=0)
        dominant = f["caused"] > total / 2 and f["caused"] >= 2 * others
        if by_chance or dominant:
            out.add(r)
    return out


def folder_truth(folder, shift_us=None):
    """match() of every trace of a folder, by rank; shift_us(rank), when
    given, is subtracted from each rank's times (a clock offset)."""
    kernels = {}
    for name in sorted(os.listdir(folder)):
        if ".pt.trace.json" in name or name.endswith(".json.gz"):
            rank, _, k = rank_kernels(os.path.join(folder, name))
            shift = shift_us(rank) if shift_us else 0
            kernels[rank] = [(s, start - shift, end - shift) for s, start, end in k]
    return match(kernels)
