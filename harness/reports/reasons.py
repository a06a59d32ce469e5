"""Why a run did not succeed, in words: from its status, error, the checker's metrics and the
gate's last gaps (pure functions over a result dict, as result.json and results.jsonl hold it)."""

from __future__ import annotations

import re

REASON_CHARS = 90
STATUS_WORDS = {
    "completed": "the agent finished",
    "infeasible": "the agent declared the task infeasible",
    "gate_rejected": "the finish gate rejected the work every round",
    "max_turns": "the turn budget ran out",
    "cost_limit": "the cost budget ran out",
    "time_limit": "the time budget ran out",
    "stalled": "the run stalled",
    "script_exhausted": "the scripted model ran out of turns",
    "model_error": "the model API failed",
    "sandbox_error": "the sandbox failed",
    "setup_error": "the task's setup failed",
    "invalid_task": "the task file is invalid",
    "unsupported": "the task cannot run here",
    "node_lost": "the Ray node running it was lost",
    "error": "the harness hit an error",
}


def verdict_word(value) -> str:
    if not isinstance(value, int | float):
        return "not computed"
    return "passed" if value >= 1.0 else "failed" if value <= 0.0 else "partly passed"


def failed_metrics(result: dict) -> list[dict]:
    return [
        m
        for m in result.get("metrics") or []
        if isinstance(m, dict) and (m.get("error") or (m.get("value") or 0.0) < 1.0)
    ]


def metric_sentence(metric: dict) -> str:
    """`check_include_exclude failed (0): …` with the metric's own error, or what it compared."""
    name, value = metric.get("name"), metric.get("value")
    head = f"{name} {verdict_word(value)} ({value})"
    if metric.get("error"):
        return f"{head}: {metric['error']}"
    inputs = metric.get("inputs") or {}
    if "result" in inputs:
        seen = f"the result was {inputs['result']}"
        if "expected" in inputs:
            seen += f", expected {inputs['expected']}"
        return f"{head}: {seen}"
    return head


def last_gaps(result: dict) -> list[str]:
    gaps = result.get("gate_gaps") or []
    return [str(g.get("text") if isinstance(g, dict) else g) for g in gaps]


def explain(result: dict) -> list[str]:
    """Sentences saying why the run did not succeed (empty when it did)."""
    if result.get("success"):
        return []
    status = str(result.get("status"))
    lines = [f"{status}: {STATUS_WORDS.get(status, 'the run ended')}."]
    if result.get("error"):
        lines.append(str(result["error"]).strip())
    for metric in failed_metrics(result):
        lines.append("checker: " + metric_sentence(metric))
    if result.get("gate_passed") is False:
        rounds = result.get("gate_rounds")
        lines.append(f"the finish gate's last round (of {rounds}) rejected it")
        lines += [f"gate gap: {gap}" for gap in last_gaps(result)]
    score = result.get("score")
    if len(lines) == 1 and isinstance(score, int | float):
        lines.append(f"the checker scored {score}")
    return lines


def _blank(text: str) -> str:
    return re.sub(r"\d+(\.\d+)?", "N", text)[:REASON_CHARS]


def failure_reason(result: dict) -> str:
    """A group name for alike failures: the status with the error's first line, else the failed
    metric, else the gate's verdict, else the score (numbers blanked)."""
    status = str(result.get("status"))
    error = str(result.get("error") or "").strip().splitlines()
    if error:
        return f"{status}: {_blank(error[0])}"
    failed = failed_metrics(result)
    if failed:
        first = failed[0]
        return f"{status}: checker {first.get('name')} {verdict_word(first.get('value'))}"
    if result.get("gate_passed") is False:
        return f"{status}: the finish gate rejected it"
    score = result.get("score")
    if isinstance(score, int | float):
        return f"{status}: scored {_blank(str(score))} with no metric error"
    return f"{status}: {STATUS_WORDS.get(status, 'not scored')}"
