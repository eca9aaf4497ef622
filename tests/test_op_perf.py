"""/op_perf, the GEMM/attention rank metrics and the "slower GPU" straggler
reason: on `hta-tracegen --flops-truth` traces every value against its
closed form (the shapes of tools/tracegen_flops.c), the peaks from the
built-in table, --gpu-spec and an unknown device; on a DDP job whose rank
3 runs the same GEMMs 1.25x slower; and on the MI300X trace, per op shape
FLOPs and TFLOPS computed here from the raw JSON, independently."""
import collections
import decimal
import gzip
import json
import math
import os
import subprocess

from common import (TRACEGEN, analyse, generated, run, table, tmpdir, trace_dir, main)

STEPS = 3          # the last is left out by the step filter
CALLS = STEPS - 1
ROUND_SPEC = {"name": "round", "mem_bw_gbps": 4000,
              "max_achievable_tflops": {"matrix_bf16": 1000, "matrix_fp16": 500,
                                        "matrix_fp32": 100, "matrix_fp8": 2000}}
PEAK = {"bf16": 1000e12, "fp16": 500e12, "fp32": 100e12}
BANDWIDTH = 4e12

# (name, input_dims) -> (kind, dtype, FLOPs, bytes, kernel seconds) of one
# call, written out from the formulas of docs/definitions.md.
CLOSED_FORMS = {
    ("aten::mm", "[[1000,1000],[1000,1000]]"):
        ("gemm", "bf16", 2 * 1000**3, (3 * 1000**2) * 2, 4.000e-6),
    ("aten::mm", "[[1000,1000],[1000,1]]"):
        ("gemm", "bf16", 2 * 1000**2, (1000**2 + 1000 + 1000) * 2, 1.002e-6),
    ("aten::addmm", "[[1000],[1000,1000],[1000,1000],[],[]]"):
        ("gemm", "bf16", 2 * 1000**3 + 1000**2, (3 * 1000**2 + 1000) * 2, 4.002e-6),
    ("aten::bmm", "[[8,500,1000],[8,1000,250]]"):
        ("gemm", "fp32", 8 * 2 * 500 * 250 * 1000, 8 * (500 * 1000 + 1000 * 250 + 500 * 250) * 4,
         40e-6),
    ("aten::cudnn_convolution", "[[10,100,40,40],[200,100,3,3],[],[],[],[],[],[]]"):
        ("conv", "fp16", 2 * (100 * 3 * 3) * (10 * 200 * 20 * 20),
         (10 * 100 * 40 * 40 + 200 * 100 * 9 + 10 * 200 * 20 * 20) * 2, 5.76e-6),
    ("aten::_scaled_dot_product_flash_attention", "[[2,8,1000,125],[2,8,1000,125],[2,8,1000,125],[],[],[],[]]"):
        ("attention", "bf16", 2 * 8 * (2 * 1000 * 1000 * 125 + 2 * 1000 * 1000 * 125) / 2,
         4 * 2 * 8 * 1000 * 125 * 2, 8e-6),
}

FLOPS_DIR = None
OUT = None
STDOUT = None


def flops_traces(*extra, ranks=2):
    d = os.path.join(tmpdir(), "traces")
    subprocess.run([TRACEGEN, "--flops-truth", "-o", d, "--ranks", str(ranks), "--steps",
                    str(STEPS)] + list(extra), check=True)
    return d


def spec_file(spec):
    path = os.path.join(tmpdir(), "spec.json")
    with open(path, "w") as f:
        f.write(spec if isinstance(spec, str) else json.dumps(spec))
    return path


def setup():
    global FLOPS_DIR, OUT, STDOUT
    FLOPS_DIR = flops_traces()
    OUT, p = analyse(FLOPS_DIR, processes=2, extra=["--gpu-spec", spec_file(ROUND_SPEC)])
    STDOUT = p.stdout


def close(a, b, rel=1e-9):
    return math.isclose(a, b, rel_tol=rel) or (math.isnan(a) and math.isnan(b))


