"""hta_mpi.html: what the HTML pages share (report.py's run report,
diff_report.py's diff report): the style sheet, escaping, number cells,
the colour scales and tables of cells."""
import html
import math

from hta_mpi.colours import COOL, NEUTRAL, WARM

CSS = """
body { font-family: sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; white-space: nowrap; }
td.text:last-child { white-space: normal; }
th { background: #eee; text-align: center; } td.text { text-align: left; }
tr.failed td { background: #fde0dc; }
tr.flagged td:first-child { color: #d62728; font-weight: bold; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; font-size: 13px; }
dt { font-weight: bold; } dd { margin: 0; font-family: monospace; }
.note { font-size: 12px; color: #555; }
"""


def esc(value):
    return html.escape(str(value), quote=True)


def number(value, fmt="{:.2f}"):
    return "&ndash;" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else fmt.format(value)


def diverging(t):
    """Colour of t in [-1, 1]: blue below 0, grey at 0, red above."""
    t = max(-1.0, min(1.0, t))
    end = WARM if t > 0 else COOL
    rgb = (round(n + abs(t) * (e - n)) for n, e in zip(NEUTRAL, end))
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def sequential(t):
    """Colour of t in [0, 1]: grey at 0, red at 1."""
    t = max(0.0, min(1.0, t))
    rgb = (round(n + t * (e - n)) for n, e in zip(NEUTRAL, WARM))
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def table_html(header, rows, row_classes=None):
    """rows: lists of (html, is_text) cells; header: column titles."""
    out = ["<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>"]
    for i, row in enumerate(rows):
        cls = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        cells = "".join(f'<td class="text">{c}</td>' if text else f"<td>{c}</td>"
                        for c, text in row)
        out.append(f"<tr{cls}>{cells}</tr>")
    return "\n".join(out + ["</table>"])
