"""The `andor` mode's tool-less questions to the planner model (StructuredAgent §3): expand a
node, repair a failed one, check a finished action, update the tree after progress, summarize an
action's observations into the candidate table, and score an OR node's alternatives. A mixin of
`AndOrController`, reading its tree, notes, candidate table and settings."""

from __future__ import annotations

import logging

from ..jsonask import prompt
from .memory import parse_observation
from .parse import parse_check, parse_children, parse_expansion, parse_scores, parse_update
from .tree import Node, draw_tree

log = logging.getLogger(__name__)


class TreeQuestions:
    """Expansion, repair, checks, updates, observation and scoring (see the module docstring)."""

    def _context(self, node: Node, extra: str = "") -> str:
        tree = "\n".join(draw_tree(self.tree.to_dict()))
        notes = "\n".join(f"- {n}" for n in self.notes[-8:]) or "(none yet)"
        table = self.candidates.render()
        table = f"<memory>\n{table}\n</memory>\n\n" if table else ""
        return (
            f"<task>\n{self.instruction}\n</task>\n\n<tree>\n{tree}\n</tree>\n\n<progress-notes>\n{notes}\n"
            f"</progress-notes>\n\n{table}"
            f'<node id="{node.id}" depth="{self.tree.depth(node)}" '
            f'max-depth="{self.settings.max_depth}">\n{node.goal}\n</node>{extra}'
        )

    def _expand(self, node: Node) -> None:
        self.tree.revisions += 1
        if self.tree.depth(node) >= self.settings.max_depth:
            node.kind = "action"
            return
        value, error = self.ask.ask(
            prompt("andor_expand.md"), self._context(node), parse_expansion, f"expand {node.id}"
        )
        if value is None:
            log.info("expansion of %s unusable (%s); running it as one action", node.id, error)
            node.kind, node.report = "action", f"expansion unusable: {error}"
            return
        node.kind = value["type"]
        if node.kind == "action":
            node.probe = value.get("probe") or node.probe
            node.agent = value.get("agent") or node.agent
        for child in value.get("children", []):
            self._add_child(node, child)

    @staticmethod
    def _add_child(node: Node, child: dict, from_repair: bool = False) -> None:
        kind = "action" if child.get("type") == "action" or child.get("agent") else None
        node.add_child(
            child["goal"],
            probe=child.get("probe"),
            kind=kind,
            agent=child.get("agent"),
            from_repair=from_repair,
        )

    def _repair(self, node: Node) -> bool:
        failures = [
            f"- {c.id} ({c.status}): {c.goal} -> {c.report[:400]}"
            for c in node.live_children()
            if c.status == "failed"
        ]
        extra = (
            "\n\n<failure>\n"
            + ("\n".join(failures) or node.report[:1500] or "(no details)")
            + "\n</failure>"
        )
        value, error = self.ask.ask(
            prompt("andor_repair.md"),
            self._context(node, extra),
            parse_children,
            f"repair {node.id}",
        )
        if not value:
            node.report = f"repair gave nothing usable: {error}" if error else "the repair gave up"
            return False
        for child in node.children:
            if child.status != "succeeded":
                child.retired = True
        for child in value:
            self._add_child(node, child, from_repair=True)
        node.revisions += 1
        self.tree.revisions += 1
        self._record(
            "andor_repair",
            node=node.id,
            revision=node.revisions,
            children=[c["goal"] for c in value],
        )
        return True

    def _completion_check(self, node: Node, evidence: str) -> tuple[bool, str]:
        extra = (
            f"\n\n<report>\n{node.report[:3000]}\n</report>\n\n<evidence>\n{evidence}\n</evidence>"
        )
        value, error = self.ask.ask(
            prompt("andor_check.md"), self._context(node, extra), parse_check, f"check {node.id}"
        )
        if value is None:
            return False, f"the completion check gave no usable answer ({error})"
        return value["done"], value.get("reason", "")

    def _update_tree(self, node: Node) -> None:
        if not self.settings.tree_updates or not any(
            n.status == "pending" for n in self.tree.walk()
        ):
            return
        extra = f'\n\n<latest-report node="{node.id}">\n{node.report[:2000]}\n</latest-report>'
        value, _ = self.ask.ask(
            prompt("andor_update.md"),
            self._context(node, extra),
            parse_update,
            f"update after {node.id}",
        )
        for node_id in (value or {}).get("prune", []):
            target = self.tree.find(str(node_id))
            if target is not None and target.status == "pending" and target is not self.tree.root:
                self.tree.prune(target, "pruned by a tree update: no longer needed")
                self._unstack(target)
        for node_id, goal in (value or {}).get("rewrite", {}).items():
            target = self.tree.find(str(node_id))
            if (
                target is not None
                and target.status == "pending"
                and isinstance(goal, str)
                and goal.strip()
            ):
                target.goal = goal.strip()

    def _observe(self, node: Node) -> None:
        """The observation summarizer: merge what the report saw into the candidate table."""
        if not self.settings.track_candidates:
            return
        table = self.candidates.render() or "(empty)"
        extra = (
            f"\n\n<table>\n{table}\n</table>\n\n"
            f'<latest-report node="{node.id}">\n{node.report[:3000]}\n</latest-report>'
        )
        value, error = self.ask.ask(
            prompt("andor_observe.md"),
            self._context(node, extra),
            parse_observation,
            f"observe {node.id}",
        )
        if value is not None:
            self.candidates.merge(value, node.id)
            self._record("andor_candidates", node=node.id, table=self.tree.memory)

    def _best_alternative(self, node: Node, pending: list[Node]) -> list[Node]:
        """The OR alternative to run next: the best scored, asked for when more than one is left."""
        if len(pending) > 1:
            ids = [c.id for c in pending]
            listed = "\n".join(f"- {c.id}: {c.goal}" for c in pending)
            extra = f"\n\n<alternatives>\n{listed}\n</alternatives>"
            scores, error = self.ask.ask(
                prompt("andor_score.md"),
                self._context(node, extra),
                parse_scores(ids),
                f"score {node.id}",
            )
            for child in pending:
                child.score = (scores or {}).get(child.id, child.score)
            self._record("andor_scores", node=node.id, scores=scores, error=error)
        ranked = sorted(pending, key=lambda c: -1.0 if c.score is None else -c.score)
        return ranked[:1]
