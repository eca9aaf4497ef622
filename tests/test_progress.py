"""Progress on stderr: the root reports "analysed k/N traces" for files
finished on any process.  With stderr not a terminal (a pipe here), one
line each time another tenth of the files is done, so the line numbers are
known exactly; on a terminal (a pty, hta-mpi started directly because
mpirun hands its processes a pipe for stderr) one line rewritten in place;
nothing with -q.  Failed traces count as done; idle processes (more
processes than files) do not hang the run."""
import os
import pty
import re
import subprocess

from common import (HTA_MPI, MPI_ENV, TRACEGEN, analyse, main, tmpdir)

LINE = re.compile(r"^hta-mpi: analysed (\d+)/(\d+) traces(?:, (\d+) failed)? \((\d+)%\), "
                  r"(\d+\.\d) MB/s$")


def generated(ranks):
    d = tmpdir()
    subprocess.run([TRACEGEN, "-o", d, "--ranks", str(ranks), "--size-mb", "0.1", "--gzip"],
                   check=True)
    return d


def progress_lines(stderr, failures=False):
    """(files done, files, percent) of each line; with failures, (files
    analysed, files failed) as well."""
    lines = [l for l in stderr.splitlines() if "analysed" in l and "traces" in l]
    out = []
    for l in lines:
        m = LINE.match(l)
        assert m, f"malformed progress line: {l!r}"
        ok, total, failed, pct = (int(g or 0) for g in m.groups()[:4])
        out.append((ok + failed, total, pct) + ((ok, failed) if failures else ()))
    return out


def first_k_per_decile(n):
    """The k at which each new tenth of n files is first reached."""
    ks, last = [], 0
    for k in range(1, n + 1):
        if k * 10 // n > last:
            ks.append(k)
            last = k * 10 // n
    return ks


def test_one_line_per_tenth_across_processes():
    for n, processes in ((20, 3), (25, 4), (7, 2)):
        _, p = analyse(generated(n), processes=processes)
        got = progress_lines(p.stderr)
        want = [(k, n, k * 100 // n) for k in first_k_per_decile(n)]
        assert got == want, f"{n} traces on {processes} processes: {got} != {want}"
        assert len(got) <= 10 and got[-1][:2] == (n, n)


def test_quiet_prints_no_progress():
    _, p = analyse(generated(12), processes=3, extra=["-q"])
    assert "analysed" not in p.stderr and p.stdout == "", (p.stdout, p.stderr)


def test_failed_traces_and_idle_processes():
    d = generated(2)
    with open(os.path.join(d, "rank-2.json"), "w") as f:
        f.write('{"traceEvents": [')
    _, p = analyse(d, processes=5, expect=1)
    lines = progress_lines(p.stderr, failures=True)
    assert [line[:3] for line in lines] == [(1, 3, 33), (2, 3, 66), (3, 3, 100)], p.stderr
    # The failed file counts as failed, not analysed.
    assert lines[-1][3:] == (2, 1), p.stderr


def run_in_terminal(args):
    """Runs hta-mpi directly (one process) with stderr on a pseudo-terminal."""
    master, slave = pty.openpty()
    p = subprocess.Popen([HTA_MPI] + args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=slave, env=MPI_ENV)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert p.wait(timeout=300) == 0, out
    return out.decode()


def test_terminal_line_is_updated_in_place():
    d = generated(15)
    out = run_in_terminal(["-o", os.path.join(tmpdir(), "r.h5"), d])
    updates = out.split("\r")[1:]
    assert updates[0].startswith("hta-mpi: analysed 1/15 traces, "), repr(out)
    assert re.fullmatch(r"hta-mpi: analysed 15/15 traces, \d+\.\d MB/s\x1b\[K", updates[-2]), \
        repr(out)
    assert updates[-1] == "\n", repr(out)  # the pty turns the final \n into \r\n
    assert "%)" not in out, repr(out)  # no per-tenth lines on a terminal
    quiet = run_in_terminal(["-q", "-o", os.path.join(tmpdir(), "r.h5"), d])
    assert quiet == "", repr(quiet)


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
