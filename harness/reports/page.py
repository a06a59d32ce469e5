"""Pieces every StateAct HTML page shares: escaping, the page shell, tables and the sorting script.

Everything a model or a task file wrote goes through `esc`: control characters (terminal escapes,
bidi overrides) become visible escapes first, then HTML escaping. Pages load nothing from elsewhere.
"""

from __future__ import annotations

from html import escape as html_escape

from harness.kernel.display import visible

MAX_TEXT = 20_000

STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:0.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:left;vertical-align:top}
th{background:#f0f0f0} td.num{text-align:right;font-variant-numeric:tabular-nums}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th:after{content:" \\2195";color:#999}
.ok{color:#176c2e;font-weight:600} .bad{color:#a31515;font-weight:600} .warn{color:#8a5a00}
pre{background:#f7f7f7;border:1px solid #e2e2e2;padding:0.5em;white-space:pre-wrap;
max-height:30em;overflow:auto}
.turn{border-left:4px solid #8aa;padding-left:0.8em;margin:1em 0} .turn.gate{border-color:#c90}
.result{border-left:4px solid #ccc;padding-left:0.8em;margin:0.5em 0 0.5em 1em}
.result.error{border-color:#c33}
img{border:1px solid #bbb} img.thumb{max-width:240px;max-height:160px;margin:0.2em}
.muted{color:#777} .charts{display:flex;flex-wrap:wrap;gap:1.5em}
.chart{border:1px solid #e2e2e2;padding:0.5em;background:#fff} .chart h3{margin:0 0 0.3em}
.scroll{max-height:40em;overflow:auto} .layer{background:#eef;border-radius:3px;padding:0 0.3em}
"""

# Sorts a table.sortable by the clicked column: numbers by value (data-v when set), text otherwise.
SORT_SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var body = table.tBodies[0], rows = Array.from(body.rows);
      var down = th.dataset.dir !== 'asc'; th.dataset.dir = down ? 'asc' : 'desc';
      function key(row) {
        var cell = row.cells[col]; var raw = cell.dataset.v !== undefined ? cell.dataset.v
          : cell.textContent.trim(); var n = parseFloat(raw.replace(/^\\$/, ''));
        return isNaN(n) ? raw.toLowerCase() : n;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b); var c = x < y ? -1 : x > y ? 1 : 0; return down ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def esc(text, quote: bool = True) -> str:
    """HTML-escaped, with control characters (terminal escapes, bidi overrides) made visible."""
    return html_escape(visible(str(text), keep_lines=True), quote=quote)


def page(title: str, body: str, script: str = "") -> str:
    """A whole page; `script` is inline JavaScript of our own (never model text)."""
    tail = f"<script>{script}</script>" if script else ""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f"<style>{STYLE}</style></head>\n<body>\n<h1>{esc(title)}</h1>\n{body}\n{tail}</body>"
        "</html>\n"
    )


def pre(text) -> str:
    text = str(text)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"\n… ({len(text) - MAX_TEXT} more characters)"
    return f"<pre>{esc(text)}</pre>"


def fmt(value, digits: int = 3) -> str:
    """A value for a cell: floats rounded, None as a dash, everything escaped."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return esc(str(value))


def money(value) -> str:
    try:
        return f"${float(value or 0.0):.4f}"
    except (TypeError, ValueError):
        return esc(str(value))


def td(value: str, numeric: bool = False, css: str = "", sort_value=None) -> str:
    """A cell of already escaped HTML; `sort_value` is what the sorting script compares."""
    classes = " ".join(c for c in (("num" if numeric else ""), css) if c)
    attrs = f' class="{classes}"' if classes else ""
    if sort_value is not None:
        attrs += f' data-v="{esc(sort_value)}"'
    return f"<td{attrs}>{value}</td>"


def table(headers: list[str], rows: list[list[str]], sortable: bool = False, css: str = "") -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(row) + "</tr>" for row in rows)
    classes = " ".join(c for c in ("sortable" if sortable else "", css) if c)
    attrs = f' class="{classes}"' if classes else ""
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>"


def number(value) -> float:
    """A figure from a result line; anything that is not a number (a hand-edited file) counts 0."""
    if isinstance(value, bool):
        return float(value)
    try:
        return float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0


def score_of(result: dict) -> float:
    """A task's score; a task never scored (not run, crashed) counts as 0."""
    score = result.get("score")
    return float(score) if isinstance(score, int | float) else 0.0
