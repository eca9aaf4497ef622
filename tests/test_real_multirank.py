"""Real multi-rank jobs read as a user would, against values computed from
the raw JSON by the tests' own matcher (tests/multirank_truth.py).

param_dlrm_8rank: TorchRec DLRM with DDP on 8 V100s, no process-group
metadata; per rank 3 all-reduces and 5 all-to-alls, each all-to-all a
ncclKernel_SendRecv kernel launched by c10d::alltoall_base_ inside
nccl:all_to_all.  Those are collectives, matched by stream order with the
all-reduces: nothing is unpaired point-to-point, every rank's wait, last
arrivals and caused wait are the matcher's, and the straggler is its
verdict, on 1, 2 and 3 processes.

Its file names (worker<N>_step_12.<ts>) read as one host per rank, so the
default run measures each rank's clock on the all-reduces (stream-order
instances) and takes out the few microseconds it finds: the matcher then
gets the same shifts from /clock_offsets; without alignment the tables
equal the raw matcher's exactly.

The same job split over two hosts by file name (nodea_<pid>.<ts> for
ranks 0-3, nodeb_... for 4-7), nodeb's timestamps shifted by +300 us: the
offset is found within 10 us, and the waits equal the unshifted split's
within 10 us.

Missing ranks: the job without rank 3's trace, and the real 9-rank Nsight
job whose rank 1 export is absent (nsys_multinode), whose world size and
ranks the test reads from the recorded environment with sqlite3: the
rank is named in the summary and /ranks (status missing), and every
instance it should have joined counts in its /collective_wait.missing."""
import collections
import gzip
import json
import os
import re
import sqlite3

from common import TRACES, analyse, assert_close, main, table, tmpdir, trace_dir
from multirank_truth import flagged_stragglers, folder_truth

US = 1e-6
SHIFT_US = 300.0


def dlrm_folder():
    return trace_dir(os.path.join("..", "real_multirank", "param_dlrm_8rank"))


def applied_shifts(out):
    """rank -> the clock offset (us) hta-mpi took out of its host."""
    offsets = table(out, "/clock_offsets")
    applied = {h: o for h, o, a in zip(offsets.host, offsets.offset_us, offsets.applied) if a}
    ranks = table(out, "/ranks")
    return {r: applied.get(h, 0.0) for r, h in zip(ranks["rank"], ranks.host)}


def assert_waits(out, figures, what, abs_tol=US):
    cw = table(out, "/collective_wait").set_index("rank")
    assert sorted(cw.index) == sorted(figures), (what, cw)
    for r, f in figures.items():
        row = cw.loc[r]
        assert row.matched == f["matched"] and row.unmatched == 0 and row.missing == 0, (what, r, row)
        assert row.arrived_last == f["arrived_last"], (what, r, row, f)
        assert row.clock_violations == f["violations"], (what, r, row, f)
        assert_close(row.total_wait_us, f["wait"], f"{what}: rank {r} wait", abs_tol=abs_tol)
        assert_close(row.caused_wait_us, f["caused"], f"{what}: rank {r} caused wait",
                     abs_tol=abs_tol)


def assert_straggler(out, p, figures, what):
    want = flagged_stragglers(figures)
    assert want, figures  # the job has a straggler to find
    st = table(out, "/stragglers")
    assert set(st[st.flagged == 1]["rank"]) == want, (what, st)
    assert st.iloc[0]["rank"] in want, (what, st)
    assert "Stragglers: none" not in p.stdout, (what, p.stdout)


def test_dlrm_all_to_alls_are_collectives():
    folder = dlrm_folder()
    raw, instances = folder_truth(folder)
    assert len(instances) == 8 and all(len(i) == 8 for i in instances), instances
    for n in (1, 2, 3):
        what = f"param_dlrm_8rank on {n} processes"
        out, p = analyse(folder, processes=n)
        assert "no known peer" not in p.stdout, (what, p.stdout)
        shifts = applied_shifts(out)
        assert all(abs(s) < 10 for s in shifts.values()), (what, shifts)
        figures, _ = folder_truth(folder, shifts.get)
        assert_waits(out, figures, what)
        assert_straggler(out, p, figures, what)
        out, p = analyse(folder, processes=n, extra=["--align-clocks", "off"])
        assert_waits(out, raw, what + ", clocks not aligned")
        assert_straggler(out, p, raw, what + ", clocks not aligned")


def split_over_two_hosts(shift_us):
    """param_dlrm_8rank as written by two hosts, nodeb's times shifted."""
    src, dst = dlrm_folder(), tmpdir()
    for name in sorted(os.listdir(src)):
        with gzip.open(os.path.join(src, name), "rt") as f:
            trace = json.load(f)
        rank = trace["distributedInfo"]["rank"]
        host = "nodea" if rank < 4 else "nodeb"
        if host == "nodeb":
            for e in trace["traceEvents"]:
                if "ts" in e:
                    e["ts"] += shift_us
        stamp = name.split(".")[1]
        with gzip.open(os.path.join(dst, f"{host}_{1000 + rank}.{stamp}.pt.trace.json.gz"),
                       "wt") as f:
            json.dump(trace, f)
    return dst


