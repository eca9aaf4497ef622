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


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
