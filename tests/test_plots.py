"""The Python analysis package (python/hta_mpi) and hta-mpi-plot on a real
run: 8 generated ranks with rank 5 computing 30% slower, analysed by
hta-mpi under mpirun.  Checks that load() returns every table with str
columns, that hta-mpi-plot writes the four PNG files at their predicted
pixel size with real content, and that the data behind every figure is
the HDF5 file's, cell by cell, with the straggler's cells marked."""
import os
import subprocess
import sys

import h5py
import matplotlib.image
import numpy as np

from common import (TRACEGEN, analyse, main, table, tmpdir)

PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
sys.path.insert(0, PYTHON_DIR)
from hta_mpi import plots, results, views  # noqa: E402

FILES = {"heatmap_seconds.png": (800, 440), "heatmap_ratios.png": (800, 440),
         "heatmap_ops.png": (800, 440), "heatmap_annotations.png": (800, 440),
         "timeline.png": (1200, 440), "kernel_types.png": (700, 700)}


def generated_run():
    d = tmpdir()
    subprocess.run([TRACEGEN, "-o", d, "--ranks", "8", "--size-mb", "0.3", "--gzip",
                    "--straggler", "5:1.3"], check=True)
    out, _ = analyse(d, processes=2)
    return out


RESULTS = FIGURES = None  # the run and its figures, made by setup()


def setup():
    global RESULTS, FIGURES
    RESULTS = generated_run()
    FIGURES = {os.path.basename(f.path): f for f in plots.plot_all(RESULTS, tmpdir())}


def raw(name):
    with h5py.File(RESULTS, "r") as f:
        return f[name][()]


