"""hta_mpi.report: one self-contained HTML page for a results file
(hta-mpi-report is the command line).

The page has the run's header, the per-rank summary (status, compute,
communication, overlap and idle percentages), the outlier list and the
stragglers, the two per-rank heatmaps and the rank x time-bin timeline of
plots.py, and the kernel-type shares.  Everything is inline: CSS in a
<style> element and figures as <svg>, with hover text in SVG <title>
elements, so the file opens offline, from a mail attachment or a cluster's
file browser, and has no script at all.  The figures draw the same views
(views.py) as the PNG plots.  Last, the communication: bus bandwidth and
wait per process group and kind, send/recv waits per group, the wait per
rank and step, the all-to-all matrix and the bubble per pipeline stage.
The roofline plots each GEMM, convolution and attention op shape of
/op_perf at its arithmetic intensity and median TFLOPS over the ranks,
under the roofs of the GPU's peaks (one per element type present).  When
the run read NCCL Flight Recorder dumps, their hang diagnosis comes right
after the ranks.  With --replay, "What fixing it buys" lists per scenario
the measured, replayed and predicted step time (means over the steps)."""
import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile

from hta_mpi import diff_report, results, views
from hta_mpi.colours import CATEGORY_COLORS, FLAG_COLORS, GAP_CAUSE_COLORS, KERNEL_TYPE_COLORS
from hta_mpi.html import CSS, diverging, esc, number, sequential, table_html

MAX_ANNOTATED_RANKS = 64


def header_html(path, attrs):
    fields = [("results", os.path.abspath(path)), ("tool", f"hta-mpi {attrs.get('tool_version')}"),
              ("created (UTC)", attrs.get("created_utc")), ("command", attrs.get("command_line")),
              ("ranks", f"{attrs.get('n_ranks')} ({attrs.get('n_failed')} failed), "
                        f"{attrs.get('n_processes')} MPI processes")]
    return "<dl>" + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in fields) + "</dl>"


def summary_html(summary, flagged):
    rows, classes = [], []
    for r in summary.itertuples(index=False):
        rows.append([(esc(r.rank), False), (esc(r.status), True),
                     (number(r.compute_time_pctg), False), (number(r.communication_pctg), False),
                     (number(r.overlap_pctg), False), (number(r.idle_time_pctg), False),
                     (number(r.non_compute_time_pctg), False),
                     (esc(os.path.basename(r.file)), True), (esc(r.error), True)])
        classes.append("failed" if r.status == "failed" else
                       "flagged" if r.rank in flagged else "")
    return table_html(["rank", "status", "compute %", "communication %", "overlap %", "idle %",
                       "non-compute %", "file", "error"], rows, classes)


def outliers_html(outliers):
    if outliers.empty:
        return "<p>No metric flagged.</p>"
    rows = [[(esc(o.metric), True), (esc(o.rank), False), (number(o.value, "{:.6g}"), False),
             (number(o.median, "{:.6g}"), False), (number(o.z), False),
             (number(o.robust_z), False),
             (f'<span style="color:{FLAG_COLORS.get(o.classification, "#000")}">'
              f"{esc(o.classification)}</span>", True)]
            for o in outliers.itertuples(index=False)]
    return table_html(["metric", "rank", "value", "median", "z", "robust z", "class"], rows)


def stragglers_html(path, flagged):
    """The ranks /stragglers flags; without one, the verdict on each rank
    the outlier table flags (it stands out, yet the others do not wait
    for it beyond chance, or there is too little to tell)."""
    if "stragglers" not in results.tables(path):
        return ""
    st = results.load(path, "stragglers")
    mine = st[st["flagged"] != 0]
    if not mine.empty:
        rows = [[(esc(s.rank), False), (number(s.score), False), (esc(s.reasons), True)]
                for s in mine.itertuples(index=False)]
        return table_html(["rank", "score", "reasons"], rows)
    if not flagged:
        return "<p>No straggler.</p>"
    standing_out = st[st["rank"].isin(flagged)]
    rows = [[(esc(s.rank), False), (number(s.score), False), (esc(s.reasons), True)]
            for s in standing_out.itertuples(index=False)]
    return ("<p>No rank flagged as the one the others wait for; the ranks the outlier table "
            "flags, with the verdict on each:</p>" + table_html(["rank", "score", "reasons"], rows))


