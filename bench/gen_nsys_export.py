"""Writes a synthetic Nsight Systems SQLite export for bench_inputs.sh:
KERNELS kernels on 4 streams, as many cudaLaunchKernel runtime calls, a
copy every 10 kernels and an NVTX step every 1000, with the tables and
columns of tests/kineto_convert.py (the documented export schema).

    python3 bench/gen_nsys_export.py OUT.sqlite KERNELS
"""
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import kineto_convert as kc  # noqa: E402

NAMES = 200


def main(path, kernels):
    db = kc.create_nsys_database(path)
    strings = kc.Strings(db)
    names = [strings(f"void kernel_{i}<float, {i % 7}>(float*, int, at::Tensor const&)")
             for i in range(NAMES)]
    launch = strings("cudaLaunchKernel_v7000")
    step = 5000   # ns between launches

    def kernel_rows():
        for i in range(kernels):
            t = 1_000_000 + i * step
            yield (t + 3000, t + 7000, 0, 1, 7 + i % 4, i, 1, names[i % NAMES], names[i % NAMES],
                   names[i % NAMES], 0, 0, 32, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0, i, 0, None, 0, None)

    def runtime_rows():
        for i in range(kernels):
            t = 1_000_000 + i * step
            yield (t, t + 2000, 0, 1, i, launch, 0, 0)

    def memcpy_rows():
        for i in range(0, kernels, 10):
            t = 1_000_000 + i * step + 4000
            yield (t, t + 1000, 0, 1, 20, kernels + i, 1, 1 << 20, 1, 0, 2, 3, 0, 0, 0, 0, 0, None)

    def nvtx_rows():
        for i in range(0, kernels, 1000):
            t = 1_000_000 + i * step
            yield (t, t + 1000 * step, 59, f"ProfilerStep#{i // 1000}")

    db.executemany(kc.INSERT_KERNEL, kernel_rows())
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?,?)",
                   runtime_rows())
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES "
                   "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", memcpy_rows())
    db.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text) VALUES (?,?,?,?)",
                   nvtx_rows())
    db.commit()
    db.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
