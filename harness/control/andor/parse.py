"""Strict parsing of the planner's JSON answers in the `andor` mode (probes validated on the way
in)."""

from __future__ import annotations

from gates.probes import validate_probe
from harness.kernel.core import ToolError

MAX_CHILDREN = 6
AGENTS = ("worker", "web", "gui")


def checked_agent(item: dict, where: str) -> str | None:
    agent = item.get("agent")
    if agent is not None and agent not in AGENTS:
        raise ValueError(f"{where}: `agent` must be one of {', '.join(AGENTS)}, not {agent!r}")
    return agent


def checked_children(items, allow_empty: bool = False) -> list[dict]:
    if not isinstance(items, list) or (not items and not allow_empty):
        raise ValueError("`children` must be a non-empty list")
    children = []
    for index, item in enumerate(items[:MAX_CHILDREN], start=1):
        item = {"goal": item} if isinstance(item, str) else item
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("goal"), str)
            or not item["goal"].strip()
        ):
            raise ValueError(f"child {index} needs a non-empty `goal` string")
        probe = item.get("probe")
        if probe is not None:
            try:
                probe = validate_probe(probe).model_dump()
            except ToolError as exc:
                raise ValueError(f"child {index}: {exc}") from None
        children.append(
            {
                "goal": item["goal"].strip(),
                "probe": probe,
                "type": item.get("type"),
                "agent": checked_agent(item, f"child {index}"),
            }
        )
    return children


def parse_expansion(value) -> dict:
    if not isinstance(value, dict) or value.get("type") not in ("and", "or", "action"):
        raise ValueError('expected {"type": "and" | "or" | "action", ...}')
    if value["type"] == "action":
        probe = value.get("probe")
        if probe is not None:
            try:
                probe = validate_probe(probe).model_dump()
            except ToolError as exc:
                raise ValueError(str(exc)) from None
        return {"type": "action", "probe": probe, "agent": checked_agent(value, "the node")}
    return {"type": value["type"], "children": checked_children(value.get("children"))}


def parse_children(value) -> list[dict]:
    if isinstance(value, dict) and value.get("give_up"):
        return []
    if not isinstance(value, dict):
        raise ValueError('expected {"children": [...]} or {"give_up": true}')
    return checked_children(value.get("children"), allow_empty=True)


def parse_check(value) -> dict:
    if not isinstance(value, dict) or not isinstance(value.get("done"), bool):
        raise ValueError('expected {"done": true | false, "reason": "..."}')
    return value


def parse_update(value) -> dict:
    if not isinstance(value, dict):
        raise ValueError('expected {"prune": [...], "rewrite": {...}}')
    prune, rewrite = value.get("prune", []), value.get("rewrite", {})
    if not isinstance(prune, list) or not isinstance(rewrite, dict):
        raise ValueError("`prune` must be a list of node ids and `rewrite` an object of id -> goal")
    return {"prune": prune, "rewrite": rewrite}


def parse_scores(ids: list[str]):
    """A checker for `{"scores": {node id: 0..1}}` covering every id in `ids`."""

    def check(value) -> dict[str, float]:
        scores = value.get("scores") if isinstance(value, dict) else None
        if not isinstance(scores, dict):
            raise ValueError('expected {"scores": {"<node id>": 0.0 to 1.0, ...}}')
        missing = [node_id for node_id in ids if node_id not in scores]
        if missing:
            raise ValueError(f"give a score for every alternative; missing: {', '.join(missing)}")
        checked = {}
        for node_id in ids:
            score = scores[node_id]
            if (
                isinstance(score, bool)
                or not isinstance(score, (int, float))
                or not 0 <= score <= 1
            ):
                raise ValueError(f"the score of {node_id} must be a number from 0 to 1")
            checked[node_id] = float(score)
        return checked

    return check
