"""Activity categories (CUPTI-notebook view, definitions section 4): HTA has
no equivalent, so the values are checked on hand-built traces whose answers
are known by construction, and against a direct reading of the JSON (with
HTA's last-step filter) on every real trace folder."""
import glob
import gzip
import json
import math
import os
import random
from decimal import Decimal

from common import (TRACES, analyse, assert_close, main, require_traces, table, tmpdir,
                    trace_dir)

EXACT = 1e-9


def kernel(ts, dur, corr):
    return {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"stream": 7, "correlation": corr, "device": 0}}


def cpu(cat, ts, dur, name="op"):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur}


def write_trace(directory, rank, events, shuffle=True):
    if shuffle:
        random.Random(rank).shuffle(events)   # row order must not follow file order
    path = os.path.join(directory, f"rank-{rank}.json")
    with open(path, "w") as f:
        json.dump({"distributedInfo": {"rank": rank, "world_size": 2}, "traceEvents": events}, f)


def built_trace_dir():
    """Rank 0: 200 kernels of 1..200 us, 50 runtime calls of 10 us, 7 cpu ops
    (too few for any tail), 3 nanosecond-resolution copies, plus events that
    must not count (instant, metadata, X without dur or cat).
    Rank 1: a single kernel of 5 us."""
    d = tmpdir()
    ev = [kernel(1000 + 300 * i, i + 1, i) for i in range(200)]
    ev += [cpu("cuda_runtime", 500 + 100 * i, 10, "cudaLaunchKernel") for i in range(50)]
    ev += [cpu("cpu_op", 100 * i, dur) for i, dur in enumerate([3, 1, 4, 1, 5, 9, 2])]
    ev += [dict(kernel(90000 + 10 * i, dur, 900 + i), cat="gpu_memcpy", name="Memcpy HtoD")
           for i, dur in enumerate([0.5, 1.25, 2.125])]
    ev += [{"ph": "i", "cat": "instant", "name": "x", "pid": 1, "tid": 1, "ts": 5, "s": "t"},
           {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "p"}},
           {"ph": "X", "name": "no cat", "pid": 1, "tid": 1, "ts": 5, "dur": 5},
           {"ph": "X", "cat": "no_dur", "name": "x", "pid": 1, "tid": 1, "ts": 5}]
    write_trace(d, 0, ev)
    write_trace(d, 1, [kernel(100, 5, 1)])
    return d


def test_known_answers():
    out, _ = analyse(built_trace_dir(), processes=2)
    got = table(out, "/activity_categories")
    assert list(got["rank"]) == [0, 0, 0, 0, 1], got
    r0 = got[got["rank"] == 0].set_index("category")
    assert list(r0.index) == ["cpu_op", "cuda_runtime", "gpu_memcpy", "kernel"], r0
    grand = 20100 + 500 + 25 + 3.875
    nan = float("nan")
    want = {
        # count, total, max, min, top1/5/10 share, top1/5/10 mean
        "kernel": (200, 20100, 200, 1, (199 + 200) / 20100, sum(range(191, 201)) / 20100,
                   sum(range(181, 201)) / 20100, 199.5, 195.5, 190.5),
        "cuda_runtime": (50, 500, 10, 10, 0.0, 20 / 500, 50 / 500, nan, 10.0, 10.0),
        "cpu_op": (7, 25, 9, 1, 0.0, 0.0, 0.0, nan, nan, nan),
        "gpu_memcpy": (3, 3.875, 2.125, 0.5, 0.0, 0.0, 0.0, nan, nan, nan),
    }
    cols = ["count", "total_us", "max_us", "min_us", "top1_share", "top5_share", "top10_share",
            "top1_mean_us", "top5_mean_us", "top10_mean_us"]
    for cat, values in want.items():
        for col, v in zip(cols, values):
            assert_close(r0.loc[cat, col], v, f"{cat} {col}", EXACT)
        assert_close(r0.loc[cat, "share"], values[1] / grand, f"{cat} share", EXACT)
    r1 = got[got["rank"] == 1].iloc[0]
    assert r1.category == "kernel" and r1["count"] == 1 and r1.share == 1.0, r1
    assert r1.top1_share == 0.0 and math.isnan(r1.top10_mean_us), r1


