"""GPU work that runs past the next record on its stream (docs/definitions.md,
"Overlapping work on one stream"): hta-mpi's own tables clip it at the next
record's start, /ranks.input_notes counts the clipped records and the time
cut off, and the tables that reproduce HTA keep the records as HTA reads
them.

A generated job whose answer is known in closed form: K groups, T us
apart; in each, a kernel of L us on stream 7 with a second kernel starting
A us into it for B us (A + B < L) on the same stream, and a kernel of C us
(C < A) on stream 8 beside them, which overlaps the first but is on
another stream and is not clipped.  Clipped, a group is busy from its
start for A + B us; read as recorded, for L us."""
import re

from common import analyse, assert_close, main, table
from handbuilt import gpu_kernel, write_ranks

K, T, L, A, B, C = 6, 2000.0, 1500.0, 100.0, 200.0, 50.0


def job():
    events = []
    for j in range(K):
        events += [gpu_kernel("gemm", j * T, L, stream=7), gpu_kernel("relu", j * T + A, B, stream=7),
                   gpu_kernel("bias", j * T, C, stream=8)]
    return events


def test_clipped_in_own_tables_counted_in_notes():
    out, _ = analyse(write_ranks({0: job()}), extra=["--gap-threshold", "1000"])
    notes = table(out, "/ranks").input_notes[0]
    m = re.search(r"(\d+) GPU records ran past the next on their stream: clipped at its start, "
                  r"([0-9.]+) us cut off", notes)
    assert m, notes
    assert int(m[1]) == K, (m[1], K)
    assert_close(float(m[2]), K * (L - A), "time cut off", 1e-6)

    # Own tables: the clipped work.
    parts = table(out, "/overlap_breakdown").iloc[0]
    span = (K - 1) * T + A + B
    assert_close(parts.compute_us, K * (A + B), "compute", 1e-6)
    assert_close(parts.empty_us, span - K * (A + B), "empty", 1e-6)
    gaps = table(out, "/gpu_gaps")
    assert len(gaps) == K - 1, gaps
    for g in gaps.itertuples():
        assert_close(g.duration_us, T - (A + B), "gap", 1e-6)

    # HTA's reproductions: the records as recorded.
    kernels = table(out, "/kernels").set_index("name")
    assert_close(kernels.loc["gemm", "sum_us"], K * L, "gemm sum", 1e-6)
    by_type = table(out, "/kernel_type_by_rank").set_index("kernel_type")
    assert_close(by_type.loc["COMPUTATION", "sum_us"], K * L, "COMPUTATION union", 1e-6)


def test_same_job_without_overlap():
    """The same job with the second kernel moved after the first on stream
    7 (stream 8's beside them): nothing is clipped, no note, and the own
    tables read the records as recorded."""
    events = job()
    for e in events:
        if e["name"] == "relu":
            e["ts"] = e["ts"] - A + L
    out, _ = analyse(write_ranks({0: events}), extra=["--gap-threshold", "1000"])
    assert "ran past the next" not in table(out, "/ranks").input_notes[0]
    parts = table(out, "/overlap_breakdown").iloc[0]
    assert_close(parts.compute_us, K * (L + B), "compute", 1e-6)
    assert len(table(out, "/gpu_gaps")) == 0


if __name__ == "__main__":
    main([test_clipped_in_own_tables_counted_in_notes, test_same_job_without_overlap])
