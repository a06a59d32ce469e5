"""A user's corrective subgoal for a running `andor` tree: `inject.json` in the run directory
(`{"goal": ..., "parent"?: node id, "probe"?: {...}}`), consumed once and renamed
`inject.consumed-N.json`; a bad file is consumed with the reason recorded."""

from __future__ import annotations

import json
from pathlib import Path

from gates.probes import validate_probe
from harness.kernel.core import ToolError

from .tree import Node, Tree


class Injections:
    """Takes the waiting injection, if any, into the tree as a new action child."""

    def __init__(self, run_dir: Path | None, record=None):
        self.path = Path(run_dir) / "inject.json" if run_dir else None
        self.record = record
        self.count = 0

    def take(self, tree: Tree) -> Node | None:
        path = self.path
        if path is None or not path.exists():
            return None
        try:
            request = json.loads(path.read_text())
            goal, parent_id = request["goal"], str(request.get("parent") or tree.root.id)
            if not isinstance(goal, str) or not goal.strip():
                raise ValueError("`goal` must be a non-empty string")
        except (ValueError, KeyError, TypeError) as exc:
            return self._consume(error=f"inject.json is not usable: {exc}")
        parent = tree.find(parent_id)
        if parent is not None and parent.kind is None:
            return None  # not expanded yet: the injection waits for its structure
        if parent is None or parent.kind != "and" or parent.status != "active":
            return self._consume(error=f"node {parent_id} is not an active AND node")
        probe = request.get("probe")
        if probe is not None:
            try:
                probe = validate_probe(probe).model_dump()
            except ToolError as exc:
                return self._consume(error=str(exc))
        child = parent.add_child(goal.strip(), probe=probe, kind="action", injected=True)
        self._consume(node=child.id)
        return child

    def _consume(self, **details) -> None:
        self.count += 1
        self.path.rename(self.path.with_name(f"inject.consumed-{self.count}.json"))
        if self.record is not None:
            self.record.append("inject", agent="planner", **details)
