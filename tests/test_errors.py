"""Bad input and usage errors (interface.md, exit codes): a broken trace is
reported with its file and byte offset, recorded as failed in /ranks, and
every other rank's results are still written."""
import gzip
import shutil

from common import *

GOOD = [os.path.join(trace_dir("trace_filter"), f) for f in ("sampled_rank-0.json.gz", "sampled_rank-1.json.gz")]


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
    ranks = table(out, "/ranks")
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
    assert f"hta-mpi: " in stderr and "rank-7.json" in stderr, stderr


def test_corrupt_gzip_reports_compressed_offset():
    data = bytearray(open(GOOD[0], "rb").read()[:20000])
    data[5000:5100] = b"\x00" * 100
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
    ranks = table(out, "/ranks")
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
        assert table(out, "/ranks").iloc[0].status == status, folder


def test_rank_fallback_and_file_name():
    d = tmpdir()
    os.symlink(os.path.join(trace_dir("rank_unavailable"), "rank_not_found.json.gz"), os.path.join(d, "a.json.gz"))
    os.symlink(os.path.join(trace_dir("amd_mi250"), "mi250_minitoy_train_ROCm6_2_kineto.json.gz"), os.path.join(d, "b_rank-0.json.gz"))
    out, _ = analyse(d, processes=2)
    ranks = table(out, "/ranks").set_index("file")
    a = ranks.loc[os.path.join(d, "a.json.gz")]
    b = ranks.loc[os.path.join(d, "b_rank-0.json.gz")]
    assert b["rank"] == 0 and b.rank_source == "file_name", b
    assert a["rank"] == 1 and a.rank_source == "fallback", a


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
