"""Bad input and usage errors (README, "Exit codes"): a broken trace is
reported with its file and byte offset, recorded as failed in /ranks, and
every other rank's results are still written."""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

import h5py

from common import (
    HTA_MPI, MPI_ENV, all_tables, analyse, assert_close, assert_same_tables,
    expected, generated, main, run, table, tmpdir, trace_dir, trace_rows)
from handbuilt import gpu_kernel

GOOD = REAL_JSON = None  # two real traces and the first one's JSON, set by setup()


def setup():
    global GOOD, REAL_JSON
    GOOD = [os.path.join(trace_dir("trace_filter"), f)
            for f in ("sampled_rank-0.json.gz", "sampled_rank-1.json.gz")]
    REAL_JSON = gzip.open(GOOD[0]).read()


def dir_with_good_ranks():
    d = tmpdir()
    for g in GOOD:
        os.symlink(g, os.path.join(d, os.path.basename(g)))
    return d


def run_with_bad(name, data, processes=2):
    d = dir_with_good_ranks()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
    out, p = analyse(d, processes=processes, expect=1)
    ranks = trace_rows(out)
    bad = ranks[ranks.file.str.endswith(name)]
    assert len(bad) == 1 and bad.iloc[0].status == "failed", ranks
    ok = ranks[ranks.status == "ok"]
    assert sorted(ok["rank"]) == [0, 1], ranks
    tb = table(out, "/temporal_breakdown")
    assert sorted(tb["rank"]) == [0, 1], tb
    want = expected("trace_filter", "temporal_breakdown.csv")
    assert_close(tb.set_index("rank").loc[1, "idle_time_us"], want.set_index("rank").loc[1, "idle_time(us)"], "rank 1 intact", 1.0)
    return bad.iloc[0].error, p.stderr


def test_truncated_json_names_file_and_offset():
    text = gzip.open(GOOD[0]).read()[:5000]
    err, stderr = run_with_bad("rank-7.json", text)
    assert "rank-7.json" in err and "byte 5000" in err, err
    assert "hta-mpi: " in stderr and "rank-7.json" in stderr, stderr


def test_corrupt_gzip_reports_compressed_offset():
    data = bytearray(open(GOOD[0], "rb").read()[:20000])
    data[5000:5100] = b"\x00" * 100
    err, _ = run_with_bad("rank-7.json.gz", bytes(data))
    assert "rank-7.json.gz" in err and ("corrupt gzip" in err or "parse error" in err), err


def test_corrupt_gzip_inflated_by_the_reader_thread():
    # A file of over 4 MiB inflated (its trailer says 25.8 MB) is inflated
    # on a reader thread, not inline: its errors come out the same way.
    data = bytearray(open(os.path.join(trace_dir("negative_queue"), "rank0.json.gz"), "rb").read())
    data[700000:700100] = b"\x00" * 100
    err, _ = run_with_bad("rank-7.json.gz", bytes(data))
    assert "rank-7.json.gz" in err and ("corrupt gzip" in err or "parse error" in err), err


def test_truncated_gzip():
    err, _ = run_with_bad("rank-7.json.gz", open(GOOD[0], "rb").read()[:30000])
    assert "truncated gzip" in err and "rank-7.json.gz" in err, err


def test_empty_file():
    err, _ = run_with_bad("rank-7.json", b"")
    assert "empty file" in err, err


def test_not_json():
    err, _ = run_with_bad("rank-7.json", b"hello world")
    assert "byte 0" in err and "expected '{' or '['" in err, err


def test_trailing_garbage():
    err, _ = run_with_bad("rank-7.json", b'{"traceEvents": []} xyz')
    assert "byte 20" in err and "after the end" in err, err


def test_trace_events_not_array():
    err, _ = run_with_bad("rank-7.json", b'{"traceEvents": {"a": 1}}')
    assert "traceEvents is not an array" in err, err


def test_duplicate_rank_fails_the_later_file():
    d = dir_with_good_ranks()
    os.symlink(GOOD[0], os.path.join(d, "z_copy_of_rank0.json.gz"))
    out, p = analyse(d, processes=3, expect=1)
    ranks = trace_rows(out)
    dup = ranks[ranks.file.str.endswith("z_copy_of_rank0.json.gz")].iloc[0]
    assert dup.status == "failed" and "also claimed by" in dup.error and "sampled_rank-0" in dup.error, dup.error
    assert sorted(table(out, "/temporal_breakdown")["rank"]) == [0, 1]


