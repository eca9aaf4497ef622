"""Point-to-point traffic: NCCL send/recv paired, the pipeline bubble.

Answers known by construction: hta-tracegen --pp P --microbatches M
(tools/tracegen_pipeline.c) simulates 1F1B with rendezvous semantics and
writes every pair's late sender, late receiver and transfer and every
rank's bubble per step beside the traces (DIR.truth.json), in integer
nanoseconds.
"""
import html
import json
import math

from common import *


def pipeline(pp=4, microbatches=6, extra=()):
    d = os.path.join(tmpdir(), "job")
    subprocess.run([TRACEGEN, "--pp", str(pp), "--microbatches", str(microbatches), "-o", d]
                   + list(extra), check=True)
    with open(d + ".truth.json") as f:
        return d, json.load(f)


def test_generator_bubble_is_the_closed_form_without_transfer_time():
    """With instantaneous transfers and equal stages, every stage idles
    (P-1)(F+B) of the step's (M+P-1)(F+B): 1F1B's bubble fraction."""
    for pp, m in ((4, 8), (3, 3), (2, 5)):
        _, truth = pipeline(pp, m, ["--transfer-us", "0"])
        want = (pp - 1) / (m + pp - 1)
        assert truth["closed_form_bubble_fraction"] == want
        for s in truth["steps"]:
            assert s["bubble_ns"] * (m + pp - 1) == s["step_time_ns"] * (pp - 1), (pp, m, s)


NS = 1e-3  # one nanosecond in microseconds


def ns(us):
    """A duration the results file holds in us, as the generator's integer ns."""
    return int(round(us * 1000))


def assert_pairs(out, truth):
    got = table(out, "/p2p")
    assert list(got.columns) == [
        "group", "src", "dst", "index", "dtype", "bytes", "send_start_us", "recv_start_us",
        "late_sender_us", "late_receiver_us", "transfer_us", "gbps", "clock_violation"], got.columns
    keys = list(zip(got.group, got.src, got.dst, got["index"]))
    assert keys == sorted(keys), "pairs not in (group, src, dst, index) order"
    got = got.set_index(["group", "src", "dst", "index"])
    want = truth["pairs"]
    assert len(got) == len(want), (len(got), len(want))
    for w in want:
        g = got.loc[(w["group"], w["src"], w["dst"], w["index"])]
        what = f"pair {w['src']}->{w['dst']} #{w['index']}"
        assert g["dtype"] == "BFloat16" and g.bytes == w["bytes"], (what, g)
        for c in ("late_sender", "late_receiver", "transfer"):
            assert ns(g[c + "_us"]) == w[c + "_ns"], (what, c, g[c + "_us"], w[c + "_ns"])
        # Absolute times near 1.7e15 us: float64 keeps them to 0.25 us.
        assert_close(g.send_start_us, w["send_start_ns"] / 1000, what, abs_tol=0.25)
        assert_close(g.recv_start_us, w["recv_start_ns"] / 1000, what, abs_tol=0.25)
        assert g.clock_violation == 0, (what, g)
        assert_close(g.gbps, w["bytes"] / w["transfer_ns"], what, rel_tol=1e-12)


def assert_summary(out, truth):
    got = table(out, "/p2p_summary")
    assert list(zip(got.src, got.dst)) == sorted(zip(got.src, got.dst)), got
    want = {}
    for w in truth["pairs"]:
        e = want.setdefault((w["src"], w["dst"]), {"n": 0, "bytes": 0, "ls": 0, "lr": 0,
                                                   "t": []})
        e["n"] += 1
        e["bytes"] += w["bytes"]
        e["ls"] += w["late_sender_ns"]
        e["lr"] += w["late_receiver_ns"]
        e["t"].append(w["transfer_ns"] / 1000)
    assert sorted(zip(got.src, got.dst)) == sorted(want), (got, want)
    for _, g in got.iterrows():
        e = want[(g.src, g.dst)]
        assert g["count"] == e["n"] and g.total_bytes == e["bytes"], (g, e)
        assert ns(g.late_sender_us) == e["ls"] and ns(g.late_receiver_us) == e["lr"], (g, e)
        assert_close(g.transfer_p50_us, float(np.median(e["t"])), "p50", abs_tol=NS)
        assert g.clock_violations == 0, g


