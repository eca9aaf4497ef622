"""The per-rank tables written in place (src/output/hdf5_in_place.c): every
process writes its own rows collectively through MPI-IO, at the rows its
ranks own in the rank-sorted table, although a process's ranks are not
contiguous.  Checked: the same values as with one process, rank order,
dropped ranks (failed, duplicate, outside --ranks) absent as from the
gathered tables, processes without rows, the on-disk layout, and a full
disk with several processes."""
import json
import os
import shutil
import subprocess
import sys

import h5py

from common import (
    HTA_MPI, MPI_ENV, all_tables, analyse, assert_same_tables, generated, main, table, tmpdir,
    trace_dir)

IN_PLACE = ["idle_time", "queue_length", "memory_bw", "launch_stats", "overlap_breakdown",
            "comm_comp_overlap", "detail/launches", "detail/queue_length", "detail/memory_bw"]
def owns_non_contiguous_ranks(out):
    ranks = table(out, "/ranks").sort_values("rank")
    runs = (ranks["process"] != ranks["process"].shift()).sum()
    return runs > ranks["process"].nunique()


def test_same_rows_as_one_process_with_interleaved_ranks():
    d = generated(7, size_mb=0.2)
    base, _ = analyse(d, processes=1, extra=["--detail"])
    base_tables = all_tables(base)
    assert all(n in base_tables for n in IN_PLACE), sorted(base_tables)
    assert len(base_tables["detail/launches"]) > 100, len(base_tables["detail/launches"])
    for n in (2, 3):
        out, _ = analyse(d, processes=n, extra=["--detail"])
        assert owns_non_contiguous_ranks(out), table(out, "/ranks")[["rank", "process"]]
        assert_same_tables(base_tables, all_tables(out), f"{n} processes")
        for name in IN_PLACE:
            ranks = table(out, name)["rank"]
            assert ranks.is_monotonic_increasing, name
            assert sorted(set(ranks)) == list(range(7)), (name, sorted(set(ranks)))


def test_layout_fixed_strings_and_compressed_detail():
    out, _ = analyse(generated(2, size_mb=0.2), processes=2, extra=["--detail"])
    with h5py.File(out, "r") as f:
        assert f["idle_time"].dtype["idle_category"].kind == "S"
        assert f["detail/launches"].dtype["launch_name"].kind == "S"
        assert f["detail/launches"].compression == "gzip" and f["detail/launches"].chunks
        assert f["idle_time"].chunks is None
        # Tables of free text stay variable-length, written by the root.
        assert h5py.check_string_dtype(f["kernels"].dtype["name"]).length is None
    categories = set(table(out, "/idle_time")["idle_category"])
    assert categories <= {"host_wait", "kernel_wait", "other"}, categories


def test_dropped_ranks_are_absent_as_from_gathered_tables():
    d = generated(5, size_mb=0.2)
    # rank 1 claimed twice (the later file fails), a corrupt rank 7, and
    # rank 3 excluded by --ranks.
    shutil.copy(os.path.join(d, "rank-1.json.gz"), os.path.join(d, "rank-1b.json.gz"))
    with open(os.path.join(d, "rank-7.json"), "w") as f:
        f.write('{"traceEvents": [{"ph": "X", "cat": "kernel"')
    out, p = analyse(d, processes=3, extra=["--detail", "--ranks", "0-2,4-9"], expect=1)
    ranks = table(out, "/ranks")
    assert sorted(ranks[ranks.status == "failed"]["rank"]) == [1, 7], ranks
    kept = sorted(set(table(out, "/temporal_breakdown")["rank"]))
    assert kept == [0, 1, 2, 4], kept
    for name in IN_PLACE:
        assert sorted(set(table(out, name)["rank"])) == kept, name
    one, _ = analyse(d, processes=1, extra=["--detail", "--ranks", "0-2,4-9"], expect=1)
    assert_same_tables(all_tables(one), all_tables(out), "failed and excluded ranks")


def test_processes_without_rows_and_ranks_without_rows():
    d = generated(2, size_mb=0.2)
    one, _ = analyse(d, processes=1, extra=["--detail"])
    four, _ = analyse(d, processes=4, extra=["--detail"])
    assert_same_tables(all_tables(one), all_tables(four), "4 processes, 2 files")
    # A trace with no memory copies has rows in no memory table.
    d2 = tmpdir()
    shutil.copy(os.path.join(trace_dir("triton"), "triton_example.json.gz"),
                os.path.join(d2, "rank-5.json.gz"))
    out, _ = analyse([d, d2], processes=2, extra=["--detail"])
    assert 5 not in set(table(out, "/detail/memory_bw")["rank"])
    assert set(table(out, "/temporal_breakdown")["rank"]) == {0, 1, 5}


def test_invalid_utf8_in_a_copy_kind_is_repaired():
    # The copy kind is the first 11 bytes of the event's name: here a cut
    # 2-byte sequence and a stray byte, which must decode strictly.
    name = b"Memcpy \xc3 \xff (Device -> Device)"
    event = {"ph": "X", "cat": "gpu_memcpy", "name": "NAME", "pid": 0, "tid": 7, "ts": 10,
             "dur": 5, "args": {"stream": 7, "correlation": 3, "bytes": 100,
                                "memory bandwidth (GB/s)": 2.0}}
    d = tmpdir()
    trace = json.dumps({"distributedInfo": {"rank": 0}, "traceEvents": [event]})
    with open(os.path.join(d, "rank-0.json"), "wb") as f:
        f.write(trace.encode().replace(b"NAME", name))
    out, _ = analyse(d, processes=2, extra=["--detail"])
    want = name[:11].decode("utf-8", errors="replace")
    assert want == "Memcpy \ufffd \ufffd ", want
    for t in ("/memory_bw", "/detail/memory_bw"):
        assert set(table(out, t)["kind"]) == {want}, (t, set(table(out, t)["kind"]))


def test_output_not_shared_by_every_process_exits_2_before_any_work():
    # Two processes in different working directories given the same
    # relative output: as a node-local directory on a multi-node job.
    a, b, traces = tmpdir(), tmpdir(), generated(2, size_mb=0.2)
    cmd = ["mpirun", "-n", "1", "--wdir", a, HTA_MPI, "-q", "-o", "r.h5", traces, ":",
           "-n", "1", "--wdir", b, HTA_MPI, "-q", "-o", "r.h5", traces]
    p = subprocess.run(cmd, env=MPI_ENV, capture_output=True, text=True, timeout=600)
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = [l for l in p.stderr.splitlines() if l.startswith("hta-mpi:")]
    assert lines == ["hta-mpi: r.h5: process 1 does not see the output directory: every process "
                     "writes into the results file, so it must be on a file system they all "
                     "share"], p.stderr
    assert os.listdir(a) == [] and os.listdir(b) == []


LIMITED_EXEC = """import os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (200000, 200000))
os.execv(sys.argv[1], sys.argv[1:])"""


def test_full_disk_with_two_processes_leaves_nothing():
    out = os.path.join(tmpdir(), "r.h5")
    cmd = ["mpirun", "-n", "2", sys.executable, "-c", LIMITED_EXEC, HTA_MPI, "-o", out,
           "-q", "--detail", generated(3, size_mb=0.2)]
    p = subprocess.run(cmd, env=MPI_ENV, capture_output=True, text=True, timeout=600)
    assert p.returncode == 3, (p.returncode, p.stderr)
    lines = [l for l in p.stderr.splitlines() if l.startswith("hta-mpi:")]
    assert lines == [f"hta-mpi: {out}: cannot write the results file: File too large"], p.stderr
    assert os.listdir(os.path.dirname(out)) == []


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