def test_every_value_is_its_closed_form():
    t = table(OUT, "/op_perf")
    for rank in (0, 1):
        rows = t[t["rank"] == rank]
        sized = rows[rows.unsized_calls == 0]
        assert sorted(zip(sized.name, sized.input_dims)) == sorted(CLOSED_FORMS), list(sized.name)
        for _, row in sized.iterrows():
            kind, dtype, flops, nbytes, seconds = CLOSED_FORMS[(row["name"], row.input_dims)]
            compute, memory = flops / PEAK[dtype], nbytes / BANDWIDTH
            want = {"calls": CALLS, "flops": CALLS * flops, "bytes": CALLS * nbytes,
                    "gpu_time_us": CALLS * seconds * 1e6, "tflops": flops / seconds / 1e12,
                    "tbps": nbytes / seconds / 1e12, "intensity": flops / nbytes,
                    "peak_tflops": PEAK[dtype] / 1e12, "peak_tbps": 4.0,
                    "roofline_time_us": CALLS * max(compute, memory) * 1e6,
                    "pct_roofline": 100 * max(compute, memory) / seconds}
            for col, value in want.items():
                assert close(float(row[col]), value), (row["name"], col, row[col], value)
            assert (row["kind"], row["dtype"]) == (kind, dtype), (row["name"], row["kind"])
            assert row.bound == ("compute" if compute >= memory else "memory"), row["name"]
            assert row.peaks_of == "--gpu-spec round", row.peaks_of
    # The round rates the shapes were chosen for.
    mm = t[(t["rank"] == 0) & (t["name"] == "aten::mm")].set_index("input_dims")
    assert mm.loc["[[1000,1000],[1000,1000]]", "tflops"] == 500
    assert mm.loc["[[1000,1000],[1000,1]]", "bound"] == "memory"
    assert close(mm.loc["[[1000,1000],[1000,1]]", "tbps"], 2.0)


def test_unsized_and_wrappers():
    """aten::_scaled_mm is counted and named with NaN work; aten::linear,
    which launches nothing itself, has no row (its addmm carries the work)."""
    t = table(OUT, "/op_perf")
    scaled = t[t["name"] == "aten::_scaled_mm"]
    assert list(scaled.unsized_calls) == [CALLS, CALLS], scaled
    assert scaled.flops.isna().all() and scaled.tflops.isna().all()
    assert close(float(scaled.gpu_time_us.iloc[0]), CALLS * 3.0)
    assert "aten::linear" not in set(t["name"])


def test_rank_metrics():
    """gemm_tflops = all GEMM FLOPs / all GEMM time; gemm_pct_peak = the
    GEMMs' time at peak / their time; attention_tflops."""
    m = table(OUT, "/rank_metrics")
    gemms = [v for k, v in CLOSED_FORMS.items() if v[0] == "gemm"]
    flops = sum(g[2] for g in gemms)
    seconds = sum(g[4] for g in gemms)
    at_peak = sum(g[2] / PEAK[g[1]] for g in gemms)
    for rank in (0, 1):
        got = m[m["rank"] == rank].set_index("metric")["value"]
        assert close(got["gemm_tflops"], flops / seconds / 1e12), got["gemm_tflops"]
        assert close(got["gemm_pct_peak"], 100 * at_peak / seconds), got["gemm_pct_peak"]
        assert close(got["attention_tflops"], 500.0), got["attention_tflops"]


def test_summary_lists_the_five_longest_shapes():
    """The summary's five op shapes with the most GPU time over the ranks,
    with their median TFLOPS and share of the roofline."""
    lines = STDOUT.splitlines()
    start = lines.index("GEMM, convolution and attention ops with the most GPU time (/op_perf):")
    rows = lines[start + 2:start + 7]
    by_time = sorted(CLOSED_FORMS.items(), key=lambda kv: -kv[1][4])[:5]
    for line, ((name, dims), (kind, dtype, flops, nbytes, seconds)) in zip(rows, by_time):
        compute, memory = flops / PEAK[dtype], nbytes / BANDWIDTH
        fields = line.split()
        assert fields[0] == name, (line, name)
        assert fields[-4:] == ["2", f"{2 * CALLS * seconds * 1e3:.2f}",
                               f"{flops / seconds / 1e12:.1f}",
                               f"{100 * max(compute, memory) / seconds:.1f}"], line
    assert not lines[start + 7].strip(), lines[start + 7]


def test_steps_traced_flops_and_utilisation():
    """/steps: each step's sized FLOPs, and their time at peak over the
    step's CPU time (990 us) in percent."""
    sized = [v for k, v in CLOSED_FORMS.items()]
    flops = sum(v[2] for v in sized)
    at_peak = sum(v[2] / PEAK[v[1]] for v in sized)
    s = table(OUT, "/steps")
    assert len(s) == 2 * CALLS, s
    for _, row in s.iterrows():
        assert close(row.step_time_us, 990.0), row
        assert close(row.traced_flops, flops), row
        assert close(row.traced_mfu_pct, 100 * at_peak / 990e-6), row


