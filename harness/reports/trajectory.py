"""trajectory.html of one run: the result, the final plan, a timeline of turns, the gate rounds with
their evidence and the layer of each gap, and every turn with its screenshots as thumbnails."""

from __future__ import annotations

import json
from pathlib import Path

from harness.kernel.records import RESULT_FIELDS, load_events

from . import svg
from .page import esc, fmt, money, page, pre, table, td
from .reasons import explain, verdict_word

# result.json's fields on the page; success repeats the score and tokens show in the timeline.
SHOWN_FIELDS = tuple(
    name for name in RESULT_FIELDS if name not in ("success", "input_tokens", "output_tokens")
)
VERDICTS = {True: "passed", False: "rejected", None: "inconclusive"}
ROUND_KEYS_SHOWN = {"round", "passed", "decided", "decided_by", "gaps", "gap_layers", "source"}


def _image_html(file: str) -> str:
    # A screenshot file lives in the run's images/; anything else (../, absolute) is not linked.
    name = str(file)
    if not name.startswith("images/") or ".." in name or "\\" in name:
        return f'<p class="muted">(image {esc(name)} outside the run folder)</p>'
    return (
        f'<a href="{esc(name)}" target="_blank" title="open full size">'
        f'<img class="thumb" src="{esc(name)}" alt="screenshot {esc(name)}" loading="lazy"></a>'
    )


def _blocks_html(blocks) -> str:
    out = []
    for block in blocks or []:
        if not isinstance(block, dict):
            out.append(pre(json.dumps(block, default=str)))
            continue
        kind = block.get("type")
        if kind == "text":
            out.append(pre(block.get("text", "")))
        elif kind == "image":
            out.append(
                _image_html(block["file"]) if block.get("file") else '<p class="muted">(image)</p>'
            )
        elif kind == "tool_use":
            arguments = json.dumps(block.get("input"), indent=2, ensure_ascii=False, default=str)
            out.append(
                f"<p><b>call</b> <code>{esc(str(block.get('name')))}</code></p>{pre(arguments)}"
            )
        elif kind == "tool_result":
            css = "result error" if block.get("is_error") else "result"
            label = "error" if block.get("is_error") else "result"
            content = block.get("content") or []
            inner = _blocks_html(content if isinstance(content, list) else [content])
            out.append(f'<div class="{css}"><p><b>{label}</b></p>{inner}</div>')
        elif kind in ("thinking", "redacted_thinking"):
            out.append(
                f"<details><summary>thinking</summary>{pre(block.get('thinking', ''))}</details>"
            )
        else:
            out.append(pre(json.dumps(block, default=str)))
    return "\n".join(out)


def turn_spans(events: list[dict]) -> dict[int, tuple[float, float, float]]:
    """Per model_turn event index: (start s from the run's first event, duration s, cost $).

    A turn runs from the event before it (the model was thinking) to the tool results after it
    (its tools ran), so the spans tile the run's time.
    """
    times = [e.get("time") for e in events]
    known = [t for t in times if isinstance(t, int | float)]
    if not known:
        return {}
    origin = min(known)
    spans = {}
    for i, event in enumerate(events):
        if event.get("event") != "model_turn" or not isinstance(times[i], int | float):
            continue
        start = next(
            (times[j] for j in range(i - 1, -1, -1) if isinstance(times[j], int | float)), times[i]
        )
        end = times[i]
        following = events[i + 1] if i + 1 < len(events) else {}
        if following.get("event") == "tool_results" and isinstance(
            following.get("time"), int | float
        ):
            end = following["time"]
        cost = float((event.get("usage") or {}).get("cost_usd") or 0.0)
        spans[i] = (start - origin, max(0.0, end - start), cost)
    return spans