def test_usage_errors_exit_2_and_write_nothing():
    d = tmpdir()
    out = os.path.join(d, "r.h5")
    p = run(["-o", out, os.path.join(d, "missing")], expect=2)
    assert "hta-mpi: " in p.stderr and "missing" in p.stderr, p.stderr
    run(["-o", out, d], expect=2)                      # no trace in it
    run(["-o", out, "--bins", "0", d], expect=2)       # bad option value
    run(["-o", out, "--no-such-option", d], expect=2)
    run(["-o", out], expect=2)                         # no input
    assert not os.path.exists(out)
    assert os.listdir(d) == ["r.h5"] or os.listdir(d) == [], os.listdir(d)


def test_existing_output_is_not_clobbered():
    d = tmpdir()
    out = os.path.join(d, "r.h5")
    with open(out, "w") as f:
        f.write("precious")
    p = run(["-o", out, trace_dir("alexnet")], expect=2)
    assert "already exists" in p.stderr, p.stderr
    assert open(out).read() == "precious"
    run(["-o", out, "--force", trace_dir("alexnet")], expect=0)
    assert table(out, "/temporal_breakdown").shape[0] == 1
    assert [f for f in os.listdir(d) if f != "r.h5"] == [], os.listdir(d)  # no temporary left


def test_help_and_version_need_no_mpi():
    import subprocess
    for flag in ("--help", "--version"):
        p = subprocess.run([HTA_MPI, flag], capture_output=True, text=True)
        assert p.returncode == 0 and p.stdout, (flag, p)
    p = subprocess.run([HTA_MPI, "--help"], capture_output=True, text=True)
    for option in ("--output", "--force", "--ranks", "--include-last-step", "--bins", "--min-effect"):
        assert option in p.stdout, option


def test_cpu_only_and_cupti_traces_are_not_failures():
    for folder, status in (("cpu_only", "no_gpu_events"), ("cupti_profiler", "no_gpu_events")):
        out, _ = analyse(trace_dir(folder), expect=0)
        assert trace_rows(out).iloc[0].status == status, folder


def test_rank_fallback_and_file_name():
    d = tmpdir()
    os.symlink(os.path.join(trace_dir("rank_unavailable"), "rank_not_found.json.gz"), os.path.join(d, "a.json.gz"))
    os.symlink(os.path.join(trace_dir("amd_mi250"), "mi250_minitoy_train_ROCm6_2_kineto.json.gz"), os.path.join(d, "b_rank-0.json.gz"))
    out, _ = analyse(d, processes=2)
    ranks = trace_rows(out).set_index("file")
    a = ranks.loc[os.path.join(d, "a.json.gz")]
    b = ranks.loc[os.path.join(d, "b_rank-0.json.gz")]
    assert b["rank"] == 0 and b.rank_source == "file_name", b
    assert a["rank"] == 1 and a.rank_source == "fallback", a


# ---- the remaining bad inputs (docs/robustness.md has the rules) ----------


def assert_fails_with(name, data, message, processes=2):
    """The file alone fails, with exactly '<its path>: <message>' in /ranks
    and as a 'hta-mpi: ' line on stderr; ranks 0 and 1 are intact."""
    err, stderr = run_with_bad(name, data, processes)
    assert err.startswith("/") and err.endswith(f"/{name}: {message}"), err
    assert f"hta-mpi: {err}\n" in stderr, stderr


def cut_real_trace(marker, extra):
    """A prefix of a real trace ending `extra` bytes after a marker found
    past its first 20 000 bytes (inside an event, a string or a number)."""
    at = REAL_JSON.index(marker, 20000) + len(marker) + extra
    return REAL_JSON[:at]


def test_gzip_of_non_json():
    assert_fails_with("rank-7.json.gz", gzip.compress(b"Profiler crashed; no trace\n" * 100),
                      "parse error at byte 0: not a JSON trace (expected '{' or '[')")


def test_json_truncated_mid_event():
    text = cut_real_trace(b'"ph": "X",', 0)
    assert_fails_with("rank-7.json", text, f"parse error at byte {len(text)}: expected a string key")


def test_json_truncated_mid_string():
    text = cut_real_trace(b'"name": "', 5)
    assert_fails_with("rank-7.json", text, f"parse error at byte {len(text)}: unterminated string")


def test_json_truncated_mid_number():
    text = cut_real_trace(b'"ts": ', 4)
    assert text[-4:].isdigit(), text[-20:]
    assert_fails_with("rank-7.json", text, f"parse error at byte {len(text)}: expected ',' or '}}'")


