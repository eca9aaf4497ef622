"""Collectives matched by process group: /collectives, /collective_summary
and the group-aware /collective_wait.

Answers known by construction: hta-tracegen --tp T --dp D
(tools/tracegen_groups.c) simulates a tensor x data parallel job op by op
and writes every instance's figures and every rank's waits beside the
traces (DIR.truth.json); ranks run each group on their own stream numbers,
so matching by stream would pair the wrong kernels.  The real traces
nccl_data (NVIDIA, metadata on the kernels) and rccl_mi300_rank0 (AMD,
ncclDevKernel_Generic) are checked against their own JSON.
"""
import gzip
import json

from common import *
from handbuilt import gpu_kernel, write_ranks

US = 1e-3  # the generator's times are whole nanoseconds


def tp_dp(tp=4, dp=2, slow=None, extra=()):
    d = os.path.join(tmpdir(), "job")
    args = [TRACEGEN, "--tp", str(tp), "--dp", str(dp), "-o", d] + list(extra)
    if slow:
        args += ["--slow", slow]
    subprocess.run(args, check=True)
    with open(d + ".truth.json") as f:
        return d, json.load(f)


def assert_instances(out, truth, seq_from_trace):
    got = table(out, "/collectives").set_index(["group", "seq"]).sort_index()
    want = truth["instances"]
    assert len(got) == len(want), (len(got), len(want))
    # Each group's members are listed once, in /process_groups.
    members = table(out, "/process_groups").set_index("group")
    assert members.index.is_unique and set(members.index) == set(got.index.get_level_values(0))
    for w in want:
        g = got.loc[(w["group"], w["seq"])]
        what = f"instance {w['group']}/{w['seq']}"
        for c in ("collective", "dtype", "bytes", "first_rank", "last_rank"):
            assert g[c] == w[c], (what, c, g[c], w[c])
        assert members.loc[w["group"], "ranks"] == w["ranks"], (what, members.loc[w["group"]])
        assert g.n_ranks == g.group_size == len(json.loads(w["ranks"])), (what, g)
        assert g.seq_from_trace == seq_from_trace, (what, g.seq_from_trace)
        assert g.mismatched_ranks == "", (what, g.mismatched_ranks)
        for c in ("arrival_skew_us", "transfer_us", "total_wait_us", "start_us"):
            assert_close(g[c], w[c], f"{what} {c}", abs_tol=US)
        assert_close(g.busbw_gbps, w["busbw_gbps"], f"{what} busbw", rel_tol=1e-6)
        assert_close(g.algbw_gbps, w["bytes"] / (w["transfer_us"] * 1e3), f"{what} algbw",
                     rel_tol=1e-9)


def assert_rank_waits(out, truth):
    cw = table(out, "/collective_wait").set_index("rank")
    n_instances = {r: 0 for r in cw.index}
    for w in truth["instances"]:
        for r in json.loads(w["ranks"]):
            n_instances[r] += 1
    for w in truth["ranks"]:
        got = cw.loc[w["rank"]]
        what = f"rank {w['rank']}"
        assert got.matched == got.collectives == n_instances[w["rank"]], (what, got)
        assert got.unmatched == got.missing == got.metadata_mismatches == 0, (what, got)
        assert got.clock_violations == 0, (what, got)
        assert got.arrived_last == w["arrived_last"], (what, got.arrived_last, w)
        assert_close(got.total_wait_us, w["total_wait_us"], f"{what} wait", abs_tol=US)
        assert_close(got.caused_wait_us, w["caused_wait_us"], f"{what} caused", abs_tol=US)


def bucket(n):
    b = 1
    while b < n:
        b *= 2
    return b


