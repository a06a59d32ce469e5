"""The texts and parsers of the `lstc` mode's Step Abstraction and context refinement (the calls
are in `step.py`): the request showing one action's outcome and file diff, the strict parsers of
the answers, and the plain first/last-lines evidence line an unusable answer falls back to.
"""

from __future__ import annotations

EVIDENCE_CHARS = 240
OUTPUT_CHARS = 3000


def abstract_step(tool: str, command: str, ok: bool, output: str) -> str:
    """One evidence line from an outcome: the action, ok or error, the output's first/last lines."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    shown = lines if len(lines) <= 4 else [*lines[:2], "...", *lines[-2:]]
    text = " | ".join(shown) or "(no output)"
    command = " ".join(command.split())
    return f"{tool} `{command[:80]}` -> {'ok' if ok else 'ERROR'}: {text}"[:EVIDENCE_CHARS]


def parse_abstraction(value) -> dict:
    if not isinstance(value, dict) or not isinstance(value.get("evidence"), str):
        raise ValueError('expected {"evidence": "one line", "changed": true | false}')
    if not value["evidence"].strip():
        raise ValueError("`evidence` must not be empty")
    if not isinstance(value.get("changed"), bool):
        raise ValueError("`changed` must be true or false")
    return {
        "evidence": " ".join(value["evidence"].split())[:EVIDENCE_CHARS],
        "changed": value["changed"],
    }


def parse_refinement(value) -> dict:
    if not isinstance(value, dict) or not isinstance(value.get("summary"), str):
        raise ValueError('expected {"summary": "...", "evidence": ["...", ...]}')
    evidence = value.get("evidence", [])
    if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
        raise ValueError("`evidence` must be a list of strings")
    return {
        "summary": value["summary"].strip()[:1500],
        "evidence": [e[:EVIDENCE_CHARS] for e in evidence[:6]],
    }


def abstraction_request(
    subgoal: str, tool: str, command: str, ok: bool, output: str, diff: list[str]
) -> str:
    changed = "\n".join(f"- {line}" for line in diff[:20]) or "- (no file changed)"
    return (
        f"SUBGOAL: {subgoal or '(none)'}\nACTION: {tool} {command[:500]}\n"
        f"RESULT: {'ok' if ok else 'ERROR'}\n"
        f"OUTPUT:\n{output[-OUTPUT_CHARS:] or '(no output)'}\nFILES CHANGED BY IT:\n{changed}"
    )
