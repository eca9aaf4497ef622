"""/cupti_counters, /cupti_counter_values, /cupti_kernels, /cupti_matching:
HTA's get_cupti_counter_data_with_operators on the real range-profiler trace
(expected/cupti_profiler/extra/cupti_counter_data_rank0.csv: every kernel,
its op stack, every counter), FLOPs as HTA's CUDA_SASS_INSTRUCTION_COUNTER_FLOPS
weigh them, and a hand-built trace where HTA gives nothing (more ranges than
launches, a launch outside every op)."""
import os

import numpy as np
import pandas as pd

from common import TRACES, analyse, table
from handbuilt import write_ranks

SASS = ["ffma", "fmul", "fadd", "hfma", "hmul", "hadd", "dfma", "dmul", "dadd"]


def counter(op):
    return f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum"


def ev(cat, name, ts, dur, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def check_real():
    out, _ = analyse(os.path.join(TRACES, "hta", "cupti_profiler"))
    got = table(out, "cupti_counters")
    exp = pd.read_csv(os.path.join(TRACES, "expected", "cupti_profiler", "extra",
                                   "cupti_counter_data_rank0.csv"))
    assert len(got) == len(exp) == 77, (len(got), len(exp))
    assert list(got.kernel) == list(exp.name)
    assert list(got.top_op) == list(exp.top_level_op)
    assert list(got.bottom_op) == list(exp.bottom_level_op)
    assert list(got.op_stack) == list(exp.op_stack)
    flops = np.zeros(len(exp))
    for op in SASS:
        assert np.array_equal(got[op].values, exp[counter(op)].values.astype(float)), op
        flops += exp[counter(op)].values * (2 if "fma" in op else 1)
    assert np.array_equal(got.flops.values, flops)
    # HTA's ranges are its ts relative to the trace's first event: same gaps.
    assert np.allclose(np.diff(got.ts_us.values), np.diff(exp.ts.values))
    values = table(out, "cupti_counter_values")
    assert len(values) == 77 * 9 and set(values.counter) == {counter(op) for op in SASS}
    kernels = table(out, "cupti_kernels")
    assert kernels["count"].sum() == 77 and len(kernels) == exp.name.nunique()
    assert np.isclose(kernels.flops_sum.sum(), flops.sum())
    top = kernels.set_index("kernel")
    for name, g in exp.groupby("name"):
        want = sum(g[counter(op)].sum() * (2 if "fma" in op else 1) for op in SASS)
        assert top.loc[name, "count"] == len(g) and np.isclose(top.loc[name, "flops_sum"], want)
    m = table(out, "cupti_matching").iloc[0]
    assert (m.ranges, m.launches, m.matched, m.unmatched_ranges, m.unmatched_launches) == \
        (77, 77, 77, 0, 0), m


def check_unmatched():
    events = [
        ev("cpu_op", "aten::mm", 100, 50),
        ev("cpu_op", "aten::addmm", 110, 20),
        ev("cuda_runtime", "cudaLaunchKernel", 115, 5, correlation=7),
        ev("cuda_runtime", "cudaLaunchKernel", 300, 5, correlation=8),  # outside every op
    ]
    for i, (name, ffma, hadd) in enumerate([("gemm", 10, 3), ("add", 0, 4), ("gemm", 5, 0)]):
        events.append(ev("cuda_profiler_range", name, 1000 + 100 * i, 100, tid=0, **{
            counter("ffma"): ffma, counter("hadd"): hadd, "other_counter": 1.5}))
    out, _ = analyse(write_ranks({0: events}))
    got = table(out, "cupti_counters")
    assert list(got.kernel) == ["gemm", "add", "gemm"]
    assert list(got.top_op) == ["aten::mm", "", ""] and list(got.bottom_op) == ["aten::addmm", "", ""]
    assert list(got.launch_correlation) == [7, 8, -1]
    assert list(got.flops) == [23.0, 4.0, 10.0]
    assert np.isnan(got.launch_ts_us.iloc[2])
    assert np.isnan(got.fmul).all()     # a counter the trace does not have
    values = table(out, "cupti_counter_values")
    assert len(values) == 9 and (values[values.counter == "other_counter"].value == 1.5).all()
    k = table(out, "cupti_kernels").set_index("kernel")
    assert k.loc["gemm", "count"] == 2 and k.loc["gemm", "flops_sum"] == 33.0
    m = table(out, "cupti_matching").iloc[0]
    assert (m.ranges, m.launches, m.matched, m.unmatched_ranges, m.unmatched_launches) == \
        (3, 2, 2, 1, 0), m


def check_stacks():
    """Op stacks known by construction: ops on the launch's thread that start
    at or before it and end at or after its end, by start, the longer first
    on equal starts, then in trace order; launches listed out of time
    order, an op ended before, one ending inside the launch, another
    thread's op."""
    events = [
        ev("cpu_op", "outer", 0, 1000),
        ev("cpu_op", "tie_first", 100, 100),
        ev("cpu_op", "same_start_short", 100, 100),
        ev("cpu_op", "same_start_long", 100, 200),
        ev("cpu_op", "ended", 400, 50),
        ev("cpu_op", "ends_inside", 490, 12),
        ev("cpu_op", "other_thread", 0, 3000, tid=2),
        ev("cuda_runtime", "cudaLaunchKernel", 2000, 5, correlation=4),
        ev("cuda_runtime", "cudaLaunchKernel", 500, 5, correlation=2),
        ev("cuda_runtime", "cudaLaunchKernel", 150, 5, correlation=1),
        ev("cuda_runtime", "cudaLaunchKernel", 1500, 5, tid=2, correlation=3),
    ]
    for i in range(4):
        events.append(ev("cuda_profiler_range", f"k{i}", 5000 + 100 * i, 50, tid=0,
                         **{counter("ffma"): i}))
    out, _ = analyse(write_ranks({0: events}))
    got = table(out, "cupti_counters")
    assert list(got.launch_correlation) == [1, 2, 3, 4], got
    assert list(got.op_stack) == [
        "['outer', 'same_start_long', 'tie_first', 'same_start_short']", "['outer']",
        "['other_thread']", "[]"], list(got.op_stack)
    assert list(got.top_op) == ["outer", "outer", "other_thread", ""]
    assert list(got.bottom_op) == ["same_start_short", "outer", "other_thread", ""]


check_real()
check_unmatched()
check_stacks()
print("ok")