def assert_summary(out, truth):
    s = table(out, "/collective_summary")
    assert list(s.columns) == [
        "group_desc", "collective", "dtype", "bucket_max_bytes", "count", "total_bytes",
        "transfer_p50_us", "transfer_p90_us", "transfer_max_us", "busbw_p50_gbps",
        "busbw_min_gbps", "mean_arrival_skew_us", "total_wait_us", "within_node_count",
        "within_node_busbw_p50_gbps", "across_nodes_count", "across_nodes_busbw_p50_gbps"], \
        list(s.columns)
    desc = {}
    for w in truth["instances"]:
        kind = "tensor_parallel" if w["collective"] in ("allgather",) or \
            (w["collective"] == "allreduce" and w["dtype"] == "BFloat16") else "data_parallel"
        key = (kind, w["collective"], w["dtype"], bucket(w["bytes"]))
        d = desc.setdefault(key, {"count": 0, "bytes": 0, "wait": 0.0, "skew": 0.0,
                                  "transfer": []})
        d["count"] += 1
        d["bytes"] += w["bytes"]
        d["wait"] += w["total_wait_us"]
        d["skew"] += w["arrival_skew_us"]
        d["transfer"].append(w["transfer_us"])
    assert len(s) == len(desc), (s, desc)
    for _, row in s.iterrows():
        d = desc[(row.group_desc, row.collective, row["dtype"], row.bucket_max_bytes)]
        assert row["count"] == d["count"] and row.total_bytes == d["bytes"], (row, d)
        assert_close(row.total_wait_us, d["wait"], "summary wait", abs_tol=US * d["count"])
        assert_close(row.mean_arrival_skew_us, d["skew"] / d["count"], "summary skew", abs_tol=US)
        assert_close(row.transfer_max_us, max(d["transfer"]), "summary transfer", abs_tol=US)


def test_tp_dp_job_with_seq_matches_the_ground_truth():
    d, truth = tp_dp(slow="5:1.3")
    out, p = analyse(d, processes=2)
    assert_instances(out, truth, seq_from_trace=1)
    assert_rank_waits(out, truth)
    assert_summary(out, truth)
    s = table(out, "/collective_summary").sort_values("total_wait_us", ascending=False)
    worst = s.iloc[0]
    line = (f"  most waiting: {worst.group_desc} {worst.collective} {worst['dtype']} "
            f"<= {worst.bucket_max_bytes} B, {worst['count']} instances: "
            f"{worst.total_wait_us:.1f} us waited for the last rank")
    assert line in p.stdout, (line, p.stdout)
    assert p.stdout.count("  most waiting: ") == 3, p.stdout


def test_without_seq_and_metadata_only_on_the_cpu_op():
    """No Seq: the k-th kernel of a group on each rank; kernels carry only
    their External id, the metadata is on record_param_comms."""
    d, truth = tp_dp(tp=2, dp=3, slow="3:1.4", extra=["--no-seq", "--meta-on-cpu"])
    out, _ = analyse(d, processes=2)
    assert_instances(out, truth, seq_from_trace=0)
    assert_rank_waits(out, truth)


def test_comm_by_group_splits_the_exposed_time():
    """The generator overlaps no computation with its collectives: all
    communication is exposed, and per rank and group it is the waits plus
    the transfer times of the group's instances."""
    d, truth = tp_dp(slow="5:1.3")
    out, _ = analyse(d, processes=2)
    by = table(out, "/comm_by_group").set_index(["rank", "group"])
    want = {}
    for w in truth["instances"]:
        for r in json.loads(w["ranks"]):
            e = want.setdefault((r, w["group"]), {"n": 0, "transfer": 0.0})
            e["n"] += 1
            e["transfer"] += w["transfer_us"]
    assert sorted(by.index) == sorted(want), (sorted(by.index), sorted(want))
    for key, e in want.items():
        g = by.loc[key]
        assert g.instances == e["n"] and g.overlapped_us == 0, (key, g)
        assert_close(g.exposed_us, g.comm_us, f"{key} exposed", abs_tol=US)
        assert_close(g.exposed_transfer_us, e["transfer"], f"{key} transfer", abs_tol=US * e["n"])
        assert_close(g.exposed_wait_us, g.wait_us, f"{key} exposed wait", abs_tol=US)
    waits = by.groupby(level="rank").wait_us.sum()
    last = by.groupby(level="rank").arrived_last.sum()
    for w in truth["ranks"]:
        assert_close(waits[w["rank"]], w["total_wait_us"], f"rank {w['rank']} wait", abs_tol=US)
        assert last[w["rank"]] == w["arrived_last"], (w, last)


