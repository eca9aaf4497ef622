"""The hang diagnosis from Flight Recorder dumps against the generator's truth.

hta-tracegen --flight-recorder writes the dumps of a hung job of 8 ranks
with one fault per process group (a rank that never joins an all-reduce,
with rank 0 the culprit of one; a rank that skipped an all-gather; a rank
with other sizes; three faults in one group; a stuck network; a send
whose receive is never posted) and the
findings that follow by construction.  Every finding of /fr_findings must
equal the truth, on 1, 2 and 3 processes, in every encoding, with wrapped
rings (the early collectives "not recorded", never missing), with a rank's
dump absent, with the dumps beside Kineto traces, and whatever order the
dumps are listed in.  /fr_ranks and /fr_groups are checked against the
dumps themselves, read with Python's pickle."""
import json
import os
import pickle
import shutil
import subprocess

from common import TRACEGEN, analyse, main, table, tmpdir, generated

REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python",
                      "hta-mpi-report")

FINDING_KEYS = ["kind", "group", "seq", "op", "culprit_ranks", "waiting_ranks"]


def job(encoding="torch", extra=()):
    d = os.path.join(tmpdir(), "dumps")
    subprocess.run([TRACEGEN, "--flight-recorder", "-o", d, "--encoding", encoding] +
                   list(extra), check=True)
    with open(d + ".fr_truth.json") as f:
        return d, json.load(f)


def findings_of(path):
    t = table(path, "fr_findings")
    return sorted(tuple(str(r[k]) if k != "seq" else int(r[k]) for k in FINDING_KEYS)
                  for _, r in t.iterrows())


def truth_findings(truth):
    return sorted(tuple(f[k] for k in FINDING_KEYS) for f in truth["findings"])


def check_run(inputs, truth, processes, what):
    path, _ = analyse(inputs, processes=processes)
    got, want = findings_of(path), truth_findings(truth)
    assert got == want, f"{what} on {processes} processes:\n got  {got}\n want {want}"
    return path


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    return json.loads(data) if data[:1] == b"{" else pickle.loads(data)


def test_findings_equal_truth_on_1_2_3_processes():
    """Each group is diagnosed by the process that owns it: the tables are
    the same, row for row, on any number of processes."""
    d, truth = job()
    tables = {}
    for processes in (1, 2, 3):
        path = check_run(d, truth, processes, "torch dumps")
        tables[processes] = {n: table(path, n) for n in ("fr_groups", "fr_collectives",
                                                         "fr_findings", "fr_ranks")}
    for processes in (2, 3):
        for name, t in tables[processes].items():
            want = tables[1][name]
            if name == "fr_ranks":
                t, want = t.drop(columns=["file"]), want.drop(columns=["file"])
            assert t.equals(want), f"{name} on {processes} processes differs from 1"


def test_every_encoding():
    for encoding in ("pickle2", "pickle5", "json"):
        d, truth = job(encoding)
        check_run(d, truth, 2, encoding)


def test_wrapped_rings_are_not_recorded_never_missing():
    d, truth = job("torch", ["--ring", "10"])
    assert any(r["wrapped"] for r in truth["ranks"].values()), "the rings should wrap"
    for processes in (1, 3):
        path = check_run(d, truth, processes, "wrapped rings")
    ranks = table(path, "fr_ranks")
    for _, r in ranks.iterrows():
        want = truth["ranks"][str(r["rank"])]
        assert (r["entries"], r["first_record"], r["last_record"], bool(r["wrapped"])) == \
            (want["entries"], want["first_record"], want["last_record"], want["wrapped"]), r
    # A seq a member's ring no longer holds is listed as not recorded for it
    # wherever the group's other members recorded it.
    coll = table(path, "fr_collectives")
    dumps = {int(f.rsplit("_", 1)[1]): load(os.path.join(d, f)) for f in os.listdir(d)}
    not_recorded = 0
    for _, row in coll.iterrows():
        listed = {int(x) for x in str(row["not_recorded_ranks"]).split(",") if x}
        for rank in listed:
            seqs = [e["collective_seq_id"] for e in dumps[rank]["entries"]
                    if e["process_group"][0] == row["group"]]
            assert seqs and min(seqs) > row["seq"], (rank, row["group"], row["seq"])
        not_recorded += len(listed)
    assert not_recorded > 0


def test_missing_dump():
    d, truth = job("torch", ["--missing", "7"])
    assert any(f["kind"] == "dump_missing" for f in truth["findings"])
    assert any(f["kind"] == "undecided" for f in truth["findings"])
    for processes in (1, 2, 3):
        path = check_run(d, truth, processes, "rank 7's dump missing")
    groups = table(path, "fr_groups")
    seven = groups[groups["rank"] == 7]
    assert len(seven) == 3 and (seven["has_dump"] == 0).all(), seven


