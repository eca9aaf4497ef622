"""Killing the root while it writes the results (docs/results-format.md: the file is
written under a temporary name and renamed when complete): SIGKILL of the
root hta-mpi while the temporary `.results.h5.tmp.<pid>` exists leaves no
file under the final name, and a rerun with the same arguments succeeds.
The rerun leaves the dead run's temporary alone (docs/robustness.md)."""
import os
import re
import shutil
import signal
import subprocess
import time

from common import (HTA_MPI, MPI_ENV, TRACEGEN, main, table, tmpdir)


def start_run(args):
    return subprocess.Popen(["mpirun", "-n", "2", HTA_MPI] + args, env=MPI_ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def kill_root_while_writing(run, outdir):
    """Polls for the root's temporary and SIGKILLs the process that owns
    it (its pid is in the name); returns the temporary's name."""
    temporary = re.compile(r"\.results\.h5\.tmp\.(\d+)$")
    deadline = time.monotonic() + 600
    while run.poll() is None and time.monotonic() < deadline:
        for name in os.listdir(outdir):
            m = temporary.match(name)
            if m:
                os.kill(int(m.group(1)), signal.SIGKILL)
                return name
        time.sleep(0.002)
    raise AssertionError("the run ended without a temporary file being seen")


def test_sigkill_of_the_root_while_writing_leaves_no_results_file():
    traces = tmpdir()
    # 8 ranks of 20 MB with --detail: the root spends most of a second
    # building and writing the file, so the poll finds the temporary.
    subprocess.run([TRACEGEN, "-o", traces, "--ranks", "8", "--size-mb", "20"], check=True,
                   capture_output=True)
    try:
        kill_and_rerun(traces)
    finally:
        shutil.rmtree(traces)              # 160 MB


def kill_and_rerun(traces):
    outdir = tmpdir()
    out = os.path.join(outdir, "results.h5")
    args = ["-q", "--detail", "-o", out, traces]
    run = start_run(args)
    stale = kill_root_while_writing(run, outdir)
    run.communicate(timeout=600)
    assert run.returncode != 0, run.returncode
    assert os.listdir(outdir) == [stale], os.listdir(outdir)   # nothing under the final name
    rerun = start_run(args)
    rerun.communicate(timeout=600)
    assert rerun.returncode == 0, rerun.returncode
    ranks = table(out, "/ranks")
    assert list(ranks["rank"]) == list(range(8)) and set(ranks.status) == {"ok"}, ranks
    assert len(table(out, "/detail/launches")) > 0
    assert sorted(os.listdir(outdir)) == sorted([stale, "results.h5"]), os.listdir(outdir)


if __name__ == "__main__":
    main([test_sigkill_of_the_root_while_writing_leaves_no_results_file])
