"""Real multi-rank jobs read as a user would, against values computed from
the raw JSON by the tests' own matcher (tests/multirank_truth.py).

param_dlrm_8rank: TorchRec DLRM with DDP on 8 V100s, no process-group
metadata; per rank 3 all-reduces and 5 all-to-alls, each all-to-all a
ncclKernel_SendRecv kernel launched by c10d::alltoall_base_ inside
nccl:all_to_all.  Those are collectives, matched by stream order with the
all-reduces: nothing is unpaired point-to-point, every rank's wait, last
arrivals and caused wait are the matcher's, and the straggler is its
verdict, on 1, 2 and 3 processes."""
import os

from common import analyse, assert_close, main, table, trace_dir
from multirank_truth import flagged_stragglers, folder_truth

US = 1e-6


def dlrm_folder():
    return trace_dir(os.path.join("..", "real_multirank", "param_dlrm_8rank"))


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


def test_dlrm_all_to_alls_are_collectives():
    folder = dlrm_folder()
    figures, instances = folder_truth(folder)
    assert len(instances) == 8 and all(len(i) == 8 for i in instances), instances
    want_flagged = flagged_stragglers(figures)
    assert want_flagged, figures  # the job has a straggler to find
    for n in (1, 2, 3):
        out, p = analyse(folder, processes=n)
        what = f"param_dlrm_8rank on {n} processes"
        assert_waits(out, figures, what)
        assert "no known peer" not in p.stdout, (what, p.stdout)
        st = table(out, "/stragglers")
        assert set(st[st.flagged == 1]["rank"]) == want_flagged, (what, st)
        assert st.iloc[0]["rank"] in want_flagged, (what, st)
        assert "Stragglers: none" not in p.stdout, (what, p.stdout)


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
