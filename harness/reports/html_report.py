"""report.html of a suite: summary figures, inline SVG charts, a sortable task table and the
failures grouped by reason. No external assets; the only script is the table sorter in
`page.SORT_SCRIPT`."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from . import svg
from .page import SORT_SCRIPT, esc, fmt, money, number, page, score_of, table, td
from .reasons import failure_reason
from .trajectory import write_trajectory_html

__all__ = ["write_report", "write_trajectory_html", "failure_groups", "failure_reason"]


def _gate_cell(result: dict) -> str:
    rounds = result.get("gate_rounds") or 0
    if not rounds:
        return "–"
    verdict = "passed" if result.get("gate_passed") else "rejected"
    return f"{verdict} ({rounds} round{'s' if rounds != 1 else ''})"


def failure_groups(results: list[dict]) -> list[tuple[str, list[dict]]]:
    """Unsuccessful tasks grouped by `failure_reason`, largest group first."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for result in results:
        if not result.get("success"):
            groups[failure_reason(result)].append(result)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def _task_link(result: dict) -> str:
    trajectory = Path(result.get("run_dir") or "") / "trajectory.html"
    return f'<a href="{esc(trajectory.as_posix())}">{esc(str(result.get("task_id")))}</a>'


def charts(results: list[dict], summary: dict) -> str:
    """The five charts: score by domain, cost against score, durations, gate against checker,
    statuses."""
    by_domain = summary.get("by_domain") or {}
    domain_bars = [(name, g.get("mean_score") or 0.0) for name, g in by_domain.items()]
    points = [
        (
            str(r.get("task_id")),
            number(r.get("cost_usd")),
            score_of(r),
            bool(r.get("success")),
        )
        for r in results
    ]
    durations = [number(r.get("duration_s")) for r in results]
    gate = summary.get("gate") or {}
    accepted_wrong = gate.get("accepted_below_1", 0)
    rejected_right = gate.get("rejected_but_correct", 0)
    cells = [
        [gate.get("accepted_correct", 0), accepted_wrong],
        [rejected_right, gate.get("rejected", 0) - rejected_right],
    ]
    statuses = [(s, float(n)) for s, n in (summary.get("status_counts") or {}).items()]
    boxes = [
        ("Mean score by domain", svg.hbar_chart(domain_bars, "mean score by domain", top=1.0)),
        ("Cost against score per task", svg.scatter(points, "cost ($)", "score", "cost vs score")),
        ("Duration per task", svg.histogram(durations, "duration (s)", "duration distribution")),
        (
            f"Finish gate against the checker ({gate.get('reviewed', 0)} reviewed)",
            svg.matrix(
                cells,
                ["gate accepted", "gate rejected"],
                ["checker: 1", "checker: below 1"],
                "gate verdict against checker",
            ),
        ),
        ("Status counts", svg.hbar_chart(statuses, "tasks by status")),
    ]
    return (
        '<div class="charts">'
        + "".join(
            f'<div class="chart"><h3>{esc(title)}</h3>{chart}</div>' for title, chart in boxes
        )
        + "</div>"
    )


def task_table(results: list[dict]) -> str:
    rows = []
    for r in results:
        error = (
            f'<br><span class="muted">{esc(str(r["error"])[:300])}</span>' if r.get("error") else ""
        )
        rows.append(
            [
                td(_task_link(r)),
                td(fmt(r.get("domain"))),
                td(
                    f"{fmt(r.get('status'))}{error}",
                    css="ok" if r.get("success") else "bad",
                    sort_value=str(r.get("status")),
                ),
                td(fmt(r.get("score")), True, sort_value=score_of(r)),
                td(money(r.get("cost_usd")), True, sort_value=number(r.get("cost_usd"))),
                td(fmt(r.get("main_turns")), True),
                td(fmt(r.get("model_turns")), True),
                td(fmt(number(r.get("duration_s")), 1), True),
                td(_gate_cell(r)),
            ]
        )
    headers = ["task", "domain", "status", "score", "cost", "main turns", "all turns", "s", "gate"]
    return '<div class="scroll">' + table(headers, rows, sortable=True) + "</div>"


def failures_html(results: list[dict]) -> str:
    groups = failure_groups(results)
    if not groups:
        return '<p class="ok">Every task succeeded.</p>'
    parts = []
    for reason, members in groups:
        links = ", ".join(_task_link(r) for r in members[:50])
        more = f" … and {len(members) - 50} more" if len(members) > 50 else ""
        parts.append(
            f"<details><summary><b>{len(members)}</b> × {esc(reason)}</summary>"
            f"<p>{links}{more}</p></details>"
        )
    return "\n".join(parts)


def groups_table(summary: dict, key: str) -> str:
    rows = [
        [
            td(esc(name)),
            td(fmt(g["tasks"]), True),
            td(fmt(g["success_rate"]), True),
            td(fmt(g["mean_score"]), True),
            td(money(g["mean_cost_usd"]), True),
        ]
        for name, g in (summary.get(key) or {}).items()
    ]
    return table(["group", "tasks", "success rate", "mean score", "mean cost"], rows)


def write_report(suite_dir: Path, results: list[dict], summary: dict) -> Path:
    """report.html: figures, charts, the task table (linking each trajectory.html), failures."""
    path = Path(suite_dir) / "report.html"
    path.write_text(report_html(results, summary), encoding="utf-8")
    return path


def report_html(results: list[dict], summary: dict, script: str = "", note: str = "") -> str:
    """The report page as text (`stateact view` serves it live with its own `script`); `note` is
    trusted HTML put first (the viewer's "running" line)."""
    parts = [
        note,
        f"<p>{fmt(summary.get('tasks'))} tasks · model {fmt(summary.get('model'))} · preset "
        f"{fmt(summary.get('preset'))} · success rate {fmt(summary.get('success_rate'))} · mean "
        f"score {fmt(summary.get('mean_score'))} · total cost "
        f"{money(summary.get('total_cost_usd'))} · mean cost {money(summary.get('mean_cost_usd'))} "
        f"per task</p>",
    ]
    if summary.get("unfinished"):
        parts.append(
            f'<p class="bad">{summary["unfinished"]} task(s) did not finish; rerun '
            "with --resume.</p>"
        )
    parts += [
        charts(results, summary),
        '<h2>Tasks</h2><p class="muted">Click a column\'s title to sort.</p>',
        task_table(results),
        "<h2>Failures by reason</h2>",
        failures_html(results),
        "<h2>By domain</h2>",
        groups_table(summary, "by_domain"),
        "<h2>By preset / control mode</h2>",
        groups_table(summary, "by_mode"),
    ]
    for title, key in (("Finish gate against the checker", "gate"), ("GUI use", "gui")):
        figures = [
            [td(esc(k.replace("_", " "))), td(fmt(v), True)]
            for k, v in (summary.get(key) or {}).items()
        ]
        parts += [f"<h2>{title}</h2>", table(["measure", "value"], figures)]
    trials = summary.get("trials")
    if trials:
        rows = [[td(esc(f"pass@{k}")), td(fmt(v), True)] for k, v in trials["pass_at_k"].items()]
        rows.insert(0, [td("pass@1 standard error"), td(fmt(trials["pass_at_1_stderr"]), True)])
        parts += [
            f"<h2>Trials ({trials['trials']} per task)</h2>",
            table(["measure", "value"], rows),
        ]
    return page("StateAct suite report", "\n".join(parts), script=SORT_SCRIPT + script)