def test_groups_against_the_dumps():
    d, truth = job("pickle4", ["--ring", "10"])
    path = check_run(d, truth, 2, "groups")
    groups = table(path, "fr_groups")
    for f in os.listdir(d):
        rank, dump = int(f.rsplit("_", 1)[1]), load(os.path.join(d, f))
        # point-to-point entries are out of the collective sequence
        names = {e["process_group"][0]: e["pg_id"] for e in dump["entries"] if not e["is_p2p"]}
        for name, pg_id in names.items():
            status = dump["pg_status"][str(pg_id)]
            row = groups[(groups["group"] == name) & (groups["rank"] == rank)].iloc[0]
            seqs = [e["collective_seq_id"] for e in dump["entries"]
                    if e["process_group"][0] == name and not e["is_p2p"]]
            assert row["first_recorded_seq"] == min(seqs), (rank, name)
            assert row["last_enqueued_seq"] == max(max(seqs),
                                                   status["last_enqueued_collective"])
            assert row["last_completed_seq"] >= status["last_completed_collective"]


def test_culprit_by_majority_not_read_order():
    """The same dumps under names that list the culprits first and last."""
    d, truth = job()
    for order in (list(range(8)), list(reversed(range(8)))):
        renamed = os.path.join(tmpdir(), "renamed")
        os.mkdir(renamed)
        for position, rank in enumerate(order):
            dump = load(os.path.join(d, f"nccl_trace_rank_{rank}"))
            dump["rank"] = rank      # the dump's own rank wins over the name
            with open(os.path.join(renamed, f"dump_{position}"), "wb") as f:
                pickle.dump(dump, f, protocol=2)
        check_run(renamed, truth, 2, f"order {order}")


def test_summary_and_report():
    """The stdout summary's "Hang diagnosis" and the HTML report list every
    finding with its culprits, group by group."""
    traces = generated(ranks=8)
    d, truth = job("torch", ["--missing", "7"])
    both = os.path.join(tmpdir(), "both")
    shutil.copytree(traces, both)
    for f in os.listdir(d):
        shutil.copy(os.path.join(d, f), both)
    path, p = analyse(both, processes=3)
    assert "\nHang diagnosis (7 Flight Recorder dumps, 0 with wrapped rings" in p.stdout, p.stdout
    section = p.stdout.split("\nHang diagnosis", 1)[1].split("\nResults:", 1)[0]
    for f in truth["findings"]:
        if f["seq"] >= 0:
            line = (f"    {f['kind']} at #{f['seq']} ({f['op']}): culprit "
                    f"{f['culprit_ranks'] or 'none (the dumps cannot tell)'}, waiting "
                    f"{f['waiting_ranks'] or 'none'}")
        else:
            line = f"    {f['kind']}: rank(s) {f['culprit_ranks']}"
        assert line in section, f"{line!r} not in\n{section}"
    assert "      next: what the culprit was doing instead" in section
    assert "train_step (train.py:" in section       # the culprit's stack frames
    page = os.path.join(tmpdir(), "report.html")
    subprocess.run([REPORT, path, "-o", page], check=True, capture_output=True)
    with open(page) as f:
        text = f.read()
    assert "<h2>Hang diagnosis (NCCL Flight Recorder)</h2>" in text
    table_part = text.split("<h2>Hang diagnosis", 1)[1].split("<h2>", 1)[0]
    assert table_part.count("<tr") == len(truth["findings"]) + 1, table_part


def test_beside_kineto_traces():
    """Dumps in the same folder as the job's traces: both read, each rank
    once in /ranks per input, the traces' results unchanged."""
    traces = generated(ranks=4)
    d, truth = job()
    both = os.path.join(tmpdir(), "both")
    shutil.copytree(traces, both)
    for f in os.listdir(d):
        shutil.copy(os.path.join(d, f), both)
    base, _ = analyse(traces, processes=2)
    path = check_run(both, truth, 2, "beside traces")
    ranks = table(path, "ranks")
    assert (ranks["status"] != "failed").all(), ranks[["file", "status", "error"]]
    assert (ranks["input_format"] == "flight-recorder").sum() == 8
    for name in ("temporal_breakdown", "kernel_type_breakdown"):
        a, b = table(base, name), table(path, name)
        assert a.equals(b), name


if __name__ == "__main__":
    main([test_findings_equal_truth_on_1_2_3_processes, test_every_encoding,
          test_wrapped_rings_are_not_recorded_never_missing, test_missing_dump,
          test_groups_against_the_dumps, test_culprit_by_majority_not_read_order,
          test_summary_and_report, test_beside_kineto_traces])