def _event_html(event: dict, span: tuple[float, float, float] | None) -> str:
    kind, agent = event.get("event"), str(event.get("agent", ""))
    css = "turn gate" if agent.startswith("gate") else "turn"
    if kind == "task":
        return (
            f'<div class="{css}"><h3>{esc(agent)}: '
            f"task</h3>{_blocks_html(event.get('content'))}</div>"
        )
    if kind == "model_turn":
        timing = f" · {span[1]:.1f} s · ${span[2]:.4f}" if span else ""
        return (
            f'<div class="{css}"><h3>{esc(agent)} turn {fmt(event.get("turn"))}{timing}</h3>'
            f"{_blocks_html(event.get('content'))}</div>"
        )
    if kind == "tool_results":
        return f'<div class="{css}">{_blocks_html(event.get("content"))}</div>'
    if kind == "plan":
        items = "".join(
            f"<li>[{esc(i.get('status', '?'))}] {esc(i.get('text', ''))}</li>"
            for i in event.get("items", [])
            if isinstance(i, dict)
        )
        return f'<div class="turn"><h3>plan ({esc(agent)})</h3><ul>{items}</ul></div>'
    if kind == "gate_round":
        verdict = VERDICTS.get(event.get("passed"), "?")
        gaps = _gaps_html(event.get("gaps") or [], event.get("layers") or [])
        return (
            f'<div class="turn gate"><h3>gate round {fmt(event.get("round"))}: {verdict}</h3>'
            f"{gaps}</div>"
        )
    if kind == "judge_call":  # a checker's judge model: what it read and what it answered
        answer = event.get("answer")
        said = "no answer (the call failed)" if not answer else answer
        return (
            f'<div class="turn gate"><h3>judge {esc(str(event.get("model", "?")))}</h3>'
            f"<pre>{esc(str(event.get('user', '')))}</pre><p>{esc(said)}</p></div>"
        )
    if kind in ("end", "compaction", "resumed", "setup_done"):
        details = {k: v for k, v in event.items() if k not in ("event", "agent", "time", "content")}
        text = esc(json.dumps(details, default=str)[:500])
        return f'<p class="muted">{esc(kind)} ({esc(agent)}): {text}</p>'
    return ""


def _gaps_html(gaps: list, layers: list) -> str:
    if not gaps:
        return '<ul><li class="muted">no gaps</li></ul>'
    items = []
    for n, gap in enumerate(gaps):
        text = gap.get("text") if isinstance(gap, dict) else gap
        layer = (
            gap.get("layer") if isinstance(gap, dict) else (layers[n] if n < len(layers) else None)
        )
        tag = f'<span class="layer">{esc(layer)}</span> ' if layer else ""
        items.append(f"<li>{tag}{esc(str(text))}</li>")
    return f"<ul>{''.join(items)}</ul>"


def _gate_rounds_html(run_dir: Path) -> str:
    parts = []
    paths = [p for p in (run_dir / "gate").glob("round-*.json") if p.stem[6:].isdigit()]
    for path in sorted(paths, key=lambda p: int(p.stem[6:])):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if not isinstance(data, dict):
            continue
        verdict = VERDICTS.get(data.get("passed"), "?")
        decided = data.get("decided_by") or data.get("source")
        structural = "".join(
            f"<li>[{'ok' if f.get('ok') else 'FAIL'}] {esc(str(f.get('check')))} "
            f"{esc(str(f.get('path')))}: {esc(str(f.get('detail')))}</li>"
            for f in data.get("structural") or []
            if isinstance(f, dict)
        )
        evidence = {k: v for k, v in data.items() if k not in ROUND_KEYS_SHOWN | {"structural"}}
        evidence_html = "".join(
            f"<details><summary>{esc(key)}</summary>"
            f"{pre(json.dumps(value, indent=2, ensure_ascii=False, default=str))}</details>"
            for key, value in evidence.items()
            if value not in (None, [], {}, "")
        )
        parts.append(
            f"<h3>round {fmt(data.get('round'))}: {verdict} (decided by {fmt(decided)})</h3>"
            + _gaps_html(data.get("gaps") or [], data.get("gap_layers") or [])
            + (f"<p>structural checks</p><ul>{structural}</ul>" if structural else "")
            + (f"<p>evidence</p>{evidence_html}" if evidence_html else "")
        )
    return "\n".join(parts) or '<p class="muted">The gate did not run.</p>'