def assert_pipeline_steps(out, truth):
    got = table(out, "/pipeline_steps").set_index(["rank", "step"])
    assert len(got) == len(truth["steps"]), (got, truth["steps"])
    p, m = truth["pp"], truth["microbatches"]
    for w in truth["steps"]:
        g = got.loc[(w["rank"], w["step"])]
        what = f"rank {w['rank']} step {w['step']}"
        assert (g.stage, g.stages, g.microbatches) == (w["stage"], p, m), (what, g)
        for c in ("step_time", "compute", "bubble", "p2p_wait", "exposed_p2p_wait"):
            assert ns(g[c + "_us"]) == w[c + "_ns"], (what, c, g[c + "_us"], w[c + "_ns"])
        assert_close(g.bubble_fraction, w["bubble_ns"] / w["step_time_ns"], what, rel_tol=1e-9)
        assert_close(g.expected_bubble_fraction, (p - 1) / (m + p - 1), what, rel_tol=1e-12)


def assert_caused(out, truth):
    metrics = table(out, "/rank_metrics")
    caused = metrics[metrics.metric == "p2p_caused_wait_us"].set_index("rank").value
    for w in truth["ranks"]:
        assert ns(caused[w["rank"]]) == w["caused_late_sender_ns"], (w, caused)


def test_pairs_summary_and_bubble_equal_the_truth():
    """Seq on the kernels, stage 2 slowed 1.5x: every pair's late sender,
    late receiver and transfer and every stage's bubble to the
    nanosecond; the slow stage causes the most late-sender wait, and no
    send or recv is taken for a collective instance."""
    d, truth = pipeline(4, 6, ["--slow-stage", "2:1.5"])
    out, p = analyse(d, processes=2, extra=["--include-last-step"])
    assert_pairs(out, truth)
    assert_summary(out, truth)
    assert_pipeline_steps(out, truth)
    assert_caused(out, truth)
    metrics = table(out, "/rank_metrics")
    caused = metrics[metrics.metric == "p2p_caused_wait_us"].set_index("rank").value
    assert caused.idxmax() == 2, caused
    st = table(out, "/stragglers")
    assert st.iloc[0]["rank"] == 2, st
    assert_close(st.iloc[0].caused_wait_us, caused[2], "stage 2's caused wait", abs_tol=NS)
    inst = table(out, "/collectives")
    assert len(inst) == 0, inst
    by = table(out, "/comm_by_group").set_index("rank")
    assert (by.p2p_ops == by.instances).all() and (by.unpaired == 0).all(), by
    assert_close(by.late_sender_us.sum(), sum(w["late_sender_ns"] for w in truth["pairs"]) / 1000,
                 "late sender", abs_tol=NS * len(truth["pairs"]))


def test_all_to_alls_run_as_sendrecv_are_collectives_beside_the_pairs():
    """--a2a-sendrecv: each step closes with an all-to-all over the world,
    a SendRecv kernel without metadata launched by c10d::alltoall_base_
    inside nccl:all_to_all, as NCCL runs one.  Those are collectives,
    matched by stream order: every rank's wait, last arrivals and caused
    wait are the generator's, while the sends and recvs still pair as
    point-to-point exactly as in the same job without the all-to-alls."""
    args = ["--dp", "2", "--slow-stage", "1:1.4"]
    d, truth = pipeline(4, 6, args + ["--a2a-sendrecv"])
    plain_dir, plain = pipeline(4, 6, args)
    # The all-to-alls lengthen each step, so later steps start later: the
    # pairs differ only in their absolute times.
    relative = lambda pairs: [{k: v for k, v in w.items() if not k.endswith(("start_ns", "end_ns"))}
                              for w in pairs]
    assert relative(truth["pairs"]) == relative(plain["pairs"]) and not plain["all_to_alls"]
    plain_out, _ = analyse(plain_dir, processes=2, extra=["--include-last-step"])
    for n in (1, 3):
        out, p = analyse(d, processes=n, extra=["--include-last-step"])
        assert_pairs(out, truth)
        assert_summary(out, truth)
        assert_pipeline_steps(out, truth)
        times = ["send_start_us", "recv_start_us"]
        pd.testing.assert_frame_equal(table(out, "/p2p").drop(columns=times),
                                      table(plain_out, "/p2p").drop(columns=times))
        assert "no known peer" not in p.stdout, p.stdout
        cw = table(out, "/collective_wait").set_index("rank")
        by_step = {}
        for w in truth["all_to_alls"]:
            by_step.setdefault(w["step"], []).append(w)
        caused = {r: 0.0 for r in cw.index}
        for step in by_step.values():
            last = [w["rank"] for w in step if w["last"]]
            assert 0 < len(last) < len(step), step  # contested
            for r in last:
                caused[r] += sum(w["wait_ns"] for w in step) / len(last) / 1000
        for r, row in cw.iterrows():
            mine = [w for w in truth["all_to_alls"] if w["rank"] == r]
            what = f"rank {r} on {n} processes"
            assert row.matched == len(by_step) and row.unmatched == 0 and row.missing == 0, (
                what, row)
            assert ns(row.total_wait_us) == sum(w["wait_ns"] for w in mine), (what, row, mine)
            assert row.arrived_last == sum(w["last"] for w in mine), (what, row)
            assert row.clock_violations == 0, (what, row)
            assert_close(row.caused_wait_us, caused[r], f"{what} caused", abs_tol=NS)


