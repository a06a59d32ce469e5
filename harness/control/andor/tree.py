"""The AND/OR tree of the `andor` mode (StructuredAgent): nodes, statuses, saving and drawing.

An AND node's children are ordered subgoals that must all succeed; an OR node's children are
ranked alternative strategies of which one must succeed; an action node is a subgoal one worker
carries out. Statuses: pending (not yet reached), entering (being expanded), active (children or
worker running), succeeded, failed, pruned (removed: irrelevant, or a sibling of a failed AND
child). A repaired node keeps its failed children for the record but `retired`, so they no longer
count.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.kernel.records import write_json_atomic

STATUSES = ("pending", "entering", "active", "succeeded", "failed", "pruned")
MARKS = {
    "pending": "[ ]",
    "entering": "[~]",
    "active": "[>]",
    "succeeded": "[+]",
    "failed": "[x]",
    "pruned": "[-]",
}


@dataclass
class Node:
    """One subgoal in the tree."""

    id: str
    goal: str
    kind: str | None = None
    """and, or, action; None until expanded."""
    status: str = "pending"
    revisions: int = 0
    """Repairs this node has had (bounded by the revision budget)."""
    probe: dict | None = None
    """A typed probe that decides an action node, when the expansion gave one."""
    report: str = ""
    """The worker's report (actions) or why the node ended as it did."""
    agent: str | None = None
    """Who carries out an action node: None or `worker` (code tools), `web` or `gui`."""
    score: float | None = None
    """An OR alternative's estimated chance of success (the planner's score; higher runs first)."""
    retired: bool = False
    """Deleted by a repair (kept for the record; it no longer counts)."""
    injected: bool = False
    from_repair: bool = False
    """Added by a repair, not by the original expansion (plan preservation counts the others)."""
    children: list[Node] = field(default_factory=list)

    def live_children(self) -> list[Node]:
        return [c for c in self.children if not c.retired and c.status != "pruned"]

    def add_child(
        self,
        goal: str,
        *,
        probe: dict | None = None,
        kind: str | None = None,
        injected: bool = False,
        agent: str | None = None,
        from_repair: bool = False,
    ) -> Node:
        child = Node(
            f"{self.id}.{len(self.children) + 1}",
            goal,
            kind=kind,
            probe=probe,
            injected=injected,
            agent=agent,
            from_repair=from_repair,
        )
        self.children.append(child)
        return child

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Node:
        children = [cls.from_dict(c) for c in data.get("children", [])]
        return cls(**{**data, "children": children})


