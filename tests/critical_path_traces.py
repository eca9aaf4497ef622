"""Hand-built traces whose critical path is known by construction: steps of
a slow data loader, of one long kernel waited for by a sync, and of tiny
kernels each launched 40 us before it runs and waited for."""
from handbuilt import NO_STREAM


def cpu(name, ts, dur, tid=1, cat="cpu_op", corr=None, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": 100, "tid": tid, "ts": ts, "dur": dur,
         "args": dict(args)}
    if corr is not None:
        e["args"]["correlation"] = corr
    return e


def kernel(name, ts, dur, corr, stream=7):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts,
            "dur": dur, "args": {"stream": stream, "correlation": corr, "device": 0}}


def sync_event(name, ts, dur, corr, stream):
    return {"ph": "X", "cat": "cuda_sync", "name": name, "pid": 0, "tid": stream, "ts": ts,
            "dur": dur, "args": {"stream": stream, "correlation": corr, "device": 0,
                                 "cuda_sync_kind": name}}


def steps_trace(build_step, n_steps=4, step_us=100_000, step_name="ProfilerStep#{}"):
    """Steps 1..n_steps (the last is cut off by the step filter as in HTA),
    annotations named step_name.format(step); build_step(step, start,
    events, next_corr) appends a step's events."""
    events, corr = [], [1]

    def next_corr():
        corr[0] += 1
        return corr[0]

    for s in range(n_steps):
        start = 1_000_000 + s * step_us
        events.append(cpu(step_name.format(s + 1), start, step_us - 10, cat="user_annotation"))
        build_step(s + 1, start, events, next_corr)
    return events


def data_loader_step(step, start, events, next_corr):
    """A forward op with one short kernel; step 2's data loader takes 60 ms."""
    load = 60_000 if step == 2 else 1_000
    events.append(cpu("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                      start + 10, load, cat="user_annotation"))
    t = start + 20 + load
    events.append(cpu("aten::mm", t, 5_000))
    c = next_corr()
    events.append(cpu("cudaLaunchKernel", t + 100, 10, cat="cuda_runtime", corr=c))
    events.append(kernel("gemm_kernel", t + 120, 50, c))


def synced_step(step, start, events, next_corr):
    """One 40 ms kernel, then cudaDeviceSynchronize until it ends."""
    c = next_corr()
    events.append(cpu("aten::mm", start + 10, 30))
    events.append(cpu("cudaLaunchKernel", start + 15, 10, cat="cuda_runtime", corr=c))
    events.append(kernel("gemm_kernel", start + 40, 40_000, c))
    c2 = next_corr()
    events.append(cpu("cudaDeviceSynchronize", start + 50, 40_000, cat="cuda_runtime", corr=c2))
    events.append(sync_event("Context Sync", start + 40_045, 2, c2, NO_STREAM))
    events.append(cpu("aten::add", start + 40_100, 20))


def launch_bound_step(step, start, events, next_corr):
    """200 tiny kernels, each launched 40 us before it runs and waited for
    with cudaStreamSynchronize before the next launch."""
    t = start + 10
    for _ in range(200):
        c = next_corr()
        events.append(cpu("cudaLaunchKernel", t, 5, cat="cuda_runtime", corr=c))
        events.append(kernel("tiny_kernel", t + 40, 1, c))
        c2 = next_corr()
        events.append(cpu("cudaStreamSynchronize", t + 6, 36, cat="cuda_runtime", corr=c2))
        events.append(sync_event("Stream Sync", t + 41, 1, c2, 7))
        t += 45