def hang_html(path):
    """The findings of /fr_findings, group by group (the NCCL Flight Recorder
    dumps' hang diagnosis); nothing when the run read no dump."""
    if "fr_ranks" not in results.tables(path):
        return ""
    if "fr_findings" not in results.tables(path):
        return "<p>No finding: every group's members agree and none is stuck.</p>"
    fs = results.load(path, "fr_findings")
    if fs.empty:
        return "<p>No finding: every group's members agree and none is stuck.</p>"
    rows = [[(esc(f"{f.group} ({f.desc})"), True), (esc(f.kind), True),
             (esc(f.seq if f.seq >= 0 else ""), False), (esc(f.op), True),
             (esc(f.culprit_ranks or "cannot tell"), True), (esc(f.waiting_ranks), True),
             (esc(f.detail), True), (esc(f.culprit_frames), True)]
            for f in fs.itertuples(index=False)]
    return (table_html(["group", "finding", "seq", "op", "culprit ranks", "waiting ranks",
                        "detail", "what to look at: the culprit's entry and stack"], rows) +
            '<p class="note">culprits: the members outside the majority of the group, or '
            "behind the seq the others enqueued; /fr_collectives has every collective.</p>")


def what_if_html(path):
    """Per scenario of /what_if (--replay), in its order: the ranks it
    changes, and over the steps the mean measured step time, the replay's
    as measured and the scenario's prediction, and the mean saving."""
    if "what_if" not in results.tables(path):
        return ""
    w = results.load(path, "what_if")
    rows = []
    for scenario, g in w.groupby("scenario", sort=False):
        notes = sorted(set(n for n in g.note if n))
        rows.append([(esc(scenario), True), (esc(g.ranks.iloc[0]), True), (esc(len(g)), False),
                     (number(g.measured_step_time_us.mean()), False),
                     (number(g.replayed_step_time_us.mean()), False),
                     (number(g.predicted_step_time_us.mean()), False),
                     (number(g.saving_us.mean()), False), (number(g.saving_pct.mean()), False),
                     (esc("; ".join(notes)), True)])
    return (table_html(["scenario", "ranks", "steps", "measured us", "replayed us",
                        "predicted us", "saving us", "saving %", "note"], rows) +
            '<p class="note">the job replayed from its dependency graph (docs/definitions.md, '
            "What-if), means over the steps: as measured, to show how far it can be trusted, "
            "and under each scenario; a saving compares two replays of the same graph; "
            "/what_if has every step.</p>")


