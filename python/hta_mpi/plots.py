"""hta_mpi.plots: PNG figures of a results file, as the Nsight Systems
multi-rank notebook shows them (hta-mpi-plot is the command line).

  heatmap_seconds.png, heatmap_ratios.png  ranks x (compute, communication,
      overlap, empty, idle): colour = deviation from the median rank, text =
      value; cells flagged in /outliers are outlined (colour = class) and
      flagged ranks' labels are red.
  timeline.png     ranks x time bins; in each bin a stacked bar of the share
      of the bin spent computing, communicating, overlapping, or empty.
  kernel_types.png the kernel-type pie (/kernel_type_breakdown).

Figures are saved at a fixed size (figure_size() inches x DPI, no tight
bounding box) so that the pixel size of each file is known in advance; it
grows with the number of ranks up to MAX_HEIGHT_IN.  The data drawn is
returned with each file (Figure.data) for checking against the HDF5."""
import argparse
import os
import sys
from collections import namedtuple

import matplotlib.ticker
import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure as MplFigure
from matplotlib.patches import Patch, Rectangle

from hta_mpi import results, views
from hta_mpi.colours import CATEGORY_COLORS, FLAG_COLORS, GAP_CAUSE_COLORS, HEATMAP_CMAP

DPI = 100
MAX_HEIGHT_IN = 100
ROW_IN = 0.3            # height of one rank's row
MARGIN_IN = 2.0         # title, axis labels and legend
MAX_ANNOTATED_RANKS = 64  # beyond this, cell values are unreadable anyway

Figure = namedtuple("Figure", "path size_px data")


def figure_size(kind, n_ranks):
    """Inches (width, height) of a figure of kind heatmap/timeline/pie."""
    if kind == "pie":
        return 7.0, 7.0
    width = 8.0 if kind == "heatmap" else 12.0
    return width, min(MARGIN_IN + ROW_IN * max(n_ranks, 1), MAX_HEIGHT_IN)


def _new_figure(size):
    """A figure of its own, outside pyplot: drawing files never touches the
    caller's matplotlib backend or pyplot's list of open figures."""
    return MplFigure(figsize=size, layout="constrained")


def _save(fig, path):
    fig.savefig(path, dpi=DPI)
    w, h = fig.get_size_inches()
    return int(round(w * DPI)), int(round(h * DPI))


def _rank_ticks(ax, ranks, flagged, offset):
    """Labels each rank's row (every k-th when there are many, and every
    flagged rank) at row + offset; flagged ranks in bold red."""
    every = set(range(0, len(ranks), max(1, len(ranks) // 50)))
    marked = {i for i, r in enumerate(ranks) if r in flagged}
    positions = np.array(sorted(every | marked), dtype=int)
    ax.set_yticks(positions + offset, [str(ranks[i]) for i in positions])
    for tick, i in zip(ax.get_yticklabels(), positions):
        if ranks[i] in flagged:
            tick.set_color(FLAG_COLORS["outlier"])
            tick.set_fontweight("bold")


def draw_heatmap(hm, flagged_ranks, path):
    """Writes a views.Heatmap as a PNG; returns its (width, height) in pixels."""
    n, m = hm.values.shape
    fig = _new_figure(figure_size("heatmap", n))
    ax = fig.subplots()
    relative = views.relative_to_median(hm.values)
    limit = max(float(np.max(np.abs(relative))) if relative.size else 0.0, 0.01)
    image = ax.imshow(relative, cmap=HEATMAP_CMAP, vmin=-limit, vmax=limit, aspect="auto",
                      interpolation="nearest")
    fig.colorbar(image, ax=ax, label="difference from the median rank",
                 format=matplotlib.ticker.PercentFormatter(xmax=1.0))
    if n <= MAX_ANNOTATED_RANKS:
        fmt = "{:.4g}" if hm.unit == "s" else "{:.3g}"
        for (i, j), value in np.ndenumerate(hm.values):
            dark = abs(relative[i, j]) > 0.6 * limit
            ax.text(j, i, fmt.format(value), ha="center", va="center", fontsize=8,
                    color="white" if dark else "black")
    for (i, j), cls in hm.flags.items():
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, lw=2.5,
                               edgecolor=FLAG_COLORS.get(cls, "black")))
    ax.set_xticks(range(m), hm.labels, rotation=30 if m > 5 else 0,
                  ha="right" if m > 5 else "center")
    ax.set_ylabel("rank")
    _rank_ticks(ax, hm.ranks, flagged_ranks, 0)
    handles = [Patch(fill=False, edgecolor=FLAG_COLORS.get(c, "black"), lw=2.5,
                     label=f"flagged: {c}") for c in sorted(set(hm.flags.values()))]
    if flagged_ranks:
        handles.append(Patch(fill=False, edgecolor="none",
                             label="red rank: flagged for some metric in /outliers"))
    if handles:
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.06),
                  ncol=len(handles), fontsize=8, frameon=False)
    ax.set_title(hm.title)
    return _save(fig, path)