def test_without_seq_metadata_on_the_cpu_op_two_pipelines():
    """No Seq, metadata only on record_param_comms, two pipelines (DP 2):
    the pairs are still the k-th send with the k-th recv per peer pair."""
    d, truth = pipeline(3, 5, ["--dp", "2", "--no-seq", "--meta-on-cpu",
                               "--slow-stage", "0:1.3"])
    out, _ = analyse(d, processes=3, extra=["--include-last-step"])
    assert_pairs(out, truth)
    assert_summary(out, truth)
    assert_pipeline_steps(out, truth)
    assert_caused(out, truth)


def test_coalesced_batches_pair_at_the_op_level():
    """--coalesced: in the steady state a send and a recv with the same
    peer run as one kernel, each op a record_param_comms before its
    launch (batch_isend_irecv); both ops get the kernel, and every pair
    still equals the truth, on 1 and 3 processes alike."""
    d, truth = pipeline(4, 6, ["--coalesced", "--slow-stage", "1:1.4", "--dp", "2"])
    base = None
    for n in (1, 3):
        out, p = analyse(d, processes=n, extra=["--include-last-step"])
        assert_pairs(out, truth)
        assert_summary(out, truth)
        assert_pipeline_steps(out, truth)
        assert_caused(out, truth)
        assert "no known peer" not in p.stdout, p.stdout
        pairs = table(out, "/p2p")
        if base is not None:
            pd.testing.assert_frame_equal(pairs, base, check_exact=True)
        base = pairs
    with open(os.path.join(d, "rank-2.json")) as f:
        events = json.load(f)["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel" and "SendRecv" in e["name"]]
    ops = [e for e in events if e.get("name") == "record_param_comms"]
    batches = [k for k in kernels if "Collective name" not in k["args"]]
    assert batches and len(ops) == 2 * len(batches), (len(ops), len(batches))
    assert len(kernels) < sum(1 for w in truth["pairs"] if 2 in (w["src"], w["dst"])), \
        "batches should hold two ops per kernel"
    # A batch's kernel is communication time once, not once per op.
    by = table(out, "/comm_by_group").set_index("rank")
    assert (by.exposed_transfer_us >= -NS).all(), by
    for rank in by.index:
        with open(os.path.join(d, f"rank-{rank}.json")) as f:
            kernels = [e for e in json.load(f)["traceEvents"]
                       if e.get("cat") == "kernel" and "SendRecv" in e["name"]]
        assert_close(by.loc[rank, "comm_us"], sum(k["dur"] for k in kernels), f"rank {rank}",
                     abs_tol=NS * len(kernels))


def test_the_last_stage_causes_its_injected_delay_per_microbatch():
    """Without transfer time, slowing the last stage by F adds exactly
    (F - 1) x (forward + backward) per microbatch to the late-sender wait
    it causes (its upstream neighbour waits for every gradient); a middle
    stage's delay compounds along the pipeline instead (docs/crossrank.md)."""
    caused = {}
    for slow in (None, "3:1.5"):
        d, truth = pipeline(4, 6, ["--transfer-us", "0", "--steps", "2"] +
                            (["--slow-stage", slow] if slow else []))
        out, _ = analyse(d, extra=["--include-last-step"])
        m = table(out, "/rank_metrics")
        caused[slow] = m[(m.metric == "p2p_caused_wait_us") & (m["rank"] == 3)].value.iloc[0]
    per_microbatch = 0.5 * (truth["forward_ns"] + truth["backward_ns"]) / 1000
    assert_close(caused["3:1.5"] - caused[None], per_microbatch * 6 * 2, "injected", abs_tol=NS)


