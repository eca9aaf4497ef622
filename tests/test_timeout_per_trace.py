"""--timeout-per-trace (README, "Exit codes"): a trace that takes longer
than the limit to read fails alone, with its file and byte offset, and
every other rank's results are still written.  The limit is wall-clock
time, so this case runs alone (RUN_SERIAL): a case beside it on the same
cores could hold up even the small traces' reads past the limit."""
import os
import re
import shutil
import subprocess

from common import TRACEGEN, analyse, main, table, trace_rows
from handbuilt import gpu_kernel, write_ranks


def test_timeout_per_trace_fails_the_slow_trace_only():
    # Small good ranks, parsed in well under a millisecond, so that only the
    # 200 MB one can reach a 0.05 s limit on a machine not overloaded.
    d = write_ranks({r: [gpu_kernel("k", 100, 10 + r), gpu_kernel("k", 200, 20)] for r in (0, 1)})
    subprocess.run([TRACEGEN, "-o", os.path.join(d, "big"), "--ranks", "1", "--first-rank", "7",
                    "--size-mb", "200"], check=True, capture_output=True)
    os.rename(os.path.join(d, "big", "rank-7.json"), os.path.join(d, "rank-7.json"))
    os.rmdir(os.path.join(d, "big"))
    try:
        check_timeout_per_trace(d)
    finally:
        shutil.rmtree(d)                   # 200 MB


def check_timeout_per_trace(d):
    for processes in (1, 2):    # the slow trace beside the good ones, and on its own process
        out, p = analyse(d, processes=processes, extra=["--timeout-per-trace", "0.05"], expect=1)
        ranks = trace_rows(out)
        bad = ranks[ranks.file.str.endswith("rank-7.json")].iloc[0]
        assert bad.status == "failed" and re.fullmatch(
            re.escape(f"{d}/rank-7.json: timed out after 0.05 s (--timeout-per-trace) at byte ") + r"\d+",
            bad.error), bad.error
        assert f"hta-mpi: {bad.error}\n" in p.stderr, p.stderr
        assert sorted(ranks[ranks.status == "ok"]["rank"]) == [0, 1], ranks
        kernels = table(out, "/kernels").set_index("rank")
        assert list(kernels.sum_us) == [30.0, 31.0], kernels
    # Without the limit the same trace is analysed.
    out, _ = analyse(d, processes=2)
    assert list(trace_rows(out).status) == ["ok", "ok", "ok"]


if __name__ == "__main__":
    main([test_timeout_per_trace_fails_the_slow_trace_only])
