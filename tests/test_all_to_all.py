"""All-to-all(v) traffic: /a2a_matrix, /a2a per instance, the per-rank
bytes in /rank_metrics and the split sizes' consistency.

Answers known by construction: hta-tracegen --moe (tools/tracegen_moe.c)
routes each rank's tokens with a seeded matrix, one expert rank hot, and
writes the matrix, every instance's bytes, wall time, imbalance and
busiest rank, and each rank's bytes beside the traces (DIR.truth.json).
"""
import json

from common import *


def moe(extra=()):
    d = os.path.join(tmpdir(), "job")
    subprocess.run([TRACEGEN, "--moe", "-o", d] + list(extra), check=True)
    with open(d + ".truth.json") as f:
        return d, json.load(f)


def check_against_truth(out, truth):
    m = table(out, "/a2a_matrix")
    assert list(m.columns) == ["group", "src", "dst", "bytes", "count"], m.columns
    keys = list(zip(m.group, m.src, m.dst))
    assert keys == sorted(keys), "matrix not in (group, src, dst) order"
    want = {(w["group"], w["src"], w["dst"]): (w["bytes"], w["count"]) for w in truth["matrix"]}
    got = {k: (b, c) for k, b, c in zip(keys, m.bytes, m["count"])}
    assert got == want, (got, want)
    inst = table(out, "/a2a").set_index("seq")
    assert len(inst) == len(truth["instances"]), inst
    for w in truth["instances"]:
        g = inst.loc[w["seq"]]
        what = f"instance {w['seq']}"
        assert g.collective == w["collective"] and g.n_ranks == 8, (what, g)
        assert g.bytes == w["bytes"] and round(g.wall_us * 1000) == w["wall_ns"], (what, g, w)
        assert_close(g.throughput_gbps, w["bytes"] / w["wall_ns"], what, rel_tol=1e-12)
        assert_close(g.imbalance, w["imbalance"], what, rel_tol=1e-12)
        assert (g.busiest_rank, g.busiest_bytes) == (w["busiest_rank"], w["busiest_bytes"]), \
            (what, g, w)
        assert g.split_mismatch == w["split_mismatch"], (what, g, w)
    metrics = table(out, "/rank_metrics")
    for name in ("sent_bytes", "received_bytes"):
        metric = "a2a_bytes_" + name.split("_")[0]
        got = metrics[metrics.metric == metric].set_index("rank").value
        assert {r: int(v) for r, v in got.items()} == {w["rank"]: w[name] for w in truth["ranks"]}, \
            (metric, got)
    # all_to_allv counts differ by design: no metadata mismatch.
    assert (table(out, "/collectives").mismatched_ranks == "").all()


def test_matrix_instances_and_ranks_equal_the_truth():
    d, truth = moe()
    out, p = analyse(d, processes=2)
    check_against_truth(out, truth)
    assert "  hottest rank: 3 received " in p.stdout, p.stdout
    assert "split sizes disagree" not in p.stdout, p.stdout


def test_an_injected_split_mismatch_is_counted():
    """Rank 1 expects a row more from rank 0 at the first dispatch than
    rank 0 sends: that instance, and only it, has split_mismatch 1."""
    d, truth = moe(["--split-mismatch", "--hot", "5:4", "--seed", "7"])
    out, p = analyse(d, processes=3)
    check_against_truth(out, truth)
    inst = table(out, "/a2a")
    assert list(inst.split_mismatch) == [1] + [0] * (len(inst) - 1), inst
    assert "  1 instances whose split sizes disagree" in p.stdout, p.stdout
    assert "  hottest rank: 5 received " in p.stdout, p.stdout


A2A_TABLES = ["/a2a", "/a2a_matrix", "/rank_metrics", "/collectives", "/outliers"]


def test_identical_on_1_2_3_4_processes():
    d, _ = moe(["--ep", "6", "--layers", "3", "--split-mismatch"])
    base = None
    for n in (1, 2, 3, 4):
        out, _ = analyse(d, processes=n)
        tables = {name: table(out, name) for name in A2A_TABLES}
        if base is None:
            base = tables
            continue
        for name in A2A_TABLES:
            pd.testing.assert_frame_equal(tables[name], base[name], check_exact=True,
                                          obj=f"{name} with {n} processes")