def test_bubble_is_the_closed_form_without_transfer_time():
    d, truth = pipeline(4, 8, ["--transfer-us", "0"])
    out, _ = analyse(d, extra=["--include-last-step"])
    ps = table(out, "/pipeline_steps")
    assert len(ps) == 8 and (abs(ps.bubble_fraction - 3 / 11) < 1e-9).all(), ps
    assert (ps.expected_bubble_fraction == 3 / 11).all(), ps
    # --microbatches overrides the count of receives.
    out, _ = analyse(d, extra=["--include-last-step", "--microbatches", "4"])
    ps = table(out, "/pipeline_steps")
    assert (ps.microbatches == 4).all() and (ps.expected_bubble_fraction == 3 / 7).all(), ps


P2P_TABLES = ["/p2p", "/p2p_summary", "/pipeline_steps", "/comm_by_group", "/rank_metrics",
              "/outliers", "/stragglers"]


def test_identical_on_1_2_3_4_processes():
    d, truth = pipeline(4, 5, ["--dp", "2", "--slow-stage", "1:1.4"])
    base = None
    for n in (1, 2, 3, 4):
        out, _ = analyse(d, processes=n, extra=["--include-last-step"])
        tables = {name: table(out, name) for name in P2P_TABLES}
        if base is None:
            base = tables
            assert len(tables["/p2p"]) == len(truth["pairs"])
            continue
        for name in P2P_TABLES:
            pd.testing.assert_frame_equal(tables[name], base[name], check_exact=True,
                                          obj=f"{name} with {n} processes")


def test_a_rank_without_its_peer_is_unpaired():
    """Analysing stages 0 and 1 of a 3-stage pipeline: the traffic between
    them is paired, stage 1's with stage 2 has no other side and is
    unpaired, with no wait."""
    d, truth = pipeline(3, 4)
    out, _ = analyse(d, extra=["--ranks", "0-1", "--include-last-step"])
    pairs = table(out, "/p2p")
    assert set(zip(pairs.src, pairs.dst)) == {(0, 1), (1, 0)}, pairs
    by = table(out, "/comm_by_group").set_index("rank")
    n12 = sum(1 for w in truth["pairs"] if 2 in (w["src"], w["dst"]))
    assert by.unpaired.to_dict() == {0: 0, 1: n12}, by
    want = sum(w["late_sender_ns"] for w in truth["pairs"] if w["dst"] == 1 and w["src"] == 0)
    assert ns(by.loc[1, "late_sender_us"]) == want, by


def test_report_shows_the_bubble_per_stage_and_the_waits():
    """hta-mpi-report's communication section: the send/recv waits per
    group and each stage's bubble beside 1F1B's, as /pipeline_steps has
    them."""
    d, truth = pipeline(4, 6, ["--slow-stage", "2:1.5"])
    out, _ = analyse(d, extra=["--include-last-step"])
    page = os.path.join(tmpdir(), "report.html")
    report = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python",
                          "hta-mpi-report")
    subprocess.run([sys.executable, report, out, "-o", page], check=True, capture_output=True)
    text = open(page, encoding="utf-8").read()
    assert "<h2>Communication</h2>" in text and "1F1B bubble %" in text, text[-3000:]
    ps = table(out, "/pipeline_steps").groupby("rank").bubble_fraction.mean()
    for rank, fraction in ps.items():
        row = (f"<tr><td>{rank}</td><td>{rank}</td><td>4</td><td>{100 * fraction:.1f}</td>"
               f"<td>{100 * 3 / 9:.1f}</td>")
        assert row in text, (row, text[-3000:])
    late = sum(w["late_sender_ns"] for w in truth["pairs"]) / 1000
    assert f"<td>{late:.1f}</td>" in text, late