def test_the_rank_late_in_its_tp_group_causes_the_wait():
    """Rank 5 is slow only before its TP group's collectives; at the DP
    collectives its whole TP group (4..7) arrives late together.  The wait
    rank 5 causes is the largest, and it arrives last at every instance of
    its TP group."""
    d, truth = tp_dp(slow="5:1.3")
    out, _ = analyse(d)
    cw = table(out, "/collective_wait").set_index("rank")
    assert cw.caused_wait_us.idxmax() == 5, cw.caused_wait_us
    inst = table(out, "/collectives")
    tp = inst[inst.group == "2"]
    assert len(tp) > 0 and (tp.last_rank == 5).all(), tp[["seq", "last_rank"]]


def test_a_rank_disagreeing_on_the_size_is_reported():
    d, truth = tp_dp()
    path = os.path.join(d, "rank-6.json")
    with open(path) as f:
        text = f.read()
    first = truth["instances"][1]  # group 2 (ranks 4-7), seq 0
    assert first["group"] == "2" and first["seq"] == 0
    text = text.replace('"In msg nelems": 16777216', '"In msg nelems": 16777217', 1)
    with open(path, "w") as f:
        f.write(text)
    out, _ = analyse(d)
    inst = table(out, "/collectives").set_index(["group", "seq"])
    assert inst.loc[("2", 0)].mismatched_ranks == "6", inst.loc[("2", 0)]
    assert (inst.drop(("2", 0)).mismatched_ranks == "").all()
    cw = table(out, "/collective_wait").set_index("rank")
    assert cw.metadata_mismatches.to_dict() == {r: int(r == 6) for r in range(8)}, cw


def test_ranks_outside_a_group_never_enter_it():
    """Analysing ranks 0-5 only: TP group 2 has members 6 and 7 that were
    not analysed; they are not counted missing anywhere, and its instances
    hold ranks 4 and 5 only."""
    d, truth = tp_dp()
    out, _ = analyse(d, extra=["--ranks", "0-5"])
    inst = table(out, "/collectives")
    tp2 = inst[inst.group == "2"]
    assert len(tp2) > 0 and (tp2.n_ranks == 2).all() and (tp2.group_size == 4).all(), tp2
    dp = inst[inst.group.isin(["3", "4"])]
    assert (dp.n_ranks == 2).all(), dp
    dp_alone = inst[inst.group.isin(["5", "6"])]
    assert (dp_alone.n_ranks == 1).all(), dp_alone
    cw = table(out, "/collective_wait")
    assert sorted(cw["rank"]) == list(range(6)) and (cw.missing == 0).all(), cw


def test_a_rank_alone_is_no_straggler_and_nothing_is_listed():
    """One rank: every instance has it alone, so nobody waits and there is
    nothing to tell from chance; the summary says so instead of listing."""
    d, truth = tp_dp(tp=1, dp=1)
    out, p = analyse(d, processes=1)
    n = len(truth["instances"])
    st = table(out, "/stragglers")
    assert list(st.reasons) == [f"shared none of its {n} collectives with another rank"], st
    assert list(st.flagged) == [0], st
    # Nobody arrives last alone, and chance gives no share of last arrivals.
    assert (table(out, "/collectives").last_rank == -1).all()
    assert np.isnan(st.fair_share).all(), st
    assert np.isnan(table(out, "/collective_wait").fair_share).all()
    assert ("  no rank waited for another, and no instance reached under 90% of its kind's "
            "median bus bandwidth") in p.stdout, p.stdout
    assert "most waiting:" not in p.stdout and "slowest:" not in p.stdout, p.stdout