def raw_moe_steps(d, ep):
    """Per step number (the last left out: the step filter drops it), the
    longest ProfilerStep over the ranks and, per layer, every rank's
    expert kernel duration and the all-to-alls' transfer (end - latest
    start), from the raw files of a --cpu-ahead job."""
    steps, experts, a2a = {}, {}, {}
    for r in range(ep):
        with open(os.path.join(d, f"rank-{r}.json")) as f:
            events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
        ranges = sorted((float(e["ts"]), float(e["ts"]) + float(e["dur"]),
                         int(e["name"].split("#")[1]))
                        for e in events if e["name"].startswith("ProfilerStep#"))
        for start, end, n in ranges:
            steps[n] = max(steps.get(n, 0.0), end - start)
            kernels = sorted((float(e["ts"]), float(e["dur"]), e["name"]) for e in events
                             if e.get("cat") == "kernel" and start <= float(e["ts"]) < end)
            mine = [dur for _, dur, name in kernels if name == "expert_gemm_kernel"]
            for layer, dur in enumerate(mine):
                experts.setdefault((n, layer), {})[r] = dur
            comm = [(ts, ts + dur) for ts, dur, name in kernels if "SendRecv" in name]
            for k, span in enumerate(comm):
                a2a.setdefault((n, k), []).append(span)
    last = max(steps)
    transfer = {key: max(e for _, e in spans) - max(s for s, _ in spans)
                for key, spans in a2a.items()}
    return ({n: t for n, t in steps.items() if n != last},
            {k: v for k, v in experts.items() if k[0] != last},
            {k: v for k, v in transfer.items() if k[0] != last})


def test_a_hot_expert_replayed():
    """MoE with a hot expert (--hot 3:3), as PyTorch runs it (--cpu-ahead),
    and the same job without it (--hot 3:1, same seed: the same routing
    draws).  The replay as measured is within 1% of every step of both,
    and on the job without the hot expert no scenario saves more than 1%.
    The hot expert is hot by routing: it receives 1.9x the median rank's
    tokens, so fixing it changes every all-to-all's volume and every
    expert's load, which no scenario of the replay changes (it keeps each
    all-to-all's measured transfer).  So median:3 and compute:3:3 are
    checked against what they mean, computed from the raw files: rank 3's
    expert kernels at the median of the ranks' at that layer (or 3x
    faster), the step shortened by how much earlier the last expert
    ends, since every rank waits at the combine for the last one; and the
    job without the hot expert is faster still (docs/crossrank.md)."""
    job = ["--cpu-ahead", "--steps", "3", "--layers", "2", "--seed", "5"]
    specs = ["median:3", "compute:3:3", "median:all"]
    runs = {}
    for hot in ("3:3", "3:1"):
        d, _ = moe(job + ["--hot", hot])
        steps, experts, transfer = raw_moe_steps(d, 8)
        options = ["--replay"] + [o for spec in specs for o in ("--what-if", spec)]
        out, _ = analyse(d, processes=2, extra=options)
        rows = table(out, "/what_if")
        mine = rows[rows.scenario == "as measured"].set_index("step")
        assert sorted(mine.index) == sorted(steps), (mine, steps)
        for n, t in steps.items():
            assert_close(mine.loc[n, "replayed_step_time_us"], t, f"{hot}: step {n}",
                         rel_tol=0.01)
        runs[hot] = (steps, experts, transfer, rows)
    steps, _, _, rows = runs["3:1"]
    saving = rows[rows.scenario != "as measured"].saving_pct
    assert (saving.abs() <= 1.0).all(), rows
    steps, experts, transfer, rows = runs["3:3"]
    for spec, fixed in (("median:3", lambda d: float(np.median(list(d.values())))),
                        ("compute:3:3", lambda d: d[3] / 3)):
        got = rows[rows.scenario == spec].set_index("step").predicted_step_time_us
        for n, t in steps.items():
            shorter = 0.0
            for (m, layer), durations in experts.items():
                if m == n:
                    others = max(v for r, v in durations.items() if r != 3)
                    shorter += max(durations.values()) - max(others, fixed(durations))
            assert_close(got[n], t - shorter, f"{spec}: step {n}", rel_tol=0.01)
            base = runs["3:1"][0][n]
            assert base < 0.99 * got[n], (spec, n, base, got[n])
    # What the replay keeps: the hot job's all-to-alls move more bytes
    # through the hot rank, so each transfer is longer than without it.
    for key, t in transfer.items():
        assert t > runs["3:1"][2][key], (key, t, runs["3:1"][2][key])


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