def _last_round_gaps(run_dir: Path) -> list:
    rounds = [p for p in (run_dir / "gate").glob("round-*.json") if p.stem[6:].isdigit()]
    if not rounds:
        return []
    try:
        data = json.loads(max(rounds, key=lambda p: int(p.stem[6:])).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return []
    return list(data.get("gaps") or []) if isinstance(data, dict) else []


def _why_html(result: dict) -> str:
    if not result:
        return ""
    lines = explain(result)
    if not lines:
        return '<p class="ok">Succeeded: the checker scored 1.</p>'
    items = "".join(f"<li>{esc(line)}</li>" for line in lines)
    return f'<h2>Why it did not succeed</h2><ul class="why bad">{items}</ul>'


def _metrics_html(result: dict) -> str:
    metrics = [m for m in result.get("metrics") or [] if isinstance(m, dict)]
    if not metrics:
        return '<p class="muted">No checker ran (no evaluator, or the run never got there).</p>'
    rows = []
    for m in metrics:
        inputs = m.get("inputs") or {}
        options = inputs.get("options")
        rows.append(
            [
                td(f"<code>{esc(str(m.get('name')))}</code>"),
                td(esc(verdict_word(m.get("value"))), css="ok" if m.get("value") == 1 else "bad"),
                td(fmt(m.get("value")), True),
                td(esc(str(inputs.get("result", "–")))),
                td(esc(str(inputs.get("expected", "–")))),
                td(esc(json.dumps(options, default=str)[:300]) if options else "–"),
                td(esc(str(m.get("error") or "–"))),
            ]
        )
    headers = ["metric", "verdict", "value", "result (fetched)", "expected", "options", "reason"]
    return table(headers, rows)


def _timeline_html(events: list[dict], spans: dict) -> str:
    if not spans:
        return '<p class="muted">No model turns.</p>'
    bars = [
        (f"{events[i].get('agent', '?')} {events[i].get('turn', '')}".strip(), *span)
        for i, span in spans.items()
    ]
    total = sum(s[1] for s in spans.values())
    cost = sum(s[2] for s in spans.values())
    return f"<p>{len(spans)} model turns · {total:.1f} s · ${cost:.4f}</p>" + svg.timeline(
        bars, "timeline of turns"
    )


def write_trajectory_html(run_dir: Path) -> Path:
    """trajectory.html in `run_dir`: result, plan, timeline, gate rounds and every turn."""
    path = Path(run_dir) / "trajectory.html"
    path.write_text(trajectory_html(run_dir), encoding="utf-8")
    return path


def trajectory_html(run_dir: Path, script: str = "", report_link: str | None = None) -> str:
    """The trajectory page as text (`stateact view` serves it live with its own `script`)."""
    run_dir = Path(run_dir)
    result_path = run_dir / "result.json"
    try:
        result = json.loads(result_path.read_text(encoding="utf-8")) if result_path.exists() else {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        result = {}
    result = result if isinstance(result, dict) else {}
    events = [e for e in load_events(run_dir) if isinstance(e, dict)]
    spans = turn_spans(events)
    plans = [e for e in events if e.get("event") == "plan" and e.get("agent") == "main"]
    rows = [
        [td(esc(name)), td(money(result[name]) if name == "cost_usd" else fmt(result[name]))]
        for name in SHOWN_FIELDS
        if name in result
    ]
    plan = "".join(
        f"<li>[{esc(i.get('status', '?'))}] {esc(i.get('text', ''))}</li>"
        for i in (plans[-1].get("items") or [] if plans else [])
        if isinstance(i, dict)
    )
    body = [
        f'<p><a href="{esc(report_link)}">suite report</a></p>'
        if report_link
        else '<p><a href="../../report.html">suite report</a></p>'
        if run_dir.parent.name == "runs"
        else "",
        _why_html({**result, "gate_gaps": _last_round_gaps(run_dir)}),
        "<h2>Result</h2>",
        table(["field", "value"], rows)
        if rows
        else '<p class="bad">No result.json: the run did not finish.</p>',
        "<h2>Plan</h2>",
        f"<ul>{plan}</ul>" if plan else '<p class="muted">No plan was written.</p>',
        "<h2>Timeline</h2>",
        _timeline_html(events, spans),
        "<h2>Checker</h2>",
        _metrics_html(result),
        "<h2>Gate rounds</h2>",
        _gate_rounds_html(run_dir),
        "<h2>Trajectory</h2>",
        "\n".join(_event_html(e, spans.get(i)) for i, e in enumerate(events))
        or '<p class="muted">No events.</p>',
    ]
    title = f"Run {result.get('task_id', run_dir.name)}"
    return page(title, "\n".join(body), script=script)