def a2av_kernel(ts, dur, nelems, dtype="Float"):
    k = gpu_kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", ts, dur, stream=20)
    k["args"].update({"Collective name": "all_to_allv", "In msg nelems": nelems,
                      "Out msg nelems": nelems, "Group size": 2, "dtype": dtype,
                      "In split size": "[]", "Out split size": "[]",
                      "Process Group Name": "0", "Process Group Description": "default_pg",
                      "Process Group Ranks": "[0, 1]", "Seq": 1})
    return k


def test_all_to_allv_counts_differ_by_design_but_dtypes_must_agree():
    """all_to_allv sends each rank its own counts: only the collective and
    the dtype must agree (a differing dtype is still a mismatch)."""
    d = write_ranks({0: [a2av_kernel(100, 50, 1000)], 1: [a2av_kernel(110, 40, 3000)]})
    out, _ = analyse(d)
    inst = table(out, "/collectives")
    assert list(inst.mismatched_ranks) == [""] and list(inst.last_rank) == [1], inst
    d = write_ranks({0: [a2av_kernel(100, 50, 1000)],
                     1: [a2av_kernel(110, 40, 1000, dtype="BFloat16")]})
    out, _ = analyse(d)
    assert list(table(out, "/collectives").mismatched_ranks) == ["1"]


MATCHED_TABLES = ["/collectives", "/process_groups", "/collective_summary", "/comm_by_group",
                  "/collective_wait", "/stragglers"]


def same_tables_on(d, counts, names=MATCHED_TABLES, expect=0):
    """Analyses d on each number of processes in counts; asserts every
    run's tables equal the first's and returns the first run's
    (tables, process)."""
    base = None
    for n in counts:
        out, p = analyse(d, processes=n, expect=expect)
        tables = {name: table(out, name) for name in names}
        if base is None:
            base = (tables, p)
            continue
        for name in names:
            pd.testing.assert_frame_equal(tables[name], base[0][name], check_exact=True,
                                          obj=f"{name} with {n} processes")
    return base


def test_identical_results_for_1_2_3_processes():
    """The instances are matched where their owner process is
    (crossrank/collective_exchange.c): the same tables whatever the number
    of processes."""
    d, truth = tp_dp(tp=2, dp=3, slow="3:1.4")
    tables, _ = same_tables_on(d, (1, 2, 3))
    assert len(tables["/collectives"]) == len(truth["instances"]), tables["/collectives"]


def test_step_waits_identical_for_1_2_3_processes():
    """A DDP job with profiler steps: each step's wait (/steps.wait_us)
    adds up the waits the processes found for the rank's kernels."""
    tables, _ = same_tables_on(generated(ranks=5, straggler=2), (1, 2, 3),
                               MATCHED_TABLES + ["/steps", "/cross_rank/steps"])
    assert (tables["/steps"].wait_us > 0).any(), tables["/steps"]


def test_failed_rank_mismatch_and_no_seq_on_1_2_3_4_processes():
    """Without Seq (instances by ordinal), a rank disagreeing on a size and
    a rank whose trace cannot be read: the failed rank is recorded and
    enters no instance, the others are matched the same way on any number
    of processes, and its group peers still see each other."""
    d, truth = tp_dp(tp=4, dp=2, slow="5:1.3", extra=["--no-seq"])
    path = os.path.join(d, "rank-6.json")
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace('"In msg nelems": 16777216', '"In msg nelems": 16777217', 1))
    with open(os.path.join(d, "rank-2.json"), "w") as f:
        f.write('{"traceEvents": [')
    tables, p = same_tables_on(d, (1, 2, 3, 4), expect=1)
    assert "rank-2.json" in p.stderr, p.stderr
    cw = tables["/collective_wait"].set_index("rank")
    assert sorted(cw.index) == [0, 1, 3, 4, 5, 6, 7], cw
    assert cw.metadata_mismatches.to_dict() == {r: int(r == 6) for r in cw.index}, cw
    assert (cw.missing == 0).all() and (cw.unmatched == 0).all(), cw
    inst = tables["/collectives"]
    tp1 = inst[inst.group == "1"]  # ranks 0-3 without rank 2
    assert len(tp1) > 0 and (tp1.n_ranks == 3).all(), tp1
    assert sorted(inst[inst.mismatched_ranks != ""].mismatched_ranks) == ["6"], inst