def test_two_hosts_offset_found_on_stream_order_instances():
    base_out, _ = analyse(split_over_two_hosts(0.0), processes=2)
    for n in (1, 3):
        out, p = analyse(split_over_two_hosts(SHIFT_US), processes=n)
        what = f"two hosts, +{SHIFT_US} us, {n} processes"
        offsets = table(out, "/clock_offsets").set_index("host")
        base = table(base_out, "/clock_offsets").set_index("host")
        assert sorted(offsets.index) == ["nodea", "nodeb"], (what, offsets)
        assert (offsets.applied == 1).all() and (offsets.instances == 3).all(), (what, offsets)
        found = offsets.offset_us["nodeb"] - offsets.offset_us["nodea"]
        unshifted = base.offset_us["nodeb"] - base.offset_us["nodea"]
        assert_close(found - unshifted, SHIFT_US, what + ": offset", abs_tol=10)
        assert offsets.violations_before.sum() > 0 and offsets.violations_after.sum() == 0, offsets
        cw = table(out, "/collective_wait").set_index("rank")
        want = table(base_out, "/collective_wait").set_index("rank")
        for r in want.index:
            assert_close(cw.total_wait_us[r], want.total_wait_us[r], f"{what}: rank {r} wait",
                         abs_tol=10)
        assert (cw.clock_violations == 0).all(), (what, cw)
        assert "offsets taken out before the waits" in p.stdout, (what, p.stdout)


def assert_missing(out, p, missing, world, instances):
    """missing (ranks) listed in /ranks and the summary, each missing
    `instances` collectives in /collective_wait."""
    ranks = table(out, "/ranks").set_index("rank")
    assert sorted(ranks.index) == list(range(world)), ranks
    listed = sorted(ranks.index[ranks.status == "missing"])
    assert listed == sorted(missing), ranks
    assert (ranks.loc[listed, "file"] == "").all() and (ranks.world_size == world).all(), ranks
    cw = table(out, "/collective_wait").set_index("rank")
    for r in missing:
        assert cw.matched[r] == 0 and cw.missing[r] == instances, (r, cw)
    names = ", ".join(str(r) for r in missing)
    line = (f"Missing ranks: {len(missing)} of the recorded world size {world} "
            f"{'has' if len(missing) == 1 else 'have'} no trace: {names} ")
    assert line in p.stdout, (line, p.stdout)
    assert f"{len(ranks) - len(missing)} traces, " in p.stdout, p.stdout


def test_dlrm_without_rank_3():
    src, d = dlrm_folder(), tmpdir()
    for name in os.listdir(src):
        if not name.startswith("worker3_"):
            os.symlink(os.path.join(src, name), os.path.join(d, name))
    figures, instances = folder_truth(d)
    for n in (1, 3):
        out, p = analyse(d, processes=n, extra=["--align-clocks", "off"])
        assert_missing(out, p, [3], 8, len(instances))
        assert_waits_of_present(table(out, "/collective_wait"), figures,
                                f"without rank 3, {n} processes")


def assert_waits_of_present(cw, figures, what):
    cw = cw.set_index("rank")
    for r, f in figures.items():
        assert cw.matched[r] == f["matched"] and cw.missing[r] == 0, (what, r, cw)
        assert_close(cw.total_wait_us[r], f["wait"], f"{what}: rank {r} wait", abs_tol=US)
        assert_close(cw.caused_wait_us[r], f["caused"], f"{what}: rank {r} caused", abs_tol=US)


RANK_VARIABLES = ["RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"]
SIZE_VARIABLES = ["WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]


def recorded(env, names):
    for name in names:
        m = re.search(r"(?:^|[;\0\s])" + name + r"=(\d+)", env)
        if m:
            return int(m.group(1))
    return None


def nsys_job(folder):
    """Per export: (rank, world size, {stream: NCCL kernels}) from SQLite."""
    out = []
    for name in sorted(os.listdir(folder)):
        db = sqlite3.connect(f"file:{os.path.join(folder, name)}?mode=ro", uri=True)
        env = " ".join(str(v) for (v,) in db.execute("SELECT value FROM TARGET_INFO_SYSTEM_ENV"))
        streams = collections.Counter(dict(db.execute(
            "SELECT k.streamId, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.shortName WHERE s.value LIKE '%nccl%' "
            "GROUP BY k.streamId")))
        db.close()
        out.append((recorded(env, RANK_VARIABLES), recorded(env, SIZE_VARIABLES), streams))
    return out


def test_nsys_job_without_rank_1():
    folder = os.path.join(TRACES, "nsys_multinode", "fs24_nccl_tree_9rank_missing_rank1",
                          "traces")
    job = nsys_job(folder)
    world = max(w for _, w, _ in job)
    missing = sorted(set(range(world)) - {r for r, _, _ in job})
    assert world == 9 and missing == [1], job
    instances = sum(min(s[stream] for _, _, s in job) for stream in job[0][2])
    assert instances > 0, job
    for n in (1, 2):
        out, p = analyse(folder, processes=n)
        assert_missing(out, p, missing, world, instances)


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
