"""Temporal breakdown against HTA 0.6.1's own numbers on every real trace
folder that has them, plus the nanosecond-exact default on fractional ones."""

from common import (
    FRACTIONAL_FOLDERS, INTEGER_FOLDERS, analyse, assert_close, expected, hta_args, main,
    table, tolerances, trace_dir)

COLUMNS = [("idle_time(us)", "idle_time_us"), ("compute_time(us)", "compute_time_us"),
           ("non_compute_time(us)", "non_compute_time_us"), ("kernel_time(us)", "kernel_time_us")]
PCT = ["idle_time_pctg", "compute_time_pctg", "non_compute_time_pctg"]


def check_folder(folder):
    out, _ = analyse(trace_dir(folder), extra=hta_args(folder))
    got = table(out, "/temporal_breakdown").set_index("rank")
    want = expected(folder, "temporal_breakdown.csv").set_index("rank")
    assert list(got.index) == list(want.index), f"{folder}: ranks {list(got.index)}"
    t_abs, p_abs = tolerances(folder)
    for rank in want.index:
        for hta_col, col in COLUMNS:
            assert_close(got.loc[rank, col], want.loc[rank, hta_col], f"{folder} rank {rank} {col}", t_abs)
        for col in PCT:
            assert_close(got.loc[rank, col], want.loc[rank, col], f"{folder} rank {rank} {col}", p_abs)


def make_test(folder):
    def test():
        check_folder(folder)
    test.__name__ = f"test_temporal_{folder}"
    return test


def test_fractional_default_keeps_nanoseconds():
    # Without HTA's rounding the span differs by at most the 1 us HTA moves
    # each end, and compute is larger (HTA shrinks every kernel by up to 2 us).
    for folder in FRACTIONAL_FOLDERS:
        out, _ = analyse(trace_dir(folder))
        got = table(out, "/temporal_breakdown").iloc[0]
        want = expected(folder, "temporal_breakdown.csv").iloc[0]
        assert_close(got["kernel_time_us"], want["kernel_time(us)"], f"{folder} span", 2.0)
        assert got["compute_time_us"] >= want["compute_time(us)"] - 1.0, folder
        total = got["idle_time_us"] + got["compute_time_us"] + got["non_compute_time_us"]
        assert_close(total, got["kernel_time_us"], f"{folder} parts sum to span", 1e-6)


if __name__ == "__main__":
    main([make_test(f) for f in INTEGER_FOLDERS + FRACTIONAL_FOLDERS] +
         [test_fractional_default_keeps_nanoseconds])