def test_importing_plots_keeps_the_callers_backend():
    """A notebook's matplotlib backend is its own: importing hta_mpi.plots
    and drawing every figure must not switch it."""
    code = ("import matplotlib; matplotlib.use('svg'); import sys; sys.path.insert(0, sys.argv[1]); "
            "from hta_mpi import plots; plots.plot_all(sys.argv[2], sys.argv[3]); "
            "print(matplotlib.get_backend())")
    p = subprocess.run([sys.executable, "-c", code, PYTHON_DIR, RESULTS, tmpdir()],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "svg", (p.stdout, p.stderr)


def test_load_decodes_strings_and_lists_tables():
    names = results.tables(RESULTS)
    assert "cross_rank/kernels" in names and "temporal_breakdown" in names, names
    assert "timeline" not in names and "timeline_ranks" not in names, names
    outliers = results.load(RESULTS, "outliers")
    assert len(outliers) == len(raw("outliers")) > 0
    assert all(isinstance(m, str) for m in outliers["metric"]), outliers.dtypes
    assert "compute_time_us" in set(outliers[outliers["rank"] == 5]["metric"])
    assert results.attributes(RESULTS)["time_unit"] == "us"
    try:
        results.load(RESULTS, "no_such_table")
        raise AssertionError("load of a missing table did not raise")
    except KeyError as e:
        assert "temporal_breakdown" in str(e), e


def test_script_writes_pngs_of_the_predicted_size():
    outdir = tmpdir()
    p = subprocess.run([os.path.join(PYTHON_DIR, "hta-mpi-plot"), RESULTS, "-o", outdir],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    for name, (w, h) in FILES.items():
        path = os.path.join(outdir, name)
        assert f"{path} ({w}x{h})" in p.stdout, p.stdout
        image = matplotlib.image.imread(path)
        assert image.shape[:2] == (h, w), (name, image.shape)
        colors = np.unique((image[:, :, :3] * 255).astype(np.uint8).reshape(-1, 3), axis=0)
        assert len(colors) > 20, f"{name}: only {len(colors)} colours"
    assert plots.figure_size("heatmap", 8) == (8.0, 4.4)
    assert plots.figure_size("timeline", 5000)[1] == plots.MAX_HEIGHT_IN


def test_heatmap_data_is_the_hdf5_with_the_straggler_marked():
    figures = FIGURES
    assert sorted(figures) == sorted(FILES), sorted(figures)
    ob, tb, outliers = raw("overlap_breakdown"), raw("temporal_breakdown"), raw("outliers")
    assert list(ob["rank"]) == list(range(8)) and list(tb["rank"]) == list(range(8))
    seconds = figures["heatmap_seconds.png"].data
    ratios = figures["heatmap_ratios.png"].data
    assert list(seconds.ranks) == list(range(8)) and list(ratios.ranks) == list(range(8))
    want_seconds = np.column_stack([ob["compute_us"], ob["communicate_us"], ob["overlap_us"],
                                    ob["empty_us"], tb["idle_time_us"]]) / 1e6
    want_ratios = np.column_stack([ob["compute_ratio"], ob["communicate_ratio"],
                                   ob["overlap_ratio"], ob["empty_ratio"],
                                   tb["idle_time_pctg"] / 100])
    assert np.array_equal(seconds.values, want_seconds), (seconds.values, want_seconds)
    assert np.array_equal(ratios.values, want_ratios), (ratios.values, want_ratios)
    for hm in (seconds, ratios):
        want = {(int(r), hm.metrics.index(m.decode())): c.decode()
                for m, r, c in zip(outliers["metric"], outliers["rank"], outliers["classification"])
                if m.decode() in hm.metrics}
        assert hm.flags == want, (hm.flags, want)
        assert {i for i, _ in hm.flags} == {5}, hm.flags  # only the straggler's cells
        assert hm.metrics[0] in {hm.metrics[j] for _, j in hm.flags}  # compute is flagged
    rel = views.relative_to_median(seconds.values)
    assert rel[5, 0] > 0.25 and abs(rel[0, 0]) < 0.01, rel[:, 0]  # 30% slower stands out
    assert views.outlier_ranks(RESULTS) == sorted(set(int(r) for r in outliers["rank"]))


def test_timeline_and_pie_data_are_the_hdf5():
    figures = FIGURES
    tl = figures["timeline.png"].data
    with h5py.File(RESULTS, "r") as f:
        assert np.array_equal(tl.us, f["timeline"][()])
        assert np.array_equal(tl.edges_us, f["timeline"].attrs["bin_edges_us"])
        assert np.array_equal(tl.ranks, f["timeline_ranks"][()])
    assert tl.us.shape == (8, 30, 4) and tl.categories == ["compute", "communicate",
                                                           "overlap", "empty"]
    shares = views.timeline_fractions(tl).sum(axis=2)
    assert abs(shares[:, 1:-1] - 1).max() < 1e-4 and shares.max() < 1 + 1e-4, shares
    # The bins' compute time is the overlap breakdown's compute time.
    ob = raw("overlap_breakdown")
    assert np.allclose(tl.us[:, :, 0].sum(axis=1), ob["compute_us"], atol=1e-6)
    kt, want = figures["kernel_types.png"].data, raw("kernel_type_breakdown")
    assert kt.labels == [k.decode() for k in want["kernel_type"]], kt.labels
    assert np.array_equal(kt.sum_us, want["sum_us"])
    assert np.array_equal(kt.percentage, want["percentage"])


def test_ops_heatmap_is_the_hdf5():
    """The ops heatmap: per rank, the ten ops with the most GPU busy time
    over all ranks, in ms, as /ops sums them over argument signatures."""
    hm = FIGURES["heatmap_ops.png"].data
    ops = table(RESULTS, "/ops")
    per = ops.groupby(["rank", "name"]).gpu_busy_sum_us.sum().unstack(fill_value=0) / 1000
    top = list(per.sum().sort_values(ascending=False, kind="stable").index[:10])
    assert hm.metrics == top, (hm.metrics, top)
    assert list(hm.ranks) == list(range(8))
    assert np.allclose(hm.values, per[top].values), "ops heatmap values"
    ann = FIGURES["heatmap_annotations.png"].data
    assert "CPU" in ann.title  # generated traces have no GPU annotations


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")], setup=setup)