def test_built_in_peaks_and_unknown_device():
    out, _ = analyse(FLOPS_DIR)
    t = table(out, "/op_perf")
    row = t[(t["name"] == "aten::mm") & (t.input_dims == "[[1000,1000],[1000,1000]]")].iloc[0]
    assert row.peaks_of == "built-in H100 SXM", row.peaks_of
    assert (row.peak_tflops, row.peak_tbps) == (989.5, 3.35), (row.peak_tflops, row.peak_tbps)
    assert close(row.pct_roofline, 100 * (2e9 / 989.5e12) / 4e-6)
    for device in ("Mystery GPU", ""):
        out, p = analyse(flops_traces("--device", device))
        assert (f'unknown device "{device}": no peaks (rank 0): give them with --gpu-spec FILE'
                in p.stdout), p.stdout
        t = table(out, "/op_perf")
        assert (t.peaks_of == f'unknown device "{device}": no peaks').all(), set(t.peaks_of)
        sized = t[t.unsized_calls == 0]
        assert sized.pct_roofline.isna().all() and sized.peak_tflops.isna().all()
        assert (sized.bound == "").all()
        assert sized.tflops.notna().all(), "the achieved rates remain"
        m = table(out, "/rank_metrics")
        assert "gemm_pct_peak" not in set(m.metric) and "gemm_tflops" in set(m.metric)
        s = table(out, "/steps")
        assert s.traced_mfu_pct.isna().all() and (s.traced_flops > 0).all(), s


def test_gpu_spec_errors():
    for spec, what in ((None, "cannot read"), ("{oops", "not a JSON object"),
                       ('{"name": "x"}', "no max_achievable_tflops")):
        path = os.path.join(tmpdir(), "absent.json") if spec is None else spec_file(spec)
        p = run(["--gpu-spec", path, "-o", os.path.join(tmpdir(), "r.h5"), FLOPS_DIR], expect=2)
        assert path in p.stderr and what in p.stderr, p.stderr


def test_slower_gpu_is_flagged_on_gemm_tflops():
    """The same GEMMs 1.25x slower on rank 3 of 8: gemm_tflops is 0.8x the
    others' and flagged."""
    out, _ = analyse(flops_traces("--slow-rank", "3:1.25", ranks=8), processes=2)
    m = table(out, "/rank_metrics")
    g = m[m.metric == "gemm_tflops"].set_index("rank")["value"]
    assert close(g[3] / g[0], 0.8, rel=1e-3), g
    assert len(set(g.drop(3))) == 1, g
    o = table(out, "/outliers")
    assert 3 in set(o[o.metric == "gemm_tflops"]["rank"]), o[o.metric == "gemm_tflops"]
    # Per op shape across ranks: the same work, rank 3 at 0.8x the median.
    x = table(out, "/cross_rank/op_perf")
    assert sorted(zip(x.name, x.input_dims)) == sorted(CLOSED_FORMS), list(x.name)
    for _, row in x.iterrows():
        kind, dtype, flops, nbytes, seconds = CLOSED_FORMS[(row["name"], row.input_dims)]
        assert (row.n_ranks, row.calls, row.slowest_rank) == (8, 8 * CALLS, 3), row
        assert close(row.flops, 8 * CALLS * flops), row
        assert close(row.tflops_max, flops / seconds / 1e12, rel=1e-3), row
        assert close(row.tflops_median, row.tflops_max), row
        assert close(row.slowest_ratio, 0.8, rel=2e-3), row


def test_straggler_reason_says_slower_gpu():
    """A DDP job whose rank 3 computes 1.25x slower arrives last at the
    all-reduces; its GEMM rate says why: a slower GPU, not more work."""
    out, _ = analyse(generated(ranks=4, extra=["--steps", "4", "--straggler", "3:1.25"]),
                     processes=2)
    s = table(out, "/stragglers").set_index("rank")
    assert s.loc[3, "flagged"] == 1, s
    assert s.loc[3, "cause"] == "slower GPU", s.loc[3, "cause"]
    assert "slower GPU: its GEMMs run at" in s.loc[3, "reasons"], s.loc[3, "reasons"]
    for r in (0, 1, 2):
        assert "slower GPU" not in s.loc[r, "reasons"], s.loc[r, "reasons"]


# ---- MI300X: an independent computation from the raw JSON ----------------

