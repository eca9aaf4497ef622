"""hta_mpi.diff_report: one self-contained HTML page comparing two runs,
from a diff file written by `hta-mpi diff` (`hta-mpi-report --diff`).

The page has both runs' provenance, the kernel classes, the regressions
and improvements over all ranks, the kernels only one run has, per-rank
before/after heatmaps of the temporal and overlap breakdowns, the tail
ratios per activity category and, when the diff has them, the collectives.
Like the run report (report.py) it is inline HTML and SVG only: no script,
nothing fetched.  Every number is a cell of the diff file's tables."""
import math
import os

import numpy as np

from hta_mpi import results
from hta_mpi.html import CSS, diverging, esc, number, table_html

TOP = 25
# (label, metric of /diff/rank_metrics): the per-rank heatmaps' columns.
HEATMAP_METRICS = [
    ("compute", "compute_time_us"), ("non-compute", "non_compute_time_us"),
    ("idle", "idle_time_us"), ("overlap: compute only", "compute_us"),
    ("communicate only", "communicate_us"), ("both", "overlap_us"), ("neither", "empty_us"),
]


def percent(value):
    return number(100 * value if value is not None else None, "{:+.1f}%")


def header_html(path, attrs):
    fields = [("diff", os.path.abspath(path)),
              ("BASE", attrs.get("base_path")), ("BASE command", attrs.get("base_command_line")),
              ("NEW", attrs.get("new_path")), ("NEW command", attrs.get("new_command_line")),
              ("min change", f"{100 * attrs.get('min_change', 0):g}%"),
              ("tool", f"hta-mpi {attrs.get('tool_version')}")]
    return "<dl>" + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in fields) + "</dl>"


def classes_html(kernels):
    everywhere = kernels[kernels["rank"] == -1]
    counts = everywhere["class"].value_counts()
    return "<p>Kernels over all ranks: " + ", ".join(
        f"{counts.get(c, 0)} {c}" for c in ("slower", "faster", "added", "removed", "unchanged")
    ) + ".</p>"


def changed_html(kernels, cls):
    rows = kernels[(kernels["rank"] == -1) & (kernels["class"] == cls)].head(TOP)
    if rows.empty:
        return "<p>None.</p>"
    body = [[(esc(r.name), True), (esc(r.kernel_type), True), (number(r.base_total_us, "{:.1f}"), False),
             (number(r.new_total_us, "{:.1f}"), False), (number(r.change_us, "{:+.1f}"), False),
             (percent(r.rel_change), False), (esc(r.base_count), False), (esc(r.new_count), False),
             (number(r.base_mean_us, "{:.2f}"), False), (number(r.new_mean_us, "{:.2f}"), False)]
            for r in rows.itertuples(index=False)]
    return table_html(["kernel", "type", "BASE total us", "NEW total us", "change us", "change",
                       "BASE count", "NEW count", "BASE mean us", "NEW mean us"], body)


def kernel_set_html(kernel_set):
    everywhere = kernel_set[kernel_set["rank"] == -1]
    parts = []
    for run, title in (("new", "Only in NEW (new kernels)"), ("base", "Only in BASE (vanished)")):
        rows = everywhere[everywhere["run"] == run]
        ranks = kernel_set[(kernel_set["rank"] >= 0) & (kernel_set["run"] == run)]
        body = [[(esc(r.name), True), (esc(r.kernel_type), True), (esc(r.count), False),
                 (number(r.total_us, "{:.1f}"), False),
                 (esc(int((ranks["name"] == r.name).sum())), False)]
                for r in rows.head(TOP).itertuples(index=False)]
        parts.append(f"<h3>{esc(title)}: {len(rows)}</h3>" +
                     (table_html(["kernel", "type", "count", "total us", "ranks"], body)
                      if body else "<p>None.</p>"))
    return "\n".join(parts)


def heatmaps(metrics):
    """(ranks, labels, base[i, j], new[i, j]) for the ranks both runs have."""
    both = metrics[metrics["status"] == "both"]
    ranks = sorted(set(both["rank"]))
    labels, base, new = [], [], []
    by_key = both.set_index(["rank", "metric"])
    for label, metric in HEATMAP_METRICS:
        if not ((both["metric"] == metric).any()):
            continue
        labels.append(label)
        base.append([by_key["base"].get((r, metric), math.nan) for r in ranks])
        new.append([by_key["new"].get((r, metric), math.nan) for r in ranks])
    return ranks, labels, np.array(base, dtype=float).T, np.array(new, dtype=float).T