def kernels_from_json(path):
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    return [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
            and "Collective name" in e.get("args", {})]


def real_trace_check(folder, file, group_size, elem):
    out, _ = analyse(trace_dir(folder), extra=["--include-last-step"])
    inst = table(out, "/collectives")
    members = table(out, "/process_groups").set_index("group").ranks
    kernels = kernels_from_json(os.path.join(trace_dir(folder), file))
    assert len(inst) == len(kernels), (len(inst), len(kernels))
    by_start = sorted(kernels, key=lambda e: e["ts"])
    for (_, row), k in zip(inst.sort_values("start_us").iterrows(), by_start):
        a = k["args"]
        assert row.collective == a["Collective name"] and row["dtype"] == a["dtype"], (row, a)
        assert row.bytes == a["In msg nelems"] * elem[a["dtype"]], (row, a)
        assert row.group_size == group_size and row.n_ranks == 1, row
        assert row.first_rank == 0 and row.last_rank == -1, row
        assert row.group == a["Process Group Name"]
        assert members[row.group] == a["Process Group Ranks"], (members, a)
        assert_close(row.transfer_us, k["dur"], "transfer", abs_tol=US)
        factor = 2 * (group_size - 1) / group_size if row.collective == "allreduce" else 1
        assert_close(row.busbw_gbps, row.bytes / (k["dur"] * 1e3) * factor, "busbw",
                     rel_tol=1e-6)
    cw = table(out, "/collective_wait").set_index("rank")
    status = table(out, "/ranks").set_index("rank").status
    assert (status != "missing").sum() == 1, status
    for r, row in cw.iterrows():
        if status[r] != "missing":
            assert row.matched == len(kernels) and row.unmatched == 0 and row.missing == 0, cw
            continue
        # A rank of the world size without a trace misses every instance of
        # each group listing it.
        joined = sum(1 for k in kernels if r in json.loads(k["args"]["Process Group Ranks"]))
        assert row.matched == 0 and row.missing == joined, (r, row, joined)
    assert (status == "missing").sum() == len(cw) - 1, (status, cw)


def test_nccl_data_every_kernel_is_an_instance():
    real_trace_check("nccl_data", "nccl_data.json.gz", 2, {"Float": 4, "Long": 8})


def test_nccl_data_overlap_agrees_with_comm_comp_overlap():
    """One group whose kernels never overlap each other: the computation
    overlapping them, over their time, is /comm_comp_overlap's share."""
    out, _ = analyse(trace_dir("nccl_data"))
    by = table(out, "/comm_by_group")
    assert len(by) == 1 and by.iloc[0].overlapped_us > 0, by
    pct = table(out, "/comm_comp_overlap").iloc[0].comp_comm_overlap_pctg
    assert_close(100 * by.overlapped_us.sum() / by.comm_us.sum(), pct, "overlap %", abs_tol=0.01)
    assert_close(by.iloc[0].exposed_us, by.iloc[0].comm_us - by.iloc[0].overlapped_us,
                 "exposed", abs_tol=US)


def test_rccl_mi300_reads_groups_and_sizes():
    """ncclDevKernel_Generic kernels: the 12 with metadata are instances
    (the 5 without any, launched before the CPU side was recorded, are
    dropped by the step filter with every other such kernel)."""
    real_trace_check("rccl_mi300_rank0", "resnet_act_checkpoint.json.gz", 8,
                     {"BFloat16": 2, "Long": 8})


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