def run_with_odd_rank7(events):
    """Rank 7 beside the good ranks 0 and 1: every rank analysed (exit 0);
    returns (results file, rank 7's /ranks row)."""
    d = dir_with_good_ranks()
    with open(os.path.join(d, "rank-7.json"), "w") as f:
        json.dump({"distributedInfo": {"rank": 7, "world_size": 8}, "traceEvents": events}, f)
    out, _ = analyse(d, processes=2)
    ranks = trace_rows(out).set_index("rank")
    assert list(ranks.status) == ["ok", "ok", "ok"] and list(ranks.index) == [0, 1, 7], ranks
    want = expected("trace_filter", "temporal_breakdown.csv").set_index("rank")
    tb = table(out, "/temporal_breakdown").set_index("rank")
    assert_close(tb.loc[1, "idle_time_us"], want.loc[1, "idle_time(us)"], "rank 1 intact", 1.0)
    return out, ranks.loc[7]


def rank7_kernels(out):
    k = table(out, "/kernels")
    return k[k["rank"] == 7].set_index("name")


def without(event, key):
    return {k: v for k, v in event.items() if k != key}


def test_events_without_ts_dur_or_plausible_times_are_skipped_and_counted():
    good = [gpu_kernel("good", 100, 10), gpu_kernel("good", 200, 30)]
    odd = [without(gpu_kernel("odd", 300, 10), "ts"),
           without(gpu_kernel("odd", 300, 10), "dur"),
           without(gpu_kernel("odd", 300, 10), "cat"),
           gpu_kernel("odd", 300, -5),          # negative duration
           gpu_kernel("odd", 300, 1e30),        # absurd: beyond int64 ns
           gpu_kernel("odd", 300, 1.5e12),      # absurd: over 1e12 us (11.6 days)
           gpu_kernel("odd", 300, "10"),        # not a number
           gpu_kernel("odd", -1, 10),           # before time 0
           gpu_kernel("odd", 5e15, 10)]         # after 4e15 us (the year 2096)
    out, row = run_with_odd_rank7(good + odd)
    assert (row.events, row.skipped_events, row.gpu_events) == (2, 9, 2), row
    k = rank7_kernels(out)
    assert list(k.index) == ["good"] and k.loc["good", "count"] == 2, k
    assert_close(k.loc["good", "sum_us"], 40.0, "only the good kernels are summed")
    assert_close(row.last_ts_us, 230.0, "the span ignores skipped events")


def test_non_numeric_stream_is_a_cpu_event():
    events = [gpu_kernel("gpu", 100, 10), gpu_kernel("string stream", 120, 10, stream="7")]
    out, row = run_with_odd_rank7(events)
    assert (row.events, row.gpu_events, row.skipped_events) == (2, 1, 0), row
    assert list(rank7_kernels(out).index) == ["gpu"]


def nested_args_trace(depth):
    return (b'{"traceEvents": [' + json.dumps(gpu_kernel("deep", 100, 10))[:-1].encode() +
            b', "nested": ' + b"[" * depth + b"]" * depth + b'}], "distributedInfo": {"rank": 7}}')


def test_deeply_nested_args_100000_levels():
    d = dir_with_good_ranks()
    with open(os.path.join(d, "rank-7.json"), "wb") as f:
        f.write(nested_args_trace(100000))
    out, _ = analyse(d, processes=2)
    row = trace_rows(out).set_index("rank").loc[7]
    assert row.status == "ok" and row.events == 1, row


def test_100_mb_string_value_is_read_through():
    d = dir_with_good_ranks()
    head = json.dumps(gpu_kernel("big args", 100, 10))[:-2].encode()  # open args
    with open(os.path.join(d, "rank-7.json"), "wb") as f:
        f.write(b'{"distributedInfo": {"rank": 7}, "traceEvents": [' + head + b', "blob": "')
        for _ in range(100):
            f.write(b"0123456789abcdef\\\"" * 58254 + b"x" * 4)  # 1 MB, escapes included
        f.write(b'"}}]}')
    try:
        out, _ = analyse(d, processes=2)   # no wall-clock bound: ctest's timeout
    finally:
        shutil.rmtree(d)                   # 100 MB
    row = trace_rows(out).set_index("rank").loc[7]
    assert row.status == "ok" and row.events == 1 and row.json_bytes > 100e6, row