def draw_timeline(tl, flagged_ranks, path):
    """Writes a results.Timeline as a PNG; returns its (width, height) in pixels."""
    fractions = views.timeline_fractions(tl)
    n, bins, _ = fractions.shape
    fig = _new_figure(figure_size("timeline", n))
    ax = fig.subplots()
    left_ms = (tl.edges_us[:-1] - tl.edges_us[0]) / 1000
    width_ms = np.diff(tl.edges_us) / 1000
    # Rank 0 on top (y grows downwards); each bar stacks upwards from its
    # row's foot, compute first, leaving a gap between rows.  One polygon
    # collection per category: thousands of separate bars draw far slower.
    x0 = np.tile(left_ms, n)
    x1 = x0 + np.tile(width_ms, n)
    top = np.repeat(np.arange(n), bins) + 0.95
    for c, name in enumerate(tl.categories):
        height = 0.9 * fractions[:, :, c].ravel()
        y0, y1 = top - height, top
        corners = np.stack([np.column_stack(xy) for xy in ((x0, y0), (x0, y1), (x1, y1), (x1, y0))],
                           axis=1)
        ax.add_collection(PolyCollection(corners[height > 0], facecolors=CATEGORY_COLORS.get(name),
                                         edgecolors="none", label=name))
        top = y0
    ax.set_ylim(n, 0)
    ax.set_xlim(0, (tl.edges_us[-1] - tl.edges_us[0]) / 1000)
    ax.set_xlabel(f"time since the first GPU event (ms), {bins} bins")
    ax.set_ylabel("rank")
    _rank_ticks(ax, tl.ranks, flagged_ranks, 0.5)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.set_title("Share of each time bin per rank")
    return _save(fig, path)


def draw_gaps(gs, flagged_ranks, path):
    """Writes a views.GapStrip as a PNG; returns its (width, height) in pixels."""
    n = len(gs.ranks)
    fig = MplFigure(figsize=figure_size("timeline", n), layout="constrained")
    ax = fig.subplots()
    for cause, colour in GAP_CAUSE_COLORS.items():
        k = np.array([c == cause for c in gs.cause])
        if k.any():
            ax.barh(gs.row[k], gs.duration_ms[k], left=gs.start_ms[k], height=0.8,
                    color=colour, label=cause)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(0, max(float(np.max(gs.start_ms + gs.duration_ms)), 1e-3))
    ax.set_xlabel("ms since the first GPU event")
    ax.set_ylabel("rank")
    _rank_ticks(ax, gs.ranks, flagged_ranks, 0)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, title="cause")
    ax.set_title("GPU idle gaps of at least --gap-threshold, by cause")
    return _save(fig, path)


def draw_kernel_types(kt, path):
    """Writes a views.KernelTypes pie as a PNG; returns its (width, height) in pixels."""
    fig = _new_figure(figure_size("pie", 0))
    ax = fig.subplots()
    if len(kt.sum_us):
        # Labels in a legend: slices of a few percent are too thin to carry text.
        wedges, _ = ax.pie(kt.sum_us, startangle=90, counterclock=False,
                           wedgeprops={"linewidth": 1, "edgecolor": "white"})
        ax.legend(wedges, [f"{l}: {p:.1f}%" for l, p in zip(kt.labels, kt.percentage)],
                  loc="upper center", bbox_to_anchor=(0.5, 0.0), frameon=False)
    ax.set_title("GPU kernel time by type (all ranks)")
    return _save(fig, path)


def plot_all(path, outdir):
    """Writes every figure of the results file at path into outdir; returns
    one Figure (file, (width, height) in pixels, data drawn) per file."""
    os.makedirs(outdir, exist_ok=True)
    flagged = set(views.outlier_ranks(path))
    figures = []
    for kind in ("seconds", "ratios"):
        hm = views.heatmap(path, kind)
        png = os.path.join(outdir, f"heatmap_{kind}.png")
        figures.append(Figure(png, draw_heatmap(hm, flagged, png), hm))
    for kind in views.NAME_HEATMAPS:
        hm = views.name_heatmap(path, kind)
        if hm is not None:
            png = os.path.join(outdir, f"heatmap_{kind}.png")
            figures.append(Figure(png, draw_heatmap(hm, flagged, png), hm))
    tl = results.timeline(path)
    if tl is not None:
        png = os.path.join(outdir, "timeline.png")
        figures.append(Figure(png, draw_timeline(tl, flagged, png), tl))
    gs = views.gap_strip(path)
    if gs is not None:
        png = os.path.join(outdir, "gaps.png")
        figures.append(Figure(png, draw_gaps(gs, flagged, png), gs))
    kt = views.kernel_types(path)
    png = os.path.join(outdir, "kernel_types.png")
    figures.append(Figure(png, draw_kernel_types(kt, png), kt))
    return figures


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="hta-mpi-plot", description="Draw PNG figures of an hta-mpi results file: "
        "per-rank heatmaps with outliers marked, the rank x time-bin timeline and the "
        "kernel-type pie.")
    parser.add_argument("results", help="HDF5 file written by hta-mpi")
    parser.add_argument("-o", "--outdir", default="hta-plots",
                        help="directory for the PNG files (default hta-plots)")
    args = parser.parse_args(argv)
    try:
        figures = plot_all(args.results, args.outdir)
    except (OSError, KeyError) as e:
        print(f"hta-mpi-plot: {e}", file=sys.stderr)
        return 1
    for f in figures:
        print(f"{f.path} ({f.size_px[0]}x{f.size_px[1]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
