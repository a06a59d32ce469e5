"""Strict parsing of the planner's JSON answers in the `andor` mode (probes validated on the way in)."""

from __future__ import annotations

from gates.probes import validate_probe
from harness.kernel.core import ToolError

MAX_CHILDREN = 6


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
        children.append({"goal": item["goal"].strip(), "probe": probe, "type": item.get("type")})
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
        return {"type": "action", "probe": probe}
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