def test_invalid_utf8_is_replaced_in_the_results_file():
    # Stray bytes, a cut sequence, a surrogate, an overlong form, beyond
    # U+10FFFF, a cut 4-byte sequence at the end; valid 2-, 3- and 4-byte ones.
    name = (b"gemm \xff\xfe kernel \xe2\x82 end \xed\xa0\x80 \xc0\xaf \xf4\x90\x80\x80 "
            b"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \xf0\x9f\x98")
    d = dir_with_good_ranks()
    trace = json.dumps({"distributedInfo": {"rank": 7}, "traceEvents": [gpu_kernel("NAME", 100, 10)]})
    path = os.path.join(d.encode(), b"rank-7-\xe9t\xe9.json")           # a Latin-1 file name
    with open(path, "wb") as f:
        f.write(trace.encode().replace(b"NAME", name))
    out, _ = analyse(d, processes=2)
    want = name.decode("utf-8", errors="replace")
    assert want.count("\ufffd") == 13 and want.endswith(" \u00e9\u20ac\U0001f600 \ufffd"), want
    assert list(rank7_kernels(out).index) == [want]                    # strict decode in table()
    ranks = trace_rows(out).set_index("rank")
    assert ranks.loc[7, "file"] == path.decode("utf-8", errors="replace"), ranks.loc[7, "file"]
    with h5py.File(out, "r") as f:
        paths = list(f.attrs["trace_paths"])   # unrepaired bytes would come back as lone surrogates
    assert path.decode("utf-8", errors="replace") in paths, paths


def test_directory_without_traces_exits_2():
    d = tmpdir()
    with open(os.path.join(d, "notes.txt"), "w") as f:
        f.write("not a trace")
    out = os.path.join(tmpdir(), "r.h5")
    p = run(["-o", out, d], expect=2)
    assert hta_lines(p) == ["hta-mpi: no trace files (*.json, *.json.gz, *.db, *.sqlite, "
                            "folders with kernel.csv, *kernel_trace.csv) found in the given "
                            "input"], p.stderr
    assert not os.path.exists(out)


def test_trace_directory_that_is_a_file_is_analysed_as_a_file():
    d = tmpdir()
    path = os.path.join(d, "traces")                   # no .json suffix: named explicitly
    shutil.copy(GOOD[1], path)
    out, _ = analyse(path)
    ranks = trace_rows(out)
    assert list(ranks.file) == [path] and list(ranks.status) == ["ok"], ranks
    want = expected("trace_filter", "temporal_breakdown.csv").set_index("rank")
    assert_close(table(out, "/temporal_breakdown").iloc[0].idle_time_us, want.loc[1, "idle_time(us)"],
                 "the file's rank 1", 1.0)


def test_dangling_trace_link_is_a_failed_rank_not_a_silent_drop():
    d = dir_with_good_ranks()
    os.symlink(os.path.join(d, "gone.json"), os.path.join(d, "rank-7.json"))
    out, p = analyse(d, processes=2, expect=1)
    ranks = trace_rows(out)
    bad = ranks[ranks.file.str.endswith("rank-7.json")].iloc[0]
    assert bad.status == "failed" and bad.error == f"{d}/rank-7.json: cannot open: No such file or directory", bad.error


def hta_lines(p):
    """hta-mpi's own stderr lines (mpirun adds its banner after them)."""
    return [line for line in p.stderr.splitlines() if line.startswith("hta-mpi: ")]


def try_mount_tmpfs(options):
    """A fresh tmpfs with the given mount options, or None where mounting is
    not allowed (CI containers without CAP_SYS_ADMIN)."""
    d = tmpdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", d], capture_output=True)
    return d if p.returncode == 0 else None


def unmount(d):
    subprocess.run(["umount", d], check=True)


def assert_unwritable_output(out, reason):
    p = run(["-o", out, trace_dir("alexnet")], expect=2)
    d = os.path.dirname(out)
    assert hta_lines(p) == [f"hta-mpi: {out}: cannot write to directory {d}: {reason}"], p.stderr


def test_unwritable_output_directory_exits_2_before_any_work():
    # Root ignores permission bits, so: a "directory" that is a regular file...
    d = tmpdir()
    with open(os.path.join(d, "file"), "w") as f:
        f.write("x")
    assert_unwritable_output(os.path.join(d, "file", "r.h5"), "Not a directory")
    assert os.listdir(d) == ["file"]
    # ...and a read-only file system, where mounting is allowed.
    ro = try_mount_tmpfs("ro,size=1m")
    if ro:
        try:
            assert_unwritable_output(os.path.join(ro, "r.h5"), "Read-only file system")
        finally:
            unmount(ro)


