"""How a `Comparison` is shown: compare.html (sortable, changed tasks first) and a rich table."""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console
from rich.markup import escape as rich_escape
from rich.table import Table

from harness.kernel.display import visible

from . import svg
from .compare import CONFIDENCE, Comparison, Pair
from .page import SORT_SCRIPT, esc, fmt, money, page, score_of, table, td

CHANGE_CSS = {"regression": "bad", "improvement": "ok", "only A": "warn", "only B": "warn"}


def _gate(result: dict | None) -> str:
    if not result or not result.get("gate_rounds"):
        return "–"
    return f"{'passed' if result.get('gate_passed') else 'rejected'}×{result['gate_rounds']}"


def _signed(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:+.{digits}f}"


def interval_text(comparison: Comparison) -> str:
    if comparison.interval is None:
        return "no task ran in both runs, so there is no paired interval"
    low, high = comparison.interval
    return (
        f"{CONFIDENCE:.0%} paired bootstrap interval of the success-rate difference (B − A) over "
        f"{comparison.paired} tasks: [{low:+.3f}, {high:+.3f}]"
    )


def _link(result: dict | None, suite_dir: Path | None, out_dir: Path) -> str:
    if not result:
        return "–"
    label = fmt(result.get("status"))
    if suite_dir is None or not result.get("run_dir"):
        return label
    target = Path(suite_dir).resolve() / str(result["run_dir"]) / "trajectory.html"
    href = Path(os.path.relpath(target, out_dir.resolve())).as_posix()
    return f'<a href="{esc(href)}">{label}</a>'


def _row(pair: Pair, dirs: tuple[Path | None, Path | None], out_dir: Path) -> list[str]:
    a, b = pair.a or {}, pair.b or {}
    delta = pair.score_delta
    return [
        td(esc(pair.task_id)),
        td(esc(pair.change), css=CHANGE_CSS.get(pair.change, "")),
        td(fmt(a.get("score")) if pair.a else "–", True, sort_value=score_of(a)),
        td(fmt(b.get("score")) if pair.b else "–", True, sort_value=score_of(b)),
        td(_signed(delta), True, sort_value=delta if delta is not None else 0),
        td(_link(pair.a, dirs[0], out_dir)),
        td(_link(pair.b, dirs[1], out_dir)),
        td(money(a.get("cost_usd")) if pair.a else "–", True),
        td(money(b.get("cost_usd")) if pair.b else "–", True),
        td(fmt(a.get("model_turns")) if pair.a else "–", True),
        td(fmt(b.get("model_turns")) if pair.b else "–", True),
        td(esc(_gate(pair.a))),
        td(esc(_gate(pair.b))),
    ]


def totals_rows(comparison: Comparison) -> list[tuple[str, str, str, str]]:
    a, b = comparison.totals_a, comparison.totals_b
    rows = []
    for name, key, digits in (
        ("tasks", "tasks", 0),
        ("successes", "successes", 0),
        ("success rate", "success_rate", 3),
        ("mean score", "mean_score", 3),
        ("cost ($)", "cost_usd", 4),
        ("model turns", "model_turns", 0),
    ):
        x, y = a.get(key), b.get(key)
        diff = y - x if isinstance(x, int | float) and isinstance(y, int | float) else None
        show = lambda v, d=digits: "–" if v is None else f"{v:.{d}f}"  # noqa: E731
        rows.append((name, show(x), show(y), _signed(diff, digits)))
    return rows


def write_compare_html(
    comparison: Comparison, out: Path, dirs: tuple[Path | None, Path | None] = (None, None)
) -> Path:
    """The comparison page at `out`, linking each side's trajectories relative to it."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    counts = comparison.counts()
    changed = [p for p in comparison.pairs if p.change != "same"]
    summary = table(
        ["", "A", "B", "B − A"],
        [
            [td(esc(n)), td(x, True), td(y, True), td(d, True)]
            for n, x, y, d in totals_rows(comparison)
        ],
    )
    bars = [(name, float(n)) for name, n in counts.items() if n]
    headers = [
        "task",
        "change",
        "score A",
        "score B",
        "Δ score",
        "status A",
        "status B",
        "cost A",
        "cost B",
        "turns A",
        "turns B",
        "gate A",
        "gate B",
    ]
    body = [
        f"<p><b>A</b> {esc(comparison.name_a)}<br><b>B</b> {esc(comparison.name_b)}</p>",
        summary,
        f"<p>{esc(interval_text(comparison))}.</p>",
        f'<div class="charts"><div class="chart"><h3>Tasks by change</h3>'
        f"{svg.hbar_chart(bars, 'tasks by change')}</div></div>",
        f"<h2>Scores that differ ({len(changed)})</h2>",
        table(
            ["task", "change", "score A", "score B"],
            [_row(p, dirs, out.parent)[:4] for p in changed],
        )
        if changed
        else '<p class="muted">No task scored differently.</p>',
        '<h2>All tasks</h2><p class="muted">Regressions first, then improvements; click a '
        "column's title to sort.</p>",
        '<div class="scroll">'
        + table(headers, [_row(p, dirs, out.parent) for p in comparison.pairs], sortable=True)
        + "</div>",
    ]
    out.write_text(page("StateAct run comparison", "\n".join(body), script=SORT_SCRIPT), "utf-8")
    return out


def _number(value) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) else "–"


def _cell(text) -> str:
    return rich_escape(visible(str(text)))


def _both(pair: Pair, show) -> str:
    """`A → B` for one field; a side the task did not run in shows as a dash."""
    left = show(pair.a) if pair.a else "–"
    right = show(pair.b) if pair.b else "–"
    return _cell(left if left == right else f"{left} → {right}")


def print_comparison(comparison: Comparison, console: Console | None = None) -> None:
    """The same comparison as terminal tables (rich; 160 columns wide when not on a terminal)."""
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)
    tasks = Table(title="Tasks (regressions and improvements first; A → B where they differ)")
    tasks.add_column("task", overflow="fold")
    tasks.add_column("change")
    tasks.add_column("score", justify="right")
    tasks.add_column("Δ", justify="right")
    for name in ("status", "cost", "turns", "gate"):
        tasks.add_column(name, justify="right" if name in ("cost", "turns") else "left")
    styles = {"regression": "red", "improvement": "green"}
    for pair in comparison.pairs:
        tasks.add_row(
            _cell(pair.task_id),
            _cell(pair.change),
            _both(pair, lambda r: _number(r.get("score"))),
            _signed(pair.score_delta),
            _both(pair, lambda r: str(r.get("status", "–"))),
            _both(pair, lambda r: money(r.get("cost_usd"))),
            _both(pair, lambda r: str(r.get("model_turns", "–"))),
            _both(pair, _gate),
            style=styles.get(pair.change),
        )
    totals = Table(title="Totals")
    for name in ("", "A", "B", "B − A"):
        totals.add_column(name, justify="left" if not name else "right")
    for row in totals_rows(comparison):
        totals.add_row(*row)
    console.print(f"A: {_cell(comparison.name_a)}\nB: {_cell(comparison.name_b)}")
    console.print(tasks)
    console.print(totals)
    console.print(interval_text(comparison))