class Tree:
    """The tree plus its revision counter; saved as `tree.json` with a `tree.jsonl` history per
    step."""

    def __init__(self, goal: str, run_dir: Path | None = None):
        self.root = Node("1", goal)
        self.revisions = 0
        """Expansions, repairs and prunings so far (the paper's total revisions)."""
        self.run_dir = Path(run_dir) if run_dir else None
        self.steps = 0
        self.memory: dict = {}
        """The observation summarizer's candidate table (see `memory.py`)."""

    def walk(self, node: Node | None = None):
        node = node or self.root
        yield node
        for child in node.children:
            yield from self.walk(child)

    def find(self, node_id: str) -> Node | None:
        return next((n for n in self.walk() if n.id == node_id), None)

    def parent_of(self, node: Node) -> Node | None:
        return next((n for n in self.walk() if node in n.children), None)

    def depth(self, node: Node) -> int:
        return node.id.count(".")

    def prune(self, node: Node, why: str) -> None:
        """Prune `node` and every unfinished descendant."""
        for each in self.walk(node):
            if each.status not in ("succeeded", "failed"):
                each.status = "pruned"
        node.report = node.report or why
        self.revisions += 1

    def to_dict(self) -> dict:
        return {
            "revisions": self.revisions,
            "steps": self.steps,
            "memory": self.memory,
            "root": self.root.to_dict(),
        }

    def save(self, event: str, **details) -> None:
        """Write `tree.json` and append this step to `tree.jsonl`."""
        self.steps += 1
        if self.run_dir is None:
            return
        data = self.to_dict()
        write_json_atomic(self.run_dir / "tree.json", data)
        line = {
            "step": self.steps,
            "time": round(time.time(), 3),
            "event": event,
            **details,
            "tree": data,
        }
        with open(self.run_dir / "tree.jsonl", "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, default=str) + "\n")

    @classmethod
    def load(cls, run_dir: Path) -> Tree | None:
        path = Path(run_dir) / "tree.json"
        if not path.exists():
            return None
        data = json.loads(path.read_text())
        tree = cls("", run_dir)
        tree.root = Node.from_dict(data["root"])
        tree.revisions, tree.steps = data.get("revisions", 0), data.get("steps", 0)
        tree.memory = data.get("memory") or {}
        return tree


def tree_metrics(tree: Tree, or_switches: int, actions: int) -> dict:
    """What the paper's tree analysis counts (App. D, "Metric Definitions"): nodes (retired ones
    included), the deepest node, repairs, OR switches (an OR node moving to its next alternative
    after one failed), pruned nodes, executed action nodes, revisions, and three rates:

    - tree_efficiency: nodes neither pruned nor deleted (retired by a repair, or under a retired
      node) over all nodes;
    - plan_preservation: nodes of the original plan (not added by a repair) not deleted, over the
      nodes of the original plan;
    - recovery_rate: repair attempts that restored the failed node to a passing state (a repaired
      node that ended succeeded: its last repair restored it) over repair attempts; 0 when no
      repair was attempted, the paper's convention."""
    nodes = list(tree.walk())
    deleted = _deleted(tree.root)
    planned = [n for n in nodes if not n.from_repair]
    repairs = sum(n.revisions for n in nodes)
    restored = sum(n.revisions > 0 and n.status == "succeeded" for n in nodes)
    live = [n for n in nodes if n.status != "pruned" and id(n) not in deleted]
    return {
        "nodes": len(nodes),
        "depth": max(tree.depth(n) for n in nodes),
        "repairs": repairs,
        "or_switches": or_switches,
        "pruned": sum(n.status == "pruned" for n in nodes),
        "actions": actions,
        "revisions": tree.revisions,
        "tree_efficiency": _rate(len(live), len(nodes)),
        "plan_preservation": _rate(sum(id(n) not in deleted for n in planned), len(planned)),
        "recovery_rate": _rate(restored, repairs) if repairs else 0.0,
    }


def _deleted(node: Node, inherited: bool = False) -> set[int]:
    """The ids (`id()`) of the nodes a repair deleted: retired ones and everything under them."""
    gone = inherited or node.retired
    found = {id(node)} if gone else set()
    for child in node.children:
        found |= _deleted(child, gone)
    return found


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else 0.0


def draw_tree(data: dict) -> list[str]:
    """An ASCII drawing of a saved tree (`tree.json`'s content), one line per node."""
    lines = [f"AND/OR tree ({data.get('revisions', 0)} revisions, {data.get('steps', 0)} steps):"]

    def label(node: dict) -> str:
        kind = (node.get("kind") or "?").upper()
        extras = [node["status"]]
        if node.get("revisions"):
            extras.append(f"rev {node['revisions']}")
        if node.get("retired"):
            extras.append("retired")
        if node.get("injected"):
            extras.append("injected")
        if node.get("agent") not in (None, "worker"):
            extras.append(f"by {node['agent']}")
        if node.get("score") is not None:
            extras.append(f"score {node['score']:.2f}")
        return (
            f"{MARKS.get(node['status'], '[?]')} {node['id']} {kind} {node['goal'][:70]} "
            f"({', '.join(extras)})"
        )

    def draw(node: dict, prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("└─ " if last else "├─ ")
        lines.append(f"  {prefix}{branch}{label(node)}")
        children = node.get("children", [])
        inner = prefix if top else prefix + ("   " if last else "│  ")
        for n, child in enumerate(children):
            draw(child, inner, n == len(children) - 1, False)

    draw(data["root"], "", True, True)
    return lines
