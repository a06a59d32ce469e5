"""Static HTML views of a suite (report.html) and of one run (trajectory.html): no scripts, no external assets."""

from __future__ import annotations

import json
from html import escape as html_escape
from pathlib import Path

from harness.kernel.display import visible
from harness.kernel.records import load_events

MAX_TEXT = 20_000


def _esc(text, quote: bool = True) -> str:
    """HTML-escaped, with control characters (terminal escapes, bidi overrides) made visible."""
    return html_escape(visible(text, keep_lines=True), quote=quote)


STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:left;vertical-align:top}
th{background:#f0f0f0} td.num{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#176c2e;font-weight:600} .bad{color:#a31515;font-weight:600}
pre{background:#f7f7f7;border:1px solid #e2e2e2;padding:0.5em;white-space:pre-wrap;max-height:30em;overflow:auto}
.turn{border-left:4px solid #8aa;padding-left:0.8em;margin:1em 0} .turn.gate{border-color:#c90}
.result{border-left:4px solid #ccc;padding-left:0.8em;margin:0.5em 0 0.5em 1em} .result.error{border-color:#c33}
img{max-width:100%;border:1px solid #bbb} .muted{color:#777}
"""


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_esc(title)}</title>'
        f"<style>{STYLE}</style></head>\n<body>\n<h1>{_esc(title)}</h1>\n{body}\n</body></html>\n"
    )


def _pre(text: str) -> str:
    text = str(text)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"\n… ({len(text) - MAX_TEXT} more characters)"
    return f"<pre>{_esc(text)}</pre>"


def _fmt(value, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return _esc(str(value))


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(rows_cell for rows_cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>"


def _td(value, numeric: bool = False, css: str = "") -> str:
    classes = " ".join(c for c in (("num" if numeric else ""), css) if c)
    return f'<td class="{classes}">{value}</td>' if classes else f"<td>{value}</td>"


def _gate_cell(result: dict) -> str:
    rounds = result.get("gate_rounds") or 0
    if not rounds:
        return "–"
    verdict = "passed" if result.get("gate_passed") else "rejected"
    return f"{verdict} ({rounds} round{'s' if rounds != 1 else ''})"


def write_report(suite_dir: Path, results: list[dict], summary: dict) -> Path:
    """report.html: the summary figures and a table of tasks linking to each run's trajectory.html."""
    suite_dir = Path(suite_dir)
    parts = [
        f"<p>{_fmt(summary.get('tasks'))} tasks · model {_fmt(summary.get('model'))} · preset "
        f"{_fmt(summary.get('preset'))} · success rate {_fmt(summary.get('success_rate'))} · mean score "
        f"{_fmt(summary.get('mean_score'))} · mean cost ${_fmt(summary.get('mean_cost_usd'), 4)} per task</p>"
    ]
    if summary.get("unfinished"):
        parts.append(
            f'<p class="bad">{summary["unfinished"]} task(s) did not finish; rerun with --resume.</p>'
        )
    rows = []
    for r in results:
        trajectory = Path(r.get("run_dir") or "") / "trajectory.html"
        link = (
            f'<a href="{_esc(trajectory.as_posix(), quote=True)}">{_esc(str(r.get("task_id")))}</a>'
        )
        status_css = "ok" if r.get("success") else "bad"
        error = (
            f'<br><span class="muted">{_esc(str(r["error"])[:300])}</span>'
            if r.get("error")
            else ""
        )
        rows.append(
            [
                _td(link),
                _td(_fmt(r.get("domain"))),
                _td(f"{_fmt(r.get('status'))}{error}", css=status_css),
                _td(_fmt(r.get("score")), True),
                _td(f"${_fmt(r.get('cost_usd'), 4)}", True),
                _td(_fmt(r.get("main_turns")), True),
                _td(_fmt(r.get("model_turns")), True),
                _td(_gate_cell(r)),
            ]
        )
    parts += [
        "<h2>Tasks</h2>",
        _table(
            ["task", "domain", "status", "score", "cost", "main turns", "all turns", "gate"], rows
        ),
    ]
    for title, key in (("By domain", "by_domain"), ("By preset / control mode", "by_mode")):
        group_rows = [
            [
                _td(_esc(name)),
                _td(_fmt(g["tasks"]), True),
                _td(_fmt(g["success_rate"]), True),
                _td(_fmt(g["mean_score"]), True),
                _td(f"${_fmt(g['mean_cost_usd'], 4)}", True),
            ]
            for name, g in (summary.get(key) or {}).items()
        ]
        parts += [
            f"<h2>{title}</h2>",
            _table(["group", "tasks", "success rate", "mean score", "mean cost"], group_rows),
        ]
    status_rows = [
        [_td(_esc(s)), _td(str(n), True)] for s, n in (summary.get("status_counts") or {}).items()
    ]
    parts += ["<h2>Statuses</h2>", _table(["status", "tasks"], status_rows)]
    for title, key in (("Finish gate against the checker", "gate"), ("GUI use", "gui")):
        figures = [
            [_td(_esc(k.replace("_", " "))), _td(_fmt(v), True)]
            for k, v in (summary.get(key) or {}).items()
        ]
        parts += [f"<h2>{title}</h2>", _table(["measure", "value"], figures)]
    path = suite_dir / "report.html"
    path.write_text(_page("StateAct suite report", "\n".join(parts)), encoding="utf-8")
    return path


def _blocks_html(blocks: list[dict]) -> str:
    out = []
    for block in blocks or []:
        kind = block.get("type")
        if kind == "text":
            out.append(_pre(block.get("text", "")))
        elif kind == "image":
            if block.get("file"):
                out.append(
                    f'<img src="{_esc(block["file"], quote=True)}" alt="screenshot {_esc(block["file"])}">'
                )
            else:
                out.append('<p class="muted">(inline image)</p>')
        elif kind == "tool_use":
            arguments = json.dumps(block.get("input"), indent=2, ensure_ascii=False, default=str)
            out.append(
                f"<p><b>call</b> <code>{_esc(str(block.get('name')))}</code></p>{_pre(arguments)}"
            )
        elif kind == "tool_result":
            css = "result error" if block.get("is_error") else "result"
            label = "error" if block.get("is_error") else "result"
            out.append(
                f'<div class="{css}"><p><b>{label}</b></p>{_blocks_html(block.get("content") or [])}</div>'
            )
        elif kind in ("thinking", "redacted_thinking"):
            out.append(
                f"<details><summary>thinking</summary>{_pre(block.get('thinking', ''))}</details>"
            )
        else:
            out.append(_pre(json.dumps(block, default=str)))
    return "\n".join(out)


def _event_html(event: dict) -> str:
    kind, agent = event.get("event"), str(event.get("agent", ""))
    css = "turn gate" if agent.startswith("gate") else "turn"
    if kind == "task":
        return f'<div class="{css}"><h3>{_esc(agent)}: task</h3>{_blocks_html(event.get("content"))}</div>'
    if kind == "model_turn":
        usage = event.get("usage") or {}
        cost = f" · ${usage.get('cost_usd', 0):.4f}" if usage else ""
        return (
            f'<div class="{css}"><h3>{_esc(agent)} turn {_fmt(event.get("turn"))}{cost}</h3>'
            f"{_blocks_html(event.get('content'))}</div>"
        )
    if kind == "tool_results":
        return f'<div class="{css}">{_blocks_html(event.get("content"))}</div>'
    if kind == "plan":
        items = "".join(
            f"<li>[{_esc(i.get('status', '?'))}] {_esc(i.get('text', ''))}</li>"
            for i in event.get("items", [])
        )
        return f'<div class="turn"><h3>plan ({_esc(agent)})</h3><ul>{items}</ul></div>'
    if kind == "gate_round":
        verdict = {True: "passed", False: "rejected", None: "inconclusive"}.get(
            event.get("passed"), "?"
        )
        gaps = "".join(f"<li>{_esc(str(g))}</li>" for g in event.get("gaps", []))
        return f'<div class="turn gate"><h3>gate round {_fmt(event.get("round"))}: {verdict}</h3><ul>{gaps}</ul></div>'
    if kind in ("end", "compaction", "resumed", "setup_done"):
        details = {k: v for k, v in event.items() if k not in ("event", "agent", "time", "content")}
        return f'<p class="muted">{_esc(kind)} ({_esc(agent)}): {_esc(json.dumps(details, default=str)[:500])}</p>'
    return ""


def _gate_rounds_html(run_dir: Path) -> str:
    parts = []
    for path in sorted(
        (run_dir / "gate").glob("round-*.json"), key=lambda p: int(p.stem.split("-")[-1])
    ):
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        verdict = {True: "passed", False: "rejected", None: "inconclusive"}.get(
            data.get("passed"), "?"
        )
        gaps = (
            "".join(f"<li>{_esc(str(g))}</li>" for g in data.get("gaps", []))
            or '<li class="muted">no gaps</li>'
        )
        structural = "".join(
            f"<li>[{'ok' if f.get('ok') else 'FAIL'}] {_esc(str(f.get('check')))} {_esc(str(f.get('path')))}: "
            f"{_esc(str(f.get('detail')))}</li>"
            for f in data.get("structural", [])
        )
        parts.append(
            f"<h3>round {_fmt(data.get('round'))}: {verdict} (decided by {_fmt(data.get('source'))})</h3>"
            f"<ul>{gaps}</ul>"
            + (f"<p>structural checks</p><ul>{structural}</ul>" if structural else "")
        )
    return "\n".join(parts) or '<p class="muted">The gate did not run.</p>'


def write_trajectory_html(run_dir: Path) -> Path:
    """trajectory.html in `run_dir`: the result, the final plan, the gate rounds and every turn with its screenshots."""
    run_dir = Path(run_dir)
    result_path = run_dir / "result.json"
    result = json.loads(result_path.read_text()) if result_path.exists() else {}
    events = load_events(run_dir)
    plans = [e for e in events if e.get("event") == "plan" and e.get("agent") == "main"]
    fields = (
        "task_id",
        "status",
        "score",
        "error",
        "cost_usd",
        "model_turns",
        "main_turns",
        "tool_uses",
        "delegations",
        "gui_steps",
        "gate_rounds",
        "gate_passed",
        "duration_s",
    )
    rows = [[_td(_esc(name)), _td(_fmt(result.get(name)))] for name in fields if name in result]
    plan = "".join(
        f"<li>[{_esc(i.get('status', '?'))}] {_esc(i.get('text', ''))}</li>"
        for i in (plans[-1]["items"] if plans else [])
    )
    body = [
        '<p><a href="../../report.html">suite report</a></p>'
        if run_dir.parent.name == "runs"
        else "",
        "<h2>Result</h2>",
        _table(["field", "value"], rows)
        if rows
        else '<p class="bad">No result.json: the run did not finish.</p>',
        "<h2>Plan</h2>",
        f"<ul>{plan}</ul>" if plan else '<p class="muted">No plan was written.</p>',
        "<h2>Gate rounds</h2>",
        _gate_rounds_html(run_dir),
        "<h2>Trajectory</h2>",
        "\n".join(_event_html(e) for e in events) or '<p class="muted">No events.</p>',
    ]
    path = run_dir / "trajectory.html"
    path.write_text(
        _page(f"Run {result.get('task_id', run_dir.name)}", "\n".join(body)), encoding="utf-8"
    )
    return path
