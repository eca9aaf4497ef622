"""Clock offsets between hosts, taken out before the waits
(crossrank/exchange/clock_offsets.c, docs/crossrank.md).

Answers known by construction: hta-tracegen's DDP job of 32 ranks, 8 to a
node, whose all-reduces end at the same instant on every rank; with
--clock-offset K:US node K's clock reads US microseconds ahead, every
event of its ranks moved by US and nothing else changed.
"""
from common import *

SAME = ["/collective_wait", "/stragglers", "/collectives", "/collective_summary",
        "/comm_by_group", "/process_groups"]


def job(*offsets):
    d = tmpdir()
    args = [TRACEGEN, "-o", d, "--ranks", "32", "--ranks-per-node", "8", "--size-mb", "0.3"]
    for node, us in offsets:
        args += ["--clock-offset", f"{node}:{us}"]
    subprocess.run(args, check=True)
    return d


def assert_same(a, b, what):
    for name in SAME:
        x, y = table(a, name), table(b, name)
        assert x.equals(y), (what, name, x.compare(y) if x.shape == y.shape else (x, y))


def test_offsets_are_recovered_and_every_wait_is_the_offset_free_jobs():
    """+250 us on node 1 and -400 us on node 2: both recovered within 2 us
    (on 1 and 3 processes alike) and applied, nodes 0 and 3 left alone;
    the violations they caused are gone, and every wait, straggler and
    collective row equals the job without offsets."""
    free_out, _ = analyse(job(), processes=2)
    shifted = job((1, 250), (2, -400))
    for processes in (1, 3):
        out, p = analyse(shifted, processes=processes)
        c = table(out, "/clock_offsets").set_index("host")
        want = {"node0": 0, "node1": 250, "node2": -400, "node3": 0}
        for host, us in want.items():
            assert abs(c.loc[host, "offset_us"] - us) <= 2, c
            assert c.loc[host, "applied"] == (us != 0), c
        assert c.violations_before.sum() > 0 and c.violations_after.sum() == 0, c
        assert "node1 +250.0 us" in p.stdout and "node2 -400.0 us" in p.stdout, p.stdout
        assert_same(free_out, out, f"{processes} processes")


def test_off_leaves_the_offsets_in_and_says_so():
    """--align-clocks off measures but applies nothing: node 2's ranks end
    their all-reduces before the others start them."""
    out, _ = analyse(job((1, 250), (2, -400)), extra=["--align-clocks", "off"])
    c = table(out, "/clock_offsets").set_index("host")
    assert (c.applied == 0).all() and c.loc["node2", "violations_after"] > 0, c
    w = table(out, "/collective_wait")
    assert w.clock_violations.sum() == c.violations_after.sum(), (w, c)


def test_without_offsets_nothing_moves():
    """No offset injected: every offset is 0, none is applied, and the
    results equal those with --align-clocks off."""
    d = job()
    out, p = analyse(d)
    off, _ = analyse(d, extra=["--align-clocks", "off"])
    c = table(out, "/clock_offsets")
    assert (c.offset_us == 0).all() and (c.applied == 0).all(), c
    assert "Clocks:" not in p.stdout, p.stdout
    assert_same(off, out, "--align-clocks off")


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