def assert_disk_full(out, p, reason):
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert hta_lines(p) == [f"hta-mpi: {out}: cannot write the results file: {reason}"], p.stderr
    assert os.listdir(os.path.dirname(out)) == [], os.listdir(os.path.dirname(out))  # no file, no temporary


# Sets a 200 kB file-size limit on hta-mpi alone (mpirun's own PMIx files
# need more), with SIGXFSZ ignored as a batch system's limit leaves it, so
# that writes past the limit fail with EFBIG, then runs hta-mpi.
LIMITED_EXEC = """import os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (200000, 200000))
os.execv(sys.argv[1], sys.argv[1:])"""


def test_disk_full_exits_3_and_leaves_nothing():
    args = ["-q", "--detail", trace_dir("negative_queue")]   # 440 kB of results
    out = os.path.join(tmpdir(), "r.h5")
    cmd = ["mpirun", "-n", "1", sys.executable, "-c", LIMITED_EXEC, HTA_MPI, "-o", out] + args
    p = subprocess.run(cmd, env=MPI_ENV, capture_output=True, text=True, timeout=600)
    assert_disk_full(out, p, "File too large")
    # A really full file system, where mounting is allowed.
    small = try_mount_tmpfs("size=256k")
    if small:
        try:
            out = os.path.join(small, "r.h5")
            assert_disk_full(out, run(["-o", out] + args, expect=None), "No space left on device")
        finally:
            unmount(small)


def test_unusable_tmpdir_keeps_the_tables_between_traces_in_memory():
    # A process keeps each trace's packed tables until the gather, beyond
    # 1 MB of them in an unlinked file in $TMPDIR: 120 small traces keep
    # about 1.5 MB on one process, 0.8 MB on each of two.  With TMPDIR
    # missing, a file, or full (where mounting is allowed: the writes stop
    # part way) they stay in memory.  The same tables every way, nothing
    # left in TMPDIR, and -v says where the tables went and why.  Lone
    # processes: outside ctest, which gives every case its own Open MPI
    # session folder, mpirun would put its session folder in TMPDIR.
    d = generated(ranks=120, size_mb=0.02)
    base = all_tables(analyse(d, processes=2)[0])
    spill = tmpdir()
    not_a_dir = os.path.join(tmpdir(), "file")
    open(not_a_dir, "w").close()
    full = try_mount_tmpfs("size=64k")
    in_file = re.compile(r"hta-mpi: process 0 kept \d+\.\d MB of result tables in a temporary "
                         r"file in (.*)")
    why = {"/nonexistent/hta-test": "No such file or directory", not_a_dir: "Not a directory",
           full: "No space left on device"}
    try:
        for tmp in [spill, "/nonexistent/hta-test", not_a_dir] + ([full] if full else []):
            out = os.path.join(tmpdir(), "r.h5")
            p = subprocess.run([HTA_MPI, "-q", "-v", "-o", out, d], env=dict(MPI_ENV, TMPDIR=tmp),
                               capture_output=True, text=True, timeout=600)
            assert p.returncode == 0, (tmp, p.returncode, p.stderr)
            said = [line for line in hta_lines(p) if "result tables" in line]
            if tmp == spill:
                assert len(said) == 1 and in_file.fullmatch(said[0]).group(1) == spill, said
            else:
                assert said[-1] == ("hta-mpi: process 0 kept result tables in memory: cannot "
                                    f"write a temporary file in {tmp}: {why[tmp]}"), said
                assert all(in_file.fullmatch(line).group(1) == tmp for line in said[:-1]), said
            assert_same_tables(base, all_tables(out), f"TMPDIR={tmp}")
            if tmp in (spill, full):
                assert os.listdir(tmp) == [], os.listdir(tmp)
    finally:
        if full:
            unmount(full)


def test_bad_trace_on_the_root_or_another_process_loses_no_other_rank():
    # Files go largest first to the least loaded process: with three files on
    # three processes, the largest lands on the root, the smallest on process 2.
    for bad_size, process in ((10 ** 6, 0), (10, 2)):
        data = b"[" + b" " * (bad_size - 2) + b"x"
        d = dir_with_good_ranks()
        with open(os.path.join(d, "rank-7.json"), "wb") as f:
            f.write(data)
        out, _ = analyse(d, processes=3, expect=1)
        ranks = trace_rows(out).set_index("rank")
        assert ranks.loc[7, "process"] == process and ranks.loc[7, "status"] == "failed", ranks
        assert list(ranks.loc[[0, 1], "status"]) == ["ok", "ok"], ranks
        assert sorted(table(out, "/temporal_breakdown")["rank"]) == [0, 1]


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")], setup=setup)