def late_halves(truth):
    """Per rank, (its paired sends and receives, those whose half came
    last: a late sender or a late receiver), from the generator's pairs."""
    halves = {}
    for w in truth["pairs"]:
        for rank, late in ((w["src"], w["late_sender_ns"] > 0),
                           (w["dst"], w["late_receiver_ns"] > 0)):
            pairs, last = halves.get(rank, (0, 0))
            halves[rank] = (pairs + 1, last + late)
    return halves


def binomial_tail(k, n, p):
    return min(1.0, sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k, n + 1)))


def late_at_pairs(halves):
    """The ranks that come last at their pairs far more often than the
    half chance gives (docs/crossrank.md, /stragglers): at least 3/4 of
    them, binomial tail under 0.001 over the ranks."""
    alpha = 0.001 / len(halves)
    return {r for r, (n, k) in halves.items()
            if k >= 0.75 * n and binomial_tail(k, n, 0.5) < alpha}


def test_a_stage_whose_late_sends_hold_the_others_is_flagged():
    """1F1B with a slow stage and no collective: the stage comes last at
    most of its pairs and is flagged, its neighbours (late only as the
    schedule makes them) and the same job without the slowdown are not.
    The flagged stage's cause is compute, its kernels' 1.6x, as its
    delay costs say: with four stages its compute cannot stand out over
    the run (robust z under the threshold), so the verdict names it from
    the stage's compute above its steps' medians, as the costs do."""
    for dp, slow_ranks in ((1, {2}), (2, {4, 5})):
        job = ["--dp", str(dp), "--steps", "3", "--cpu-ahead"]
        for extra, want in ((["--slow-stage", "2:1.6"], slow_ranks), ([], set())):
            d, truth = pipeline(4, 8, job + extra)
            halves = late_halves(truth)
            assert late_at_pairs(halves) == want, (dp, extra, halves)
            out, _ = analyse(d, processes=2, extra=["--include-last-step"])
            st = table(out, "/stragglers").set_index("rank")
            assert set(st.index[st.flagged != 0]) == want, (dp, extra, st)
            for rank, (n, k) in halves.items():
                assert_close(st.loc[rank, "arrived_last_share"], k / n, f"rank {rank}",
                             rel_tol=1e-12)
                assert st.loc[rank, "fair_share"] == 0.5, st
            costs = table(out, "/delay_costs")
            for rank in want:
                n, k = halves[rank]
                assert f"arrived last at {k} of {n} point-to-point pairs" in \
                    st.loc[rank, "reasons"], st.loc[rank, "reasons"]
                assert st.loc[rank, "cause"] == "compute", st
                mine = costs[(costs["rank"] == rank) & (costs.total_us > 0)]
                assert len(mine) and (mine.cause == "compute").all(), costs


def test_the_last_of_two_stages_is_not_a_straggler_by_the_schedule():
    """With two stages the last causes nearly all the wait, by the
    schedule alone: nobody is flagged without a slowdown."""
    for m in (4, 16):
        d, truth = pipeline(2, m, ["--steps", "3", "--cpu-ahead"])
        assert late_at_pairs(late_halves(truth)) == set()
        out, _ = analyse(d)
        st = table(out, "/stragglers")
        assert (st.flagged == 0).all(), st


def test_the_report_gives_the_verdict_on_ranks_the_outliers_flag():
    """Without a straggler, the report does not say "No straggler" beside
    an outlier table that flags ranks: it gives each one's verdict."""
    d, _ = pipeline(4, 4, ["--steps", "3", "--cpu-ahead", "--slow-stage", "1:1.3"])
    out, _ = analyse(d)
    st = table(out, "/stragglers").set_index("rank")
    flagged = sorted(set(table(out, "/outliers")["rank"]))
    assert (st.flagged == 0).all() and flagged, (st, flagged)
    page = os.path.join(tmpdir(), "report.html")
    report = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python",
                          "hta-mpi-report")
    subprocess.run([sys.executable, report, out, "-o", page], check=True, capture_output=True)
    text = open(page, encoding="utf-8").read()
    section = text[text.index("<h2>Stragglers</h2>"):]
    section = section[:section.index("<h2>", 4)]
    assert "No straggler" not in section, section
    for rank in flagged:
        assert f'<td class="text">{html.escape(st.loc[rank, "reasons"])}</td>' in section, \
            (rank, section)


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
