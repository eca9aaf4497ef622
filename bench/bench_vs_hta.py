#!/usr/bin/python3
"""hta-mpi against HTA's own timings on the real traces (not a test).

HTA 0.6.1's wall-clock seconds per call, measured on a 2-core machine of this
type, are in ../shared/traces/expected/<folder>/timings.json: loading the
trace plus every get_* call.  This runs hta-mpi (one process, every analysis)
on the same folders and reports, best of 3, both its whole wall time
(including MPI start-up and writing the HDF5 file) and the time it spent
parsing and analysing (/ranks parse_seconds + analysis_seconds), and the
ratio of HTA's total to each.  A lone process begins its first trace while
MPI starts (docs/design.md), on the core MPI_Init leaves it, which makes
the wall time shorter but that work slower; so the work is measured in
separate runs with HTA_MPI_NO_HEAD_START=1, once MPI is up.

    bench/bench_vs_hta.py [BUILD_DIR] [TRACES_DIR]"""
import json
import os
import subprocess
import sys
import tempfile
import time

import h5py

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
TRACES = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "../shared/traces")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
ENV_AFTER_MPI_INIT = dict(ENV, HTA_MPI_NO_HEAD_START="1")
out = os.path.join(tempfile.mkdtemp(), "r.h5")

print("| folder | MB (json) | HTA s (load + all calls) | hta-mpi wall s | ratio | hta-mpi parse+analysis s | ratio |")
print("|---|---|---|---|---|---|---|")
for folder in sorted(os.listdir(os.path.join(TRACES, "expected"))):
    timings = os.path.join(TRACES, "expected", folder, "timings.json")
    if not os.path.exists(timings):
        continue
    hta = sum(json.load(open(timings)).values())
    best_wall = best_work = None
    command = [os.path.join(BUILD, "hta-mpi"), "-q", "--force", "-o", out,
               os.path.join(TRACES, "hta", folder)]
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run(command, env=ENV, check=True)
        wall = time.perf_counter() - t0
        subprocess.run(command, env=ENV_AFTER_MPI_INIT, check=True)
        with h5py.File(out) as f:
            ranks = f["ranks"][()]
            work = float(sum(ranks["parse_seconds"]) + sum(ranks["analysis_seconds"]))
            mb = float(sum(ranks["json_bytes"])) / 1e6
        best_wall = wall if best_wall is None else min(best_wall, wall)
        best_work = work if best_work is None else min(best_work, work)
    print(f"| {folder} | {mb:.1f} | {hta:.3f} | {best_wall:.3f} | {hta / best_wall:.1f}x "
          f"| {best_work:.4f} | {hta / best_work:.0f}x |")
