"""table.md and table.html of an experiment, rendered from table.json's content (nothing is
computed here, so the three files always agree)."""

from __future__ import annotations

import html
import json

ARM_COLUMNS = (
    ("arm", "name"),
    ("runs", "runs"),
    ("binary", "binary_success"),
    ("partial", "partial_success"),
    ("$/task", "cost_per_task"),
    ("$/task median", "cost_per_task_median"),
    ("$ total", "cost_total"),
    ("out tokens", "output_tokens"),
    ("turns", "model_turns"),
    ("wall s", "wall_time_s"),
    ("GUI tasks", "gui_task_share"),
    ("GUI steps", "gui_step_share"),
    ("gate rounds", "gate_rounds"),
    ("false pass struct.", "gate_false_pass_structural"),
    ("false pass value", "gate_false_pass_value"),
    ("false reject", "gate_false_reject"),
)
PAIR_COLUMNS = (
    ("a", "a"),
    ("b", "b"),
    ("tasks", "tasks"),
    ("binary a-b", "binary_diff"),
    ("95% CI", "binary_ci"),
    ("partial a-b", "partial_diff"),
    ("95% CI ", "partial_ci"),
    ("cost a/b", "cost_ratio"),
)
SHARES = {
    "binary_success",
    "partial_success",
    "gui_task_share",
    "gui_step_share",
    "gate_false_pass_structural",
    "gate_false_pass_value",
    "gate_false_reject",
}


def cell(key: str, value) -> str:
    if value is None:
        return "–"
    if isinstance(value, list):
        return "[" + ", ".join(f"{v:+.3f}" for v in value) + "]"
    if key in SHARES:
        return f"{value * 100:.1f}%"
    if key.startswith("cost"):
        return f"{value:.4f}"
    if key in ("binary_diff", "partial_diff"):
        return f"{value:+.3f}"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _rows(columns, records) -> list[list[str]]:
    return [[cell(key, record.get(key)) for _, key in columns] for record in records]


def _markdown_table(columns, records) -> str:
    head = "| " + " | ".join(title for title, _ in columns) + " |"
    rule = "|" + "---|" * len(columns)
    body = ["| " + " | ".join(row) + " |" for row in _rows(columns, records)]
    return "\n".join([head, rule, *body])


def _domain_records(table: dict) -> list[dict]:
    records = []
    for domain, arms in table["by_domain"].items():
        for name, row in arms.items():
            if row["runs"]:
                records.append({**row, "name": f"{domain} · {name}"})
    return records


def render_markdown(table: dict) -> str:
    parts = ["# Experiment", "", "## Arms", "", _markdown_table(ARM_COLUMNS, table["arms"])]
    parts += ["", "## Per domain", "", _markdown_table(ARM_COLUMNS[:4], _domain_records(table))]
    parts += ["", "## Pairs (tasks both arms finished)", ""]
    parts.append(_markdown_table(PAIR_COLUMNS, table["pairs"]) if table["pairs"] else "(one arm)")
    parts += ["", "## Arms' options", ""]
    for arm in table["arms"]:
        options = json.dumps(arm.get("options", {}), sort_keys=True)
        parts.append(
            f"- **{arm['name']}**: model `{arm.get('model')}`, StateAct "
            f"{arm.get('stateact_version')}, trials {arm.get('trials')}, options `{options}`"
        )
    return "\n".join(parts) + "\n"


def _html_table(columns, records) -> str:
    head = "".join(f"<th>{html.escape(title)}</th>" for title, _ in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(value)}</td>" for value in row) + "</tr>"
        for row in _rows(columns, records)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_html(table: dict) -> str:
    options = "".join(
        f"<li><b>{html.escape(arm['name'])}</b>: model <code>{html.escape(str(arm.get('model')))}"
        f"</code>, StateAct {html.escape(str(arm.get('stateact_version')))}, trials "
        f"{html.escape(str(arm.get('trials')))}, options <code>"
        f"{html.escape(json.dumps(arm.get('options', {}), sort_keys=True))}</code></li>"
        for arm in table["arms"]
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Experiment</title><style>"
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
        "td:first-child,th:first-child{text-align:left}</style></head><body>"
        "<h1>Experiment</h1><h2>Arms</h2>"
        f"{_html_table(ARM_COLUMNS, table['arms'])}<h2>Per domain</h2>"
        f"{_html_table(ARM_COLUMNS[:4], _domain_records(table))}"
        f"<h2>Pairs (tasks both arms finished)</h2>{_html_table(PAIR_COLUMNS, table['pairs'])}"
        f"<h2>Arms' options</h2><ul>{options}</ul></body></html>\n"
    )