def heatmap_svg(ranks, labels, base, new):
    """Per metric two columns, BASE then NEW; colour: the cell's difference
    from BASE's median rank of that metric, so a rank that changed, or the
    whole run, stands out in NEW's column."""
    n, m = base.shape if base.size else (len(ranks), len(labels))
    cell_w, cell_h = 78, max(4, min(22, 1400 // max(n, 1)))
    left, top = 50, 40
    median = np.nanmedian(base, axis=0) if n else np.zeros(m)
    scale = np.where((median == 0) | np.isnan(median), 1.0, np.abs(median))
    parts = [f'<svg width="{left + 2 * m * cell_w + 10}" height="{top + n * cell_h + 10}"'
             ' font-family="sans-serif">']
    for j, label in enumerate(labels):
        x = left + 2 * j * cell_w
        parts.append(f'<text x="{x + cell_w}" y="14" text-anchor="middle" font-size="12">'
                     f"{esc(label)}</text>")
        for k, side in enumerate(("BASE", "NEW")):
            parts.append(f'<text x="{x + k * cell_w + cell_w / 2}" y="30" text-anchor="middle"'
                         f' font-size="11">{side}</text>')
    label_every = max(1, n // 50)
    for i, rank in enumerate(ranks):
        y = top + i * cell_h
        if i % label_every == 0:
            parts.append(f'<text x="{left - 6}" y="{y + cell_h / 2}" text-anchor="end"'
                         f' dominant-baseline="middle" font-size="11">{esc(rank)}</text>')
        for j, label in enumerate(labels):
            for k, values in enumerate((base, new)):
                value = values[i, j]
                rel = (value - median[j]) / scale[j] if not math.isnan(value) else 0.0
                change = (new[i, j] - base[i, j]) / base[i, j] if base[i, j] else math.nan
                tip = (f"rank {rank}, {label}, {'BASE' if k == 0 else 'NEW'}: {value:.1f} us "
                       f"({rel:+.1%} vs BASE's median rank; NEW vs BASE {change:+.1%})")
                x = left + (2 * j + k) * cell_w
                parts.append(f'<rect x="{x}" y="{y}" width="{cell_w}" height="{cell_h}"'
                             f' fill="{diverging(rel / 0.5)}" stroke="#fff"><title>{esc(tip)}'
                             "</title></rect>")
    return "\n".join(parts + ["</svg>"])


def tails_html(tails):
    both = tails[tails["status"] == "both"]
    if both.empty:
        return "<p>No activity category in both runs.</p>"
    columns = ["total_ratio", "top1_mean_ratio", "top5_mean_ratio", "top10_mean_ratio",
               "top1_share_ratio", "top5_share_ratio", "top10_share_ratio"]
    body = []
    for category, rows in both.groupby("category", sort=True):
        body.append([(esc(category), True), (esc(len(rows)), False)] +
                    [(number(float(np.nanmedian(rows[c])) if rows[c].notna().any() else None,
                             "{:.3f}"), False) for c in columns])
    return table_html(["category", "ranks"] + [f"{c} (median)" for c in columns], body) + \
        '<p class="note">NEW / BASE per rank, median over the ranks both runs have; ' \
        "/diff/tails has every rank.</p>"


def collectives_html(coll):
    keys = ["group_desc", "collective", "dtype", "bucket_max_bytes"]
    ratios = [c for c in coll.columns if c.endswith("_ratio")]
    body = [[(esc(getattr(r, k)), k != "bucket_max_bytes") for k in keys] +
            [(esc(r.status), True)] + [(number(getattr(r, c), "{:.3f}"), False) for c in ratios]
            for r in coll.itertuples(index=False)]
    return table_html(keys + ["status"] + ratios, body)


def render(path):
    """The comparison page for the diff file at path, as a string."""
    attrs = results.attributes(path)
    d = results.load_diff(path)
    ranks, labels, base, new = heatmaps(d["rank_metrics"])
    sections = [
        ("Kernels", classes_html(d["kernels"])),
        ("Regressions (slower over all ranks, largest change first)",
         changed_html(d["kernels"], "slower")),
        ("Improvements", changed_html(d["kernels"], "faster")),
        ("Kernel-set changes (over all ranks)", kernel_set_html(d["kernel_set"])),
        ("Per-rank breakdowns, before and after", heatmap_svg(ranks, labels, base, new) +
         '<p class="note">colour: difference from BASE\'s median rank (blue below, red above); '
         "hover for values.</p>" if ranks else "<p>No rank in both runs.</p>"),
        ("Longest events per activity category", tails_html(d["tails"])),
    ]
    if "collectives" in d:
        sections.append(("Collectives (NEW / BASE)", collectives_html(d["collectives"])))
    body = "\n".join(f"<h2>{esc(title)}</h2>\n{content}" for title, content in sections)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>hta-mpi diff: {esc(os.path.basename(path))}</title>"
            f"<style>{CSS}h3 {{ font-size: 15px; }}</style></head>\n<body>\n<h1>hta-mpi diff</h1>\n"
            f"{header_html(path, attrs)}\n{body}\n</body></html>\n")
