"""/critical_path and /critical_path_events: HTA's critical_path_analysis
summary per ProfilerStep on the real traces (expected/*/extra/
critical_path_summary.csv, within 1 percentage point), and hand-built traces
whose bound is known by construction: a slow data-loader step, a GPU step
joined by a sync after every step, and a launch-bound step of tiny kernels
each waited for."""
import os

import numpy as np
import pandas as pd

from common import TRACES, analyse, table, tmpdir
from handbuilt import write_ranks
from kineto_convert import to_cupti_csv, to_nsys_sqlite
from critical_path_traces import (data_loader_step, launch_bound_step, steps_trace,
                                       synced_step)

BOUNDS = ["cpu_bound", "data_loading", "gpu_compute_bound", "gpu_communication_bound",
          "gpu_kernel_kernel_overhead", "gpu_kernel_launch_overhead"]
HTA_FOLDERS = ["alexnet", "critical_path_event_sync_multi_stream", "critical_path_simple_add",
               "nccl_data", "negative_queue", "trace_filter"]


def check_against_hta(folder):
    out, _ = analyse(os.path.join(TRACES, "hta", folder), extra=["--critical-path"])
    got = table(out, "critical_path")
    exp = pd.read_csv(os.path.join(TRACES, "expected", folder, "extra",
                                   "critical_path_summary.csv"))
    exp = exp[exp.bound_by.notna()]
    exp["step"] = exp.step.fillna(-1).astype(int)
    steps = sorted(set(zip(exp["rank"], exp.step)))
    assert sorted(zip(got["rank"], got.step)) == steps, (folder, got[["rank", "step"]], steps)
    for rank, step in steps:
        row = got[(got["rank"] == rank) & (got.step == step)].iloc[0]
        assert row.graph_ok == 1 and row.path_us > 0, (folder, row)
        want = exp[(exp["rank"] == rank) & (exp.step == step)].set_index("bound_by").value
        for b in BOUNDS:
            assert abs(row[f"{b}_pct"] - want.get(b, 0.0)) < 1.0, (folder, rank, step, b,
                                                                   row[f"{b}_pct"], want)
        shares = sum(row[f"{b}_pct"] for b in BOUNDS)
        assert abs(shares - 100.0) < 1e-6, (folder, shares)
        assert row.bound_by == want.idxmax(), (folder, row.bound_by, want)
    # The segments: at most 10 per step, longest first, within the path.
    seg = table(out, "critical_path_events")
    for (rank, step), g in seg.groupby(["rank", "step"]):
        assert 1 <= len(g) <= 10 and list(g.position) == list(range(1, len(g) + 1))
        assert np.all(np.diff(g.time_us.values) <= 0)
        path = got[(got["rank"] == rank) & (got.step == step)].path_us.iloc[0]
        assert g.time_us.sum() <= path + 1e-6
    return out


def check_known_chains():
    d = write_ranks({0: steps_trace(data_loader_step), 1: steps_trace(synced_step),
                     2: steps_trace(launch_bound_step), 3: steps_trace(synced_step)})
    out, p = analyse(d, processes=2, extra=["--critical-path"])
    cp = table(out, "critical_path").set_index(["rank", "step"])
    assert sorted(cp.index) == [(r, s) for r in range(4) for s in (1, 2, 3)], cp.index
    # Rank 0: step 2's path is the 60 ms loader and the 5 ms op.
    r0 = cp.loc[(0, 2)]
    assert r0.bound_by == "data_loading", r0
    assert abs(r0.data_loading_us - 60_000) < 1e-6, r0
    assert abs(r0.cpu_bound_us - 5_000) < 1e-6, r0
    for s in (1, 3):
        assert cp.loc[(0, s)].bound_by == "cpu_bound", cp.loc[(0, s)]
    # Rank 1: launch (15 us before the kernel starts), the 40 ms kernel, the sync.
    for s, r in ((1, 1), (2, 1), (3, 1), (2, 3)):
        r1 = cp.loc[(r, s)]
        assert r1.bound_by == "gpu_compute_bound", r1
        assert abs(r1.gpu_compute_bound_us - 40_000) < 1e-6, r1
        assert abs(r1.gpu_kernel_launch_overhead_us - 25) < 1e-6, r1
    # Rank 2: each of 200 rounds is 40 us of launch delay and 1 us of kernel.
    for s in (1, 2, 3):
        r2 = cp.loc[(2, s)]
        assert r2.bound_by == "gpu_kernel_launch_overhead", r2
        assert abs(r2.gpu_kernel_launch_overhead_us - 200 * 40) < 1e-6, r2
        assert abs(r2.gpu_compute_bound_us - 200 * 1) < 1e-6, r2
    seg = table(out, "critical_path_events")
    top = seg[(seg["rank"] == 0) & (seg.step == 2) & (seg.position == 1)].iloc[0]
    assert top["name"].startswith("enumerate(DataLoader)") and top.bound_by == "data_loading"
    assert abs(top.time_us - 60_000) < 1e-6
    # Rank metrics and the summary's list of ranks bound differently.
    m = table(out, "rank_metrics")
    cpu_pct = m[(m.metric == "critical_path_cpu_bound_pct")].set_index("rank").value
    assert cpu_pct[2] < 5 and cpu_pct[0] > 5, cpu_pct
    assert cpu_pct[1] < 1 and cpu_pct[3] < 1, cpu_pct
    assert ("step 2: gpu_compute_bound on 2 of 4 ranks; bound differently: rank 0 "
            "(data_loading) rank 2 (gpu_kernel_launch_overhead)") in p.stdout, p.stdout
    assert "3 steps, 3 with ranks bound differently" in p.stdout, p.stdout


def check_step_regex():
    """Steps named by --step-regex (NVTX ranges of an Nsight export, records
    of user_annotation.csv) are the critical path's steps; without it the
    path covers the whole trace."""
    src = write_ranks({0: steps_trace(synced_step, step_name="iteration {}")})
    forms = tmpdir()
    to_nsys_sqlite(os.path.join(src, "rank-0.json"), os.path.join(forms, "rank-0.sqlite"))
    csv_dir = os.path.join(tmpdir(), "rank-0")
    to_cupti_csv(os.path.join(src, "rank-0.json"), csv_dir)
    for inputs in (forms, csv_dir):
        out, _ = analyse(inputs, extra=["--critical-path", "--step-regex", "^iteration [0-9]+$"])
        cp = table(out, "critical_path").set_index("step")
        assert list(cp.index) == [1, 2, 3], (inputs, cp)
        for s in (1, 2, 3):
            row = cp.loc[s]
            assert abs(row.start_us - (1_000_000 + (s - 1) * 100_000)) < 1e-6, (inputs, row)
            assert row.bound_by == "gpu_compute_bound", (inputs, row)
            assert abs(row.gpu_compute_bound_us - 40_000) < 1e-6, (inputs, row)
        out, _ = analyse(inputs, extra=["--critical-path"])
        assert list(table(out, "critical_path").step) == [-1], inputs


def main():
    for folder in HTA_FOLDERS:
        check_against_hta(folder)
    check_known_chains()
    check_step_regex()
    print("ok")


main()
