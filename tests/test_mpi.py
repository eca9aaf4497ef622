"""MPI runs: the same HDF5 tables for 1, 2, 3 and 8 processes (only timing
and process columns may differ), and for 1, 2 and 3 threads (parse and
analyses), more processes than files, a lone process's first trace
analysed during MPI start-up, and the injected straggler found by the
outlier search."""
import os
import subprocess

import h5py

from common import (
    HTA_MPI, MPI_ENV, TRACEGEN, all_tables, analyse, assert_same_tables, generated, main, run,
    table, tmpdir)

def test_identical_tables_for_1_2_3_8_processes():
    d = generated(ranks=7, straggler=3)
    base = None
    for n in (1, 2, 3, 8):
        out, _ = analyse(d, processes=n)
        tables = all_tables(out)
        if base is None:
            base = tables
            assert "temporal_breakdown" in tables and len(tables["ranks"]) == 7
            continue
        assert_same_tables(base, tables, f"{n} processes")
        assert set(table(out, "/ranks")["process"]) == set(range(min(n, 7))), n


def test_threads_parse_and_analyse_plain_traces_identically():
    # Plain .json of 20 MB: above the 16 MiB below which files parse
    # serially, and above the 32768 events below which analyses run on one
    # thread.
    d = tmpdir()
    subprocess.run([TRACEGEN, "-o", d, "--ranks", "2", "--size-mb", "20"], check=True)
    serial, _ = analyse(d, extra=["--threads", "1", "--detail"])
    base = all_tables(serial)
    assert len(base["ranks"]) == 2 and min(base["ranks"]["events"]) > 32768
    for threads in ("2", "3", "0"):
        out, _ = analyse(d, extra=["--threads", threads, "--detail"])
        assert_same_tables(base, all_tables(out), f"--threads {threads}")
        if threads != "0":
            assert list(table(out, "/ranks")["threads"]) == [int(threads)] * 2
    run(["--threads", "-1", d], expect=2)


def test_automatic_threads_follow_the_cpus_a_process_may_use():
    # mpirun binds each of up to two processes to one core unless told
    # otherwise (then one thread each, whatever the node has); unbound, one
    # process may use every CPU it is allowed, and two share them.
    d = generated(ranks=2, size_mb=0.05)
    cpus = len(os.sched_getaffinity(0))
    launches = [([], 1, 1), (["--bind-to", "none"], 1, cpus),
                (["--bind-to", "none"], 2, max(1, cpus // 2))]
    for options, processes, threads in launches:
        out, _ = analyse(d, processes=processes, mpirun_options=options)
        got = list(table(out, "/ranks")["threads"])
        assert got == [threads] * 2, (options, processes, got)


def test_lone_processes_started_together_are_silent_and_agree():
    # Processes started without mpirun run as isolated singletons, which
    # share Open MPI's session directory; the first to finish removes it,
    # which once made MPI-IO print an error in the others.  Eight at once,
    # three rounds: all succeed, print nothing and write what mpirun does.
    d = generated(ranks=2, size_mb=0.05)
    reference, _ = analyse(d)
    want = table(reference, "/kernels")
    work = tmpdir()
    for round_ in range(3):
        outs = [os.path.join(work, f"r{round_}-{i}.h5") for i in range(8)]
        procs = [subprocess.Popen([HTA_MPI, "-q", "-o", out, d], env=MPI_ENV,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for out in outs]
        for out, proc in zip(outs, procs):
            stdout, stderr = proc.communicate(timeout=300)
            assert proc.returncode == 0 and stdout == "" and stderr == "", \
                (round_, proc.returncode, stdout, stderr)
            assert table(out, "/kernels").equals(want), out


def test_lone_process_analyses_its_first_trace_during_mpi_start_up():
    # A process started alone analyses its first trace while MPI_Init runs
    # and adopts the rows, unless HTA_MPI_NO_HEAD_START is set; processes
    # launched by mpirun start none.  The tables are the same every way.
    d = generated(ranks=4, size_mb=0.05)
    marker = "(begun during MPI start-up)"
    lone = os.path.join(tmpdir(), "lone.h5")
    p = subprocess.run([HTA_MPI, "-q", "-v", "-o", lone, d], env=MPI_ENV,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stderr.count(marker) == 1, p.stderr
    base = all_tables(lone)
    p = subprocess.run([HTA_MPI, "-q", "-v", "-o", lone + ".off.h5", d],
                       env=dict(MPI_ENV, HTA_MPI_NO_HEAD_START="1"),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and marker not in p.stderr, p.stderr
    assert_same_tables(base, all_tables(lone + ".off.h5"), "without the head start")
    for processes in (1, 2):
        out, p = analyse(d, processes=processes, extra=["-v"])
        assert p.stderr.count("analysed /") == 4 and marker not in p.stderr, p.stderr
        assert_same_tables(base, all_tables(out), f"{processes} processes")


def test_straggler_is_flagged_and_nobody_else_on_compute():
    out, p = analyse(generated(ranks=8, straggler=5), processes=2)
    outliers = table(out, "/outliers")
    compute = outliers[outliers.metric == "compute_time_us"]
    assert list(compute["rank"]) == [5], outliers
    tb = table(out, "/temporal_breakdown").set_index("rank")
    others = tb.drop(index=5)["compute_time_us"]
    assert tb.loc[5, "compute_time_us"] > 1.2 * others.mean(), tb
    # The summary's outliers (one line per rank, worst first) start with
    # rank 5, and it is named as the straggler.
    first_outlier_rank = p.stdout.split("worst metric")[1].splitlines()[1].split()[0]
    assert first_outlier_rank == "5" and "rank 5, score" in p.stdout, p.stdout
    assert "Results:" in p.stdout, p.stdout


def test_no_straggler_flags_no_compute_outlier():
    out, _ = analyse(generated(ranks=8), processes=2)
    outliers = table(out, "/outliers")
    assert outliers[outliers.metric.str.startswith("compute")].empty, outliers


def test_ranks_option_keeps_only_listed_ranks():
    out, _ = analyse(generated(ranks=6), processes=2, extra=["--ranks", "1-2,5"])
    for name in ("/ranks", "/temporal_breakdown", "/kernels", "/idle_time"):
        assert sorted(set(table(out, name)["rank"])) == [1, 2, 5], name


def test_hdf5_root_attributes():
    out, _ = analyse(generated(ranks=2), processes=2)
    with h5py.File(out, "r") as f:
        a = f.attrs
        assert a["schema_version"] == 5 and a["time_unit"] == "us"
        assert a["n_ranks"] == 2 and a["n_failed"] == 0 and a["n_processes"] == 2
        assert len(a["trace_paths"]) == 2 and "hta-mpi" in a["command_line"]
        assert a["bins"] == 30 and abs(a["duration_ratio"] - 0.8) < 1e-12


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
