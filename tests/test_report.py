"""hta-mpi-report: the HTML page of a real run (8 generated ranks, rank 5
computing 30% slower) is self-contained (no script, no external resource),
carries the summary, outlier list, heatmaps and timeline with the HDF5's
numbers, handles failed ranks, and renders: headless Chromium's screenshot
has the window's size and many colours (skipped, with the reason, when
Chromium is not installed: scripts/install-deps.sh --test installs it)."""
import html.parser
import os
import shutil
import subprocess

import h5py
import matplotlib.image
import numpy as np

from common import (Skip, TRACEGEN, analyse, main, table, tmpdir)

PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
REPORT = os.path.join(PYTHON_DIR, "hta-mpi-report")
WINDOW = (1280, 2000)


class Page(html.parser.HTMLParser):
    """Tags, table rows and text of the page, for structural checks."""

    def __init__(self, text):
        super().__init__()
        self.tags, self.rows, self.text, self._row = [], [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self._row = []

    def handle_endtag(self, tag):
        if tag == "tr":
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._row is not None and data.strip():
            self._row.append(data.strip())


def generated(ranks, straggler=None, broken=False):
    d = tmpdir()
    args = [TRACEGEN, "-o", d, "--ranks", str(ranks), "--size-mb", "0.3", "--gzip"]
    subprocess.run(args + (["--straggler", f"{straggler}:1.3"] if straggler else []), check=True)
    if broken:
        with open(os.path.join(d, f"rank-{ranks}.json"), "w") as f:
            f.write('{"traceEvents": [ {"ph": "X", "ts": ')
    out, _ = analyse(d, processes=2, expect=1 if broken else 0)
    return out


def report(results_path):
    page = os.path.join(tmpdir(), "report.html")
    p = subprocess.run([REPORT, results_path, "-o", page], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == page, (p.returncode, p.stdout, p.stderr)
    with open(page, encoding="utf-8") as f:
        return page, f.read()


RESULTS = PAGE = TEXT = None  # the run and its page, made by setup()


def setup():
    global RESULTS, PAGE, TEXT
    RESULTS = generated(8, straggler=5)
    PAGE, TEXT = report(RESULTS)


def test_page_is_self_contained():
    page = Page(TEXT)
    tags = [t for t, _ in page.tags]
    assert "script" not in tags and "link" not in tags and "img" not in tags, set(tags)
    for tag, attrs in page.tags:
        for name in ("src", "href", "xlink:href"):
            assert name not in attrs, (tag, attrs)
    assert "http://" not in TEXT and "https://" not in TEXT and "url(" not in TEXT
    # 2 heatmaps, ops and annotations heatmaps, timeline, kernel types,
    # the communication's wait per rank and step (rank 5 is late: the
    # others wait) and the roofline
    assert tags.count("svg") == 8, tags.count("svg")
    assert "Wait for peers per rank (rows) and profiler step (columns)" in TEXT


def test_page_shows_the_hdf5_numbers():
    page = Page(TEXT)
    tb = table(RESULTS, "/temporal_breakdown").set_index("rank")
    summary = [r for r in page.rows if r and r[0].isdigit() and len(r) >= 8 and r[1] == "ok"]
    assert [int(r[0]) for r in summary] == list(range(8)), summary
    for r in summary:
        assert r[2] == f"{tb.loc[int(r[0]), 'compute_time_pctg']:.2f}", r
        assert r[5] == f"{tb.loc[int(r[0]), 'idle_time_pctg']:.2f}", r
    outliers = table(RESULTS, "/outliers")
    listed = [(r[0], int(r[1])) for r in page.rows if len(r) == 7 and r[1].isdigit()]
    assert listed == list(zip(outliers["metric"], outliers["rank"])), listed
    assert ("compute_time_us", 5) in listed
    # Every heatmap cell is a rect with a hover title naming rank and value.
    ob = table(RESULTS, "/overlap_breakdown").set_index("rank")
    want = f"rank 5, compute: {ob.loc[5, 'compute_us'] / 1e6:.4g} s"
    assert want in TEXT, want
    assert "flagged likely" in TEXT or "flagged outlier" in TEXT
    # The timeline: one bar per (rank, bin, category) with time in it.
    with h5py.File(RESULTS, "r") as f:
        for rank, row in zip(f["timeline_ranks"][()], f["timeline"][()]):
            assert TEXT.count(f"<title>rank {rank}, bin ") == np.count_nonzero(row), rank


def test_roofline_has_a_point_per_op_shape_and_the_roofs():
    """The generated ranks' float GEMMs on an A100: one point per op shape
    of /op_perf, titled with its median TFLOPS, under the fp32 roof."""
    perf = table(RESULTS, "/op_perf")
    sized = perf[perf.tflops.notna()]
    shapes = sized.groupby(["name", "input_dims"]).tflops.median()
    assert len(shapes) > 0, perf
    roofline = TEXT[TEXT.index("<h2>Roofline"):]
    roofline = roofline[:roofline.index("</svg>")]
    circles = Page(roofline).tags
    assert sum(1 for tag, _ in circles if tag == "circle") == len(shapes), len(shapes)
    for (name, dims), tflops in shapes.items():
        assert f"{name} {dims} (fp32): {tflops:.3g} TFLOPS" in roofline, (name, dims, tflops)
    assert "fp32 roof: 19.5 TFLOPS, 2.039 TB/s" in roofline, roofline[:400]


def test_failed_rank_is_listed_with_its_error():
    _, text = report(generated(3, broken=True))
    rows = [r for r in Page(text).rows if r and r[0].isdigit() and "failed" in r]
    assert len(rows) == 1 and "parse error" in rows[0][-1], rows
    assert rows[0][2:7] == ["\u2013"] * 5 and "rank-3.json" in rows[0], rows


def chromium():
    """Chromium's path; Skip when it is not installed."""
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    raise Skip("Chromium is not installed (Debian package chromium; "
               "scripts/install-deps.sh --test installs it)")


def test_chromium_renders_the_page():
    browser = chromium()
    shot = os.path.join(tmpdir(), "report.png")
    p = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                        "--no-first-run", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={tmpdir()}", f"--screenshot={shot}",
                        f"--window-size={WINDOW[0]},{WINDOW[1]}", "file://" + PAGE],
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0 and os.path.exists(shot), (p.returncode, p.stderr[-2000:])
    image = matplotlib.image.imread(shot)
    assert image.shape[:2] == (WINDOW[1], WINDOW[0]), image.shape
    pixels = (image[:, :, :3] * 255).astype(np.uint8).reshape(-1, 3)
    colors = len(np.unique(pixels, axis=0))
    non_white = float(np.mean(pixels.min(axis=1) < 240))
    assert colors > 200 and non_white > 0.1, (colors, non_white)
    # The heatmaps' outlier colours and the timeline's category colours are on screen.
    for rgb in ((0x4c, 0x72, 0xb0), (0xdd, 0x84, 0x52)):
        assert np.any(np.all(pixels == rgb, axis=1)), rgb
    print(f"     screenshot {shot}: {image.shape[1]}x{image.shape[0]}, {colors} colours, "
          f"{non_white:.0%} non-white")


if __name__ == "__main__":
    main([test_page_is_self_contained, test_page_shows_the_hdf5_numbers,
          test_roofline_has_a_point_per_op_shape_and_the_roofs,
          test_failed_rank_is_listed_with_its_error, test_chromium_renders_the_page],
         setup=setup)