def conv_out(x, w, stride, padding, dilation):
    return [x[0], w[0]] + [(x[i] + 2 * padding[i - 2] - dilation[i - 2] * (w[i] - 1) - 1)
                           // stride[i - 2] + 1 for i in range(2, len(x))]


def ints(text, n):
    v = json.loads(text)
    return v * n if len(v) == 1 else v


def prod(v):
    p = 1
    for x in v:
        p *= x
    return p


def call_flops(name, args):
    dims, conc = args["Input Dims"], args.get("Concrete Inputs", [])
    if name == "aten::mm":
        (m, k), (_, n) = dims[0], dims[1]
        return 2 * m * n * k
    if name == "aten::addmm":
        (m, k), (_, n) = dims[1], dims[2]
        return 2 * m * n * k + m * n
    if name == "aten::miopen_convolution":   # input, weight, bias, padding, stride, dilation
        x, w = dims[0], dims[1]
        s = len(x) - 2
        out = conv_out(x, w, ints(conc[4], s), ints(conc[3], s), ints(conc[5], s))
        return 2 * prod(w[1:]) * prod(out) + (prod(out) if dims[2] else 0)
    if name == "aten::convolution_backward":
        dy, w = dims[0], dims[2]
        mask = [m == "True" for m in conc[10].strip("[]").split(", ")]
        per_grad = 2 * prod(w[1:]) * prod(dy)
        return (mask[0] + mask[1]) * per_grad + (prod(dy) if mask[2] else 0)
    return None


def own_kernel_time(events):
    """Each cpu_op call's own GPU time: the union of the GPU events whose
    launch it is the innermost op around on the launch's thread."""
    ops = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "cpu_op":
            ops[(e["pid"], e["tid"])].append(e)
    gpu = {e["args"]["correlation"]: e for e in events
           if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "correlation" in e.get("args", {})}
    spans = collections.defaultdict(list)
    for r in events:
        if r.get("cat") != "cuda_runtime" or r.get("args", {}).get("correlation") not in gpu:
            continue
        inner = [o for o in ops[(r["pid"], r["tid"])]
                 if o["ts"] <= r["ts"] and r["ts"] + r["dur"] <= o["ts"] + o["dur"]]
        if inner:
            op = min(inner, key=lambda o: o["dur"])
            k = gpu[r["args"]["correlation"]]
            spans[id(op)].append((int(k["ts"] * 1000), int((k["ts"] + k["dur"]) * 1000)))
    time_ns = {}
    for key, s in spans.items():
        s.sort()
        total, start, end = 0, None, None
        for a, b in s:
            if end is None or a > end:
                total += (end - start) if end is not None else 0
                start, end = a, b
            else:
                end = max(end, b)
        time_ns[key] = total + (end - start)
    return time_ns


def test_mi300_flops_and_tflops_from_the_raw_json():
    folder = trace_dir("rccl_mi300_rank0")
    path = os.path.join(folder, "resnet_act_checkpoint.json.gz")
    with gzip.open(path) as f:  # exact decimals: times in whole nanoseconds
        events = [e for e in json.load(f, parse_float=decimal.Decimal)["traceEvents"]
                  if e.get("ph") == "X"]
    # The last-step filter: ops starting before the last ProfilerStep does.
    last_step = max(e["ts"] for e in events if e["name"].startswith("ProfilerStep#"))
    times = own_kernel_time(events)
    want = collections.defaultdict(lambda: [0, 0, 0])
    for e in events:
        if e.get("cat") != "cpu_op" or id(e) not in times or e["ts"] >= last_step:
            continue
        flops = call_flops(e["name"], e["args"])
        if flops is None:
            continue
        key = (e["name"], json.dumps(e["args"]["Input Dims"], separators=(",", ":")))
        want[key][0] += 1
        want[key][1] += flops
        want[key][2] += times[id(e)]
    assert len(want) > 20, len(want)
    out, _ = analyse(folder)
    t = table(out, "/op_perf").set_index(["name", "input_dims"])
    assert sorted(t.index) == sorted(want), sorted(set(t.index) ^ set(want))
    for key, (calls, flops, ns) in want.items():
        row = t.loc[key]
        assert row.calls == calls, (key, row.calls, calls)
        assert row.flops == flops, (key, row.flops, flops)
        assert close(row.tflops, flops / (ns * 1e-9) / 1e12, rel=1e-6), (key, row.tflops)
        assert row.peaks_of == "built-in MI300X", row.peaks_of


if __name__ == "__main__":
    main([test_every_value_is_its_closed_form, test_unsized_and_wrappers, test_rank_metrics,
          test_summary_lists_the_five_longest_shapes, test_steps_traced_flops_and_utilisation,
          test_built_in_peaks_and_unknown_device,
          test_gpu_spec_errors,
          test_slower_gpu_is_flagged_on_gemm_tflops, test_straggler_reason_says_slower_gpu,
          test_mi300_flops_and_tflops_from_the_raw_json], setup=setup)