def test_tail_sizes_are_exact_integer_fractions():
    # int(n * p) events: 99 -> 0/4/9, 100 -> 1/5/10, 1999 -> 19/99/199.
    for n in (99, 100, 1999):
        d = tmpdir()
        write_trace(d, 0, [kernel(10 * i, 1, i) for i in range(n)])
        out, _ = analyse(d)
        row = table(out, "/activity_categories").iloc[0]
        for p, col in ((1, "top1"), (5, "top5"), (10, "top10")):
            k = n * p // 100
            assert_close(row[f"{col}_share"], k / n, f"n={n} {col}_share", EXACT)
            if k:
                assert_close(row[f"{col}_mean_us"], 1.0, f"n={n} {col}_mean_us", EXACT)
            else:
                assert math.isnan(row[f"{col}_mean_us"]), row


def tail_cases():
    """Category name -> durations in ns, in trace order: the cases a bounded
    selection of the longest 10% can get wrong (fewer than 10 events, tails
    of exactly 1, 5 and 10 events, ties where the kept set ends, durations
    only ever entering it: ascending, all in one power of two, and zeros)."""
    rng = random.Random(7)
    spread = [int(2 ** rng.uniform(0, 30)) for _ in range(2000)]
    spread += rng.sample(spread, 500)      # repeated values
    rng.shuffle(spread)
    return {
        "n9": [1000 * (i + 1) for i in range(9)],
        "n10": [1000 * (i + 1) for i in range(10)],
        "n20": rng.sample([1000 * (i + 1) for i in range(20)], 20),
        "n100": rng.sample([1000 * (i + 1) for i in range(100)], 100),
        "ascending": [37 * i for i in range(1, 5001)],
        "descending": [37 * i for i in range(5000, 0, -1)],
        "ascending_one_class": [4096 + i for i in range(3000)],
        "descending_one_class": [4096 + i for i in range(2999, -1, -1)],
        "ties": [6000] * 950 + [7000] * 50,
        "ties_interleaved": [7000 if i % 20 == 0 else 6000 for i in range(1000)],
        "all_equal": [5000] * 100,
        "zeros": [0] * 30,
        "zero_and_one": [0] * 19 + [1],
        "spread": spread,
    }


def tail_row(durs, grand):
    """The row the definitions give, from the sorted durations."""
    n, total = len(durs), sum(durs)
    longest = sorted(durs, reverse=True)
    shares, means = [], []
    for p in (1, 5, 10):
        k = n * p // 100
        top = sum(longest[:k])
        shares.append((top / total if total else float("nan")) if k else 0.0)
        means.append(top / k / 1000 if k else float("nan"))
    return [n, total / 1000, total / grand, max(durs) / 1000, min(durs) / 1000] + shares + means


def test_tails_by_construction():
    cases = tail_cases()
    in_order = [(cat, d) for cat, durs in cases.items() for d in durs]
    events = [cpu(cat, 10000.0 * i, d / 1000) for i, (cat, d) in enumerate(in_order)]
    d = tmpdir()
    write_trace(d, 0, events, shuffle=False)
    out, _ = analyse(d)
    got = table(out, "/activity_categories").set_index("category")
    assert list(got.index) == sorted(cases), got.index
    grand = sum(sum(durs) for durs in cases.values())
    cols = ["count", "total_us", "share", "max_us", "min_us", "top1_share", "top5_share",
            "top10_share", "top1_mean_us", "top5_mean_us", "top10_mean_us"]
    for cat, durs in cases.items():
        for col, v in zip(cols, tail_row(durs, grand)):
            assert_close(got.loc[cat, col], v, f"{cat} {col}", EXACT)
    # Spot checks by hand: 5 longest of the ties are all 7 us, the 10 longest
    # of 1..10 us only 10 us, and zeros have no share to speak of.
    assert got.loc["ties", "top5_mean_us"] == 7.0 and got.loc["ties", "top10_mean_us"] == 6.5
    assert got.loc["n10", "top10_mean_us"] == 10.0 and math.isnan(got.loc["n10", "top5_mean_us"])
    assert got.loc["zeros", "top1_share"] == 0.0 and math.isnan(got.loc["zeros", "top10_share"])