def grid_svg(rows, columns, values, unit, what):
    """A rows x columns grid of non-negative values (a dict keyed by (row,
    column)), shaded against the largest, each cell's value on hover."""
    cell_w = max(6, min(48, 1200 // max(len(columns), 1)))
    cell_h = max(4, min(22, 1400 // max(len(rows), 1)))
    left, top = 60, 24
    largest = max(values.values(), default=0) or 1
    label_rows = max(1, len(rows) // 50)
    label_columns = max(1, len(columns) // 25)
    parts = [f'<svg width="{left + len(columns) * cell_w + 10}"'
             f' height="{top + len(rows) * cell_h + 10}" font-family="sans-serif">']
    for j, c in enumerate(columns):
        if j % label_columns == 0:
            parts.append(f'<text x="{left + j * cell_w + cell_w / 2}" y="14" text-anchor="middle"'
                         f' font-size="11">{esc(c)}</text>')
    for i, r in enumerate(rows):
        y = top + i * cell_h
        if i % label_rows == 0:
            parts.append(f'<text x="{left - 6}" y="{y + cell_h / 2}" text-anchor="end"'
                         f' dominant-baseline="middle" font-size="11">{esc(r)}</text>')
        for j, c in enumerate(columns):
            v = values.get((r, c), 0)
            parts.append(f'<rect x="{left + j * cell_w}" y="{y}" width="{cell_w}"'
                         f' height="{cell_h}" fill="{sequential(v / largest)}">'
                         f"<title>{esc(what(r, c))}: {number(v, '{:.4g}')} {esc(unit)}</title>"
                         "</rect>")
    return "\n".join(parts + ["</svg>"])


def communication_html(path):
    """Per process group and kind the bus bandwidth and the wait; the
    wait per rank and step; the all-to-all matrix; the bubble per stage."""
    names = set(results.tables(path))
    parts = []
    if "collective_summary" in names:
        cs = results.load(path, "collective_summary")
        rows = [[(esc(r.group_desc), True), (esc(r.collective), True), (esc(r.dtype), True),
                 (esc(r.bucket_max_bytes), False), (esc(r.count), False),
                 (number(r.busbw_p50_gbps), False), (number(r.total_wait_us, "{:.1f}"), False)]
                for r in cs.itertuples(index=False)]
        if rows:
            parts.append(table_html(["group", "collective", "dtype", "bytes up to", "instances",
                                     "busbw p50 GB/s", "wait us"], rows))
    if "comm_by_group" in names:
        by = results.load(path, "comm_by_group")
        if "p2p_ops" in by.columns and (by.p2p_ops > 0).any():
            g = by[by.p2p_ops > 0].groupby("group_desc")[
                ["p2p_ops", "late_sender_us", "late_receiver_us", "unpaired"]].sum()
            rows = [[(esc(d), True), (esc(int(r.p2p_ops)), False),
                     (number(r.late_sender_us, "{:.1f}"), False),
                     (number(r.late_receiver_us, "{:.1f}"), False), (esc(int(r.unpaired)), False)]
                    for d, r in g.iterrows()]
            parts.append(table_html(["group (send/recv)", "ops", "late sender us",
                                     "late receiver us", "unpaired"], rows))
    if "steps" in names:
        st = results.load(path, "steps")
        waits = {(int(r.rank), int(r.step)): float(r.wait_us) for r in st.itertuples(index=False)}
        if "pipeline_steps" in names:
            for r in results.load(path, "pipeline_steps").itertuples(index=False):
                key = (int(r.rank), int(r.step))
                waits[key] = waits.get(key, 0.0) + float(r.p2p_wait_us)
        if any(v > 0 for v in waits.values()):
            ranks = sorted({k[0] for k in waits})
            steps = sorted({k[1] for k in waits})
            parts.append("<p>Wait for peers per rank (rows) and profiler step (columns): "
                         "collectives and send/recv.</p>" +
                         grid_svg(ranks, steps, waits, "us", lambda r, c: f"rank {r}, step {c}"))
    if "a2a_matrix" in names:
        m = results.load(path, "a2a_matrix").groupby(["src", "dst"]).bytes.sum()
        if len(m):
            ranks = sorted(set(m.index.get_level_values(0)) | set(m.index.get_level_values(1)))
            parts.append("<p>All-to-all bytes from rank (rows) to rank (columns).</p>" +
                         grid_svg(ranks, ranks, {k: float(v) for k, v in m.items()}, "bytes",
                                  lambda r, c: f"{r} to {c}"))
    if "pipeline_steps" in names:
        ps = results.load(path, "pipeline_steps").groupby("rank").agg(
            stage=("stage", "first"), stages=("stages", "first"),
            bubble=("bubble_fraction", "mean"), expected=("expected_bubble_fraction", "mean"),
            wait=("p2p_wait_us", "sum"))
        rows = [[(esc(r.Index), False), (esc(r.stage), False), (esc(r.stages), False),
                 (number(100 * r.bubble, "{:.1f}"), False),
                 (number(100 * r.expected, "{:.1f}"), False), (number(r.wait, "{:.1f}"), False)]
                for r in ps.itertuples()]
        parts.append(table_html(["rank", "stage", "stages", "bubble %", "1F1B bubble %",
                                 "send/recv wait us"], rows))
    return "\n".join(parts)


def rank_label(x, y, rank, flagged, anchor="end"):
    style = ' fill="#d62728" font-weight="bold"' if rank in flagged else ""
    return (f'<text x="{x}" y="{y}" text-anchor="{anchor}" dominant-baseline="middle"'
            f' font-size="11"{style}>{esc(rank)}</text>')


def heatmap_svg(hm, flagged):
    n, m = hm.values.shape
    cell_w, cell_h = 120, max(4, min(22, 1400 // max(n, 1)))
    left, top = 50, 24
    label_every = max(1, n // 50)
    relative = views.relative_to_median(hm.values)
    limit = max(float(abs(relative).max()) if relative.size else 0.0, 0.01)
    fmt = "{:.4g}" if hm.unit == "s" else "{:.3g}"
    parts = [f'<svg width="{left + m * cell_w + 10}"'
             f' height="{top + n * cell_h + 10}" font-family="sans-serif">']
    for j, label in enumerate(hm.labels):
        parts.append(f'<text x="{left + j * cell_w + cell_w / 2}" y="14" text-anchor="middle"'
                     f' font-size="12">{esc(label)}</text>')
    for i, rank in enumerate(hm.ranks):
        y = top + i * cell_h
        if i % label_every == 0 or rank in flagged:
            parts.append(rank_label(left - 6, y + cell_h / 2, int(rank), flagged))
        for j in range(m):
            x, value = left + j * cell_w, hm.values[i, j]
            tip = (f"rank {rank}, {hm.labels[j]}: {fmt.format(value)} {hm.unit} "
                   f"({relative[i, j]:+.1%} vs the median rank)")
            flag = hm.flags.get((i, j))
            if flag:
                tip += f", flagged {flag}"
            parts.append(f'<rect x="{x}" y="{y}" width="{cell_w}" height="{cell_h}"'
                         f' fill="{diverging(relative[i, j] / limit)}"><title>{esc(tip)}</title>'
                         "</rect>")
            if n <= MAX_ANNOTATED_RANKS:
                dark = abs(relative[i, j]) > 0.6 * limit
                parts.append(f'<text x="{x + cell_w / 2}" y="{y + cell_h / 2}" font-size="11"'
                             f' text-anchor="middle" dominant-baseline="middle"'
                             f' fill="{"#fff" if dark else "#000"}">{fmt.format(value)}</text>')
    for (i, j), cls in hm.flags.items():
        parts.append(f'<rect x="{left + j * cell_w + 1.5}" y="{top + i * cell_h + 1.5}"'
                     f' width="{cell_w - 3}" height="{cell_h - 3}" fill="none"'
                     f' stroke="{FLAG_COLORS.get(cls, "#000")}" stroke-width="3"/>')
    return "\n".join(parts + ["</svg>"])


def timeline_svg(tl, flagged):
    fractions = views.timeline_fractions(tl)
    n, bins, _ = fractions.shape
    left, top, width = 50, 10, 1000
    row_h = max(3, min(24, 1400 // max(n, 1)))
    bin_w = width / bins
    span_ms = (tl.edges_us[-1] - tl.edges_us[0]) / 1000
    height = top + n * row_h + 60
    parts = [f'<svg width="{left + width + 10}"'
             f' height="{height}" font-family="sans-serif">']
    label_every = max(1, n // 50)
    for i, rank in enumerate(tl.ranks):
        y0 = top + i * row_h
        if i % label_every == 0 or rank in flagged:
            parts.append(rank_label(left - 6, y0 + row_h / 2, int(rank), flagged))
        for b in range(bins):
            base = y0 + row_h * 0.95
            for c, name in enumerate(tl.categories):
                h = 0.9 * row_h * fractions[i, b, c]
                if h <= 0:
                    continue
                base -= h
                parts.append(f'<rect x="{left + b * bin_w:.2f}" y="{base:.2f}"'
                             f' width="{bin_w:.2f}" height="{h:.2f}"'
                             f' fill="{CATEGORY_COLORS.get(name, "#888")}"><title>rank {rank},'
                             f" bin {b}: {esc(name)} {fractions[i, b, c]:.1%}</title></rect>")
    axis_y = top + n * row_h + 4
    for k in range(0, 11):
        x = left + k * width / 10
        parts.append(f'<line x1="{x}" y1="{axis_y}" x2="{x}" y2="{axis_y + 5}" stroke="#000"/>'
                     f'<text x="{x}" y="{axis_y + 17}" font-size="11" text-anchor="middle">'
                     f"{span_ms * k / 10:.1f}</text>")
    parts.append(f'<text x="{left + width / 2}" y="{axis_y + 32}" font-size="12"'
                 f' text-anchor="middle">ms since the first GPU event ({bins} bins)</text>')
    for c, name in enumerate(tl.categories):
        x = left + c * 130
        parts.append(f'<rect x="{x}" y="{axis_y + 42}" width="12" height="12"'
                     f' fill="{CATEGORY_COLORS.get(name, "#888")}"/><text x="{x + 16}"'
                     f' y="{axis_y + 52}" font-size="12">{esc(name)}</text>')
    return "\n".join(parts + ["</svg>"])


def gaps_svg(gs, flagged):
    n = len(gs.ranks)
    left, top, width = 50, 10, 1000
    row_h = max(3, min(24, 1400 // max(n, 1)))
    span_ms = max(float(max(gs.start_ms + gs.duration_ms)), 1e-3)
    scale = width / span_ms
    axis_y = top + n * row_h + 4
    parts = [f'<svg width="{left + width + 10}" height="{axis_y + 60}" font-family="sans-serif">']
    for i, rank in enumerate(gs.ranks):
        if i % max(1, n // 50) == 0 or rank in flagged:
            parts.append(rank_label(left - 6, top + i * row_h + row_h / 2, int(rank), flagged))
    for row, start, length, cause in zip(gs.row, gs.start_ms, gs.duration_ms, gs.cause):
        parts.append(f'<rect x="{left + start * scale:.2f}" y="{top + row * row_h + 1}"'
                     f' width="{max(length * scale, 1):.2f}" height="{row_h - 2}"'
                     f' fill="{GAP_CAUSE_COLORS.get(cause, "#888")}"><title>rank'
                     f" {gs.ranks[row]}: {length:.3f} ms at {start:.3f} ms, {esc(cause)}"
                     "</title></rect>")
    for k in range(0, 11):
        x = left + k * width / 10
        parts.append(f'<line x1="{x}" y1="{axis_y}" x2="{x}" y2="{axis_y + 5}" stroke="#000"/>'
                     f'<text x="{x}" y="{axis_y + 17}" font-size="11" text-anchor="middle">'
                     f"{span_ms * k / 10:.1f}</text>")
    for c, (cause, colour) in enumerate(GAP_CAUSE_COLORS.items()):
        x = left + c * 130
        parts.append(f'<rect x="{x}" y="{axis_y + 30}" width="12" height="12" fill="{colour}"/>'
                     f'<text x="{x + 16}" y="{axis_y + 40}" font-size="12">{esc(cause)}</text>')
    return "\n".join(parts + ["</svg>"])


def kernel_types_svg(kt):
    width, x = 1000, 0.0
    parts = [f'<svg width="{width + 20}"'
             f' height="{40 + 20 * len(kt.labels)}" font-family="sans-serif">']
    total = float(sum(kt.sum_us)) or 1.0
    for k, (label, us, pct) in enumerate(zip(kt.labels, kt.sum_us, kt.percentage)):
        color = KERNEL_TYPE_COLORS[k % len(KERNEL_TYPE_COLORS)]
        w = width * us / total
        parts.append(f'<rect x="{10 + x:.2f}" y="4" width="{w:.2f}" height="24" fill="{color}">'
                     f"<title>{esc(label)}: {pct:.1f}%</title></rect>")
        parts.append(f'<rect x="10" y="{38 + 20 * k}" width="12" height="12" fill="{color}"/>'
                     f'<text x="28" y="{48 + 20 * k}" font-size="12">{esc(label)}: {pct:.1f}%'
                     f" ({us / 1e6:.4g} s)</text>")
        x += w
    return "\n".join(parts + ["</svg>"])


ROOF_COLORS = {"bf16": "#1f77b4", "fp16": "#2ca02c", "fp32": "#d62728", "fp8": "#9467bd",
               "fp64": "#8c564b", "int8": "#7f7f7f"}


def roofline_svg(perf):
    """Intensity (FLOPs/byte) against TFLOPS on log axes: a point per op
    shape (median over ranks, area by GPU time, hover for the numbers) and
    per element type the roof min(peak, bandwidth x intensity)."""
    sized = perf[perf.tflops.notna() & (perf.tflops > 0) & (perf.intensity > 0)]
    if sized.empty:
        return ""
    shapes = sized.groupby(["name", "input_dims", "input_type"]).agg(
        intensity=("intensity", "first"), tflops=("tflops", "median"),
        time=("gpu_time_us", "sum"), dtype=("dtype", "first"), pct=("pct_roofline", "median"),
        peak=("peak_tflops", "first"), bandwidth=("peak_tbps", "first"),
        ranks=("rank", "nunique")).reset_index()
    roofs = shapes.dropna(subset=["peak", "bandwidth"]).groupby("dtype")[
        ["peak", "bandwidth"]].first()
    x_lo = math.floor(math.log10(min(shapes.intensity.min(), 1.0)))
    x_hi = math.ceil(math.log10(max(shapes.intensity.max() * 2, 100.0)))
    y_hi = math.ceil(math.log10(max([shapes.tflops.max()] + list(roofs.peak)) * 1.5))
    y_lo = min(math.floor(math.log10(shapes.tflops.min())), y_hi - 2)
    left, top, width, height = 60, 10, 800, 420

    def px(x):
        return left + (math.log10(x) - x_lo) / (x_hi - x_lo) * width

    def py(y):
        return top + (y_hi - math.log10(max(y, 10 ** y_lo))) / (y_hi - y_lo) * height

    parts = [f'<svg width="{left + width + 170}" height="{top + height + 50}"'
             ' font-family="sans-serif">',
             f'<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="none"'
             ' stroke="#999"/>']
    for k in range(x_lo, x_hi + 1):
        parts.append(f'<text x="{px(10 ** k):.1f}" y="{top + height + 16}" font-size="11"'
                     f' text-anchor="middle">{10 ** k:g}</text>')
    for k in range(y_lo, y_hi + 1):
        parts.append(f'<text x="{left - 6}" y="{py(10 ** k) + 4:.1f}" font-size="11"'
                     f' text-anchor="end">{10 ** k:g}</text>')
    parts.append(f'<text x="{left + width / 2}" y="{top + height + 36}" font-size="12"'
                 ' text-anchor="middle">arithmetic intensity (FLOPs per byte)</text>'
                 f'<text x="14" y="{top + height / 2}" font-size="12" text-anchor="middle"'
                 f' transform="rotate(-90 14 {top + height / 2})">TFLOPS</text>')
    for n, (dtype, roof) in enumerate(roofs.iterrows()):
        colour = ROOF_COLORS.get(dtype, "#444")
        points = [(10 ** x_lo, roof.bandwidth * 10 ** x_lo), (roof.peak / roof.bandwidth, roof.peak),
                  (10 ** x_hi, roof.peak)]
        line = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
        parts.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2">'
                     f"<title>{esc(dtype)} roof: {roof.peak:g} TFLOPS, {roof.bandwidth:g} TB/s"
                     "</title></polyline>"
                     f'<text x="{left + width + 8}" y="{top + 14 + 16 * n}" font-size="12"'
                     f' fill="{colour}">{esc(dtype)}: {roof.peak:g} TFLOPS</text>')
    biggest = float(shapes.time.max()) or 1.0
    for r in shapes.itertuples(index=False):
        parts.append(f'<circle cx="{px(r.intensity):.1f}" cy="{py(r.tflops):.1f}"'
                     f' r="{3 + 9 * math.sqrt(r.time / biggest):.1f}"'
                     f' fill="{ROOF_COLORS.get(r.dtype, "#444")}" fill-opacity="0.5"'
                     ' stroke="#000" stroke-width="0.5">'
                     f"<title>{esc(r.name)} {esc(r.input_dims)} ({esc(r.dtype)}): "
                     f"{r.tflops:.3g} TFLOPS at {r.intensity:.3g} FLOPs/byte, "
                     f"{number(r.pct, '{:.1f}')}% of roofline, {r.time / 1000:.3g} ms on "
                     f"{r.ranks} rank(s)</title></circle>")
    return "\n".join(parts + ["</svg>"])


def render(path):
    """The whole page for the results file at path, as a string."""
    attrs = results.attributes(path)
    flagged = set(views.outlier_ranks(path))
    tl = results.timeline(path)
    sections = [
        ("Ranks", summary_html(views.rank_summary(path), flagged) +
         '<p class="note">compute, idle, non-compute: HTA\'s temporal breakdown; '
         "communication: share of the GPU span with a communication kernel running "
         "(alone or overlapping compute); red rank: flagged below.</p>"),
        ("Hang diagnosis (NCCL Flight Recorder)", hang_html(path)),
        ("Outliers", outliers_html(results.load(path, "outliers"))),
        ("Stragglers", stragglers_html(path, flagged)),
        ("What fixing it buys", what_if_html(path)),
    ]
    for kind in ("seconds", "ratios"):
        hm = views.heatmap(path, kind)
        sections.append((hm.title, heatmap_svg(hm, flagged) +
                         '<p class="note">colour: difference from the median rank '
                         "(blue below, red above); outlined: flagged in /outliers.</p>"))
    if tl is not None:
        sections.append(("Timeline: share of each time bin per rank", timeline_svg(tl, flagged)))
    sections.append(("GPU kernel time by type (all ranks)",
                     kernel_types_svg(views.kernel_types(path))))
    gs = views.gap_strip(path)
    if gs is not None:
        sections.append(("GPU idle gaps by cause (ms since the first GPU event)",
                         gaps_svg(gs, flagged)))
    for kind in views.NAME_HEATMAPS:
        hm = views.name_heatmap(path, kind)
        if hm is not None:
            sections.append((hm.title, heatmap_svg(hm, flagged) +
                             '<p class="note">outlined: the rank is '
                             "an outlier for that name in the cross-rank table.</p>"))
    sections.append(("Communication", communication_html(path)))
    if "op_perf" in results.tables(path):
        sections.append(("Roofline: GEMM, convolution and attention ops",
                         roofline_svg(results.load(path, "op_perf")) +
                         '<p class="note">a point per op shape at its median TFLOPS over the '
                         "ranks, area by GPU time; lines: the roofs of the GPU's dense peaks "
                         "(none when the device is unknown: --gpu-spec FILE).</p>"))
    body = "\n".join(f"<h2>{esc(title)}</h2>\n{content}" for title, content in sections if content)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>hta-mpi report: {esc(os.path.basename(path))}</title>"
            f"<style>{CSS}</style></head>\n<body>\n<h1>hta-mpi report</h1>\n"
            f"{header_html(path, attrs)}\n{body}\n</body></html>\n")


def hta_mpi_binary():
    """The hta-mpi to run for a diff: $HTA_MPI, else the one beside this
    package's scripts (PREFIX/bin), else hta-mpi on PATH."""
    if os.environ.get("HTA_MPI"):
        return os.environ["HTA_MPI"]
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "..", "..", "..", "..", "bin", "hta-mpi"),
                      os.path.join(here, "..", "..", "build", "hta-mpi")):
        if os.access(candidate, os.X_OK):
            return os.path.normpath(candidate)
    return shutil.which("hta-mpi") or "hta-mpi"


def diff_of(base, new, workdir):
    """Runs `hta-mpi diff BASE NEW` into workdir; the diff file's path."""
    out = os.path.join(workdir, "diff.h5")
    p = subprocess.run([hta_mpi_binary(), "diff", "-q", "-o", out, base, new],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise OSError(p.stderr.strip() or f"hta-mpi diff exited {p.returncode}")
    return out


def render_page(args):
    if args.diff:
        return diff_report.render(args.diff)
    if len(args.results) == 2:
        with tempfile.TemporaryDirectory(prefix="hta-mpi-report-") as d:
            return diff_report.render(diff_of(args.results[0], args.results[1], d))
    return render(args.results[0])


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="hta-mpi-report", description="Write one self-contained HTML page (inline SVG, "
        "no script, no network) for an hta-mpi results file, or comparing two runs: "
        "--diff DIFF.h5 (from hta-mpi diff), or two results files BASE.h5 NEW.h5.")
    parser.add_argument("results", nargs="*", help="HDF5 file written by hta-mpi; two of "
                        "them (BASE NEW) for a comparison page")
    parser.add_argument("--diff", metavar="DIFF.h5", help="diff file written by hta-mpi diff")
    parser.add_argument("-o", "--output", default="hta-report.html",
                        help="HTML file to write (default hta-report.html)")
    args = parser.parse_args(argv)
    if (args.diff is not None and args.results) or \
            (args.diff is None and len(args.results) not in (1, 2)):
        parser.error("give one results file, two (BASE NEW), or --diff DIFF.h5")
    try:
        page = render_page(args)
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(page)
    except (OSError, KeyError, ValueError) as e:
        print(f"hta-mpi-report: {e}", file=sys.stderr)
        return 1
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