# --- invariants on every real trace folder -------------------------------

def load_events(path):
    """Kept events as the reader defines them: (cat, name, ts_ns, dur_ns, gpu, correlation)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    kept = []
    for e in events:
        if e.get("ph") != "X" or "cat" not in e or "dur" not in e or "ts" not in e:
            continue
        if e["dur"] < 0:
            continue
        args = e.get("args") or {}
        stream = args.get("stream")
        gpu = isinstance(stream, (int, Decimal)) and not isinstance(stream, bool)
        kept.append((e["cat"], e.get("name", ""), int(Decimal(e["ts"]) * 1000),
                     int(Decimal(e["dur"]) * 1000), gpu, int(args.get("correlation", -1))))
    return kept


def last_step_filter(kept):
    """definitions section 2: keep CPU-side events before the last
    ProfilerStep and the GPU events they launched."""
    def cpu_side(e):
        return not (e[4] and e[5] >= 0)
    steps = [e for e in kept if cpu_side(e) and e[1].startswith("ProfilerStep#")]
    if len({e[1] for e in steps}) < 2:
        return kept
    cutoff = max(e[2] for e in steps)
    kept_cpu = [e for e in kept if cpu_side(e) and e[2] < cutoff]
    launched = {e[5] for e in kept_cpu if e[5] >= 0}
    return kept_cpu + [e for e in kept if not cpu_side(e) and e[5] in launched]


def check_real_folder(folder):
    out, _ = analyse(trace_dir(folder), expect=None)
    ranks = table(out, "/ranks")
    got = table(out, "/activity_categories")
    for _, r in ranks[~ranks.status.isin(["failed", "missing"])].iterrows():
        mine = got[got["rank"] == r["rank"]].set_index("category")
        assert list(mine.index) == sorted(mine.index), f"{folder}: not in name order"
        assert_close(mine.share.sum(), 1.0, f"{folder} rank {r['rank']} shares", 1e-12)
        if not r.step_filter_applied:
            assert mine["count"].sum() == r.events, f"{folder}: {mine['count'].sum()} != {r.events}"
        kept = last_step_filter(load_events(r.file))
        assert mine["count"].sum() == len(kept), f"{folder}: counts vs JSON"
        for cat in mine.index:
            durs = [e[3] for e in kept if e[0] == cat]
            assert mine.loc[cat, "count"] == len(durs), f"{folder} {cat} count"
            assert_close(mine.loc[cat, "total_us"], sum(durs) / 1000, f"{folder} {cat} total", EXACT)
            assert_close(mine.loc[cat, "max_us"], max(durs) / 1000, f"{folder} {cat} max", EXACT)
            assert_close(mine.loc[cat, "min_us"], min(durs) / 1000, f"{folder} {cat} min", EXACT)
            top10 = sorted(durs, reverse=True)[:len(durs) // 10]
            share = (sum(top10) / sum(durs) if sum(durs) else float("nan")) if top10 else 0.0
            assert_close(mine.loc[cat, "top10_share"], share, f"{folder} {cat} top10", 1e-12)
            assert 0 <= mine.loc[cat, "top1_share"] <= mine.loc[cat, "top5_share"] \
                <= mine.loc[cat, "top10_share"] <= 1, f"{folder} {cat} tails"


def make_real_test(folder):
    def test():
        check_real_folder(folder)
    test.__name__ = f"test_invariants_{folder}"
    return test


def real_tests():
    """One test per real trace folder; one that says why when there are none."""
    folders = sorted(os.path.basename(p) for p in glob.glob(os.path.join(TRACES, "hta", "*")))

    def test_invariants_on_real_traces():
        require_traces()
        raise AssertionError(f"no trace folder in {TRACES}/hta")

    return [make_real_test(f) for f in folders] or [test_invariants_on_real_traces]


if __name__ == "__main__":
    main([test_known_answers, test_tail_sizes_are_exact_integer_fractions, test_tails_by_construction] +
         real_tests())
