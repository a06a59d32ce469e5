"""The `andor` control mode: the framework owns an AND/OR tree and walks it depth first
(StructuredAgent).

The model is asked only tool-less JSON questions: expand a node, repair a failed one, score an OR
node's alternatives (the best-scored runs next, not the first listed), check a finished action,
summarize what an action observed into the candidate table (`memory.py`), update the tree
after progress. An action node is carried out by a code worker or the web or GUI specialist
(`actions.py`) and decided by its probe when it has one, else by a completion check. Action
nodes that repeat themselves or change nothing are stalls, answered as in the other modes:
feedback, then a forced repair of the node's parent, then the end of the run. Failures propagate
upward: a failed action prunes its unexecuted AND siblings; a failed AND/OR node is repaired
while its revision budget lasts (an OR node first tries its next alternative), else pruned and
its failure passes to its parent. The root ends through the finish gate. The tree is saved after
every step (`tree.json`, `tree.jsonl`), and a user can add a corrective subgoal by writing
`inject.json` (`{"goal": ..., "parent"?: node id, "probe"?: {...}}`) into the run directory; it
is consumed once.
"""

from __future__ import annotations

import logging
from pathlib import Path

from gates.probe_view import run_probe_read_only
from gates.probes import validate_probe
from harness.kernel.core import BudgetExceeded, Finished, StateActError, ToolError
from harness.kernel.loop import check_run_budgets
from harness.kernel.records import load_events
from harness.kernel.resume import _replay_calls

from ..finish import finish_review, open_task_state
from ..jsonask import JsonAsker
from ..memory import with_lessons
from ..registry import control_mode
from .actions import ActionRunner, NodeStallWatch
from .inject import Injections
from .memory import CandidateTable
from .ops import OpRunner
from .questions import TreeQuestions
from .tree import Node, Tree, draw_tree, tree_metrics

log = logging.getLogger(__name__)

ENTER, EXIT = "enter", "exit"

__all__ = ["AndOrController", "Node", "Tree", "draw_tree"]


class AndOrController(TreeQuestions):
    """Builds, walks and repairs the tree of one run."""

    def __init__(self, context, review, task_state=None):
        instruction = context.task.instruction
        self.instruction = with_lessons(context)  # what the planner and the nodes are told
        self.model = model = context.model
        self.sandbox = context.sandbox
        self.config = context.config
        self.settings = context.config.andor
        self.record = record = context.record
        self.stats = context.stats
        self.review = review
        self.task_state = task_state
        self.run_dir = Path(record.dir) if record else None
        self.tree = Tree(instruction, self.run_dir)
        self.ask = JsonAsker(model, context, agent="planner")
        self.stack: list[tuple[str, str]] = []
        self.actions = 0
        self.notes: list[str] = []
        self.injections = Injections(self.run_dir, record)
        self.runner = OpRunner(context) if self.settings.grain == "op" else ActionRunner(context)
        self.outcome = context.outcome
        self.or_switches = 0
        self.candidates = CandidateTable(self.tree.memory)
        self.watch = NodeStallWatch(context)

    # -- the walk ----------------------------------------------------------------------------------

    def run(
        self, resume: bool = False, since_event_index: int | None = None
    ) -> Finished | BudgetExceeded:
        if resume and self.run_dir and (restored := Tree.load(self.run_dir)) is not None:
            self._restore(restored, -1 if since_event_index is None else since_event_index)
        self.stack = [(self.tree.root.id, ENTER)]
        try:
            while self.stack:
                self._check_budgets()
                self._consume_injection()
                node_id, phase = self.stack.pop()
                node = self.tree.find(node_id)
                if node is None or node.retired or node.status in ("pruned", "succeeded"):
                    continue
                if phase == ENTER:
                    self._enter(node)
                else:
                    self._exit(node)
                self.tree.save(phase, node=node.id, status=node.status)
        except (Finished, BudgetExceeded) as end:
            self.tree.save("end", status=end.status)
            self._report_metrics()
            return end
        self._report_metrics()
        root = self.tree.root
        if root.status == "succeeded":
            return Finished("completed", root.report)
        return Finished(
            "tree_failed", f"the task's tree failed: {root.report or 'no strategy succeeded'}"
        )

    def _restore(self, tree: Tree, since: int) -> None:
        """Continue the saved tree; the workers' state-changing calls after `since` run again."""
        from types import SimpleNamespace

        self.tree = tree
        self.candidates = CandidateTable(tree.memory)
        for node in tree.walk():  # whatever was running when the run stopped runs again
            if node.status in ("entering", "active") and node.kind in (None, "action"):
                node.status = "pending"
            elif node.status == "succeeded" and node.kind == "action":
                self.notes.append(f"{node.id} {node.goal[:80]}: {node.report[:300]}")
        tools = SimpleNamespace(tools={t.name: t for t in self.runner.worker_tools()[:3]})
        replayed = 0
        for index, event in enumerate(load_events(self.run_dir)):
            if (
                event["event"] == "model_turn"
                and str(event.get("agent")).startswith("andor-")
                and index > since
            ):
                replayed += _replay_calls(
                    tools, [b for b in event["content"] if b.get("type") == "tool_use"]
                )
        self._record("resumed", replayed_calls=replayed, since_event_index=since)

    def _enter(self, node: Node) -> None:
        if node.kind is None:
            node.status = "entering"
            self.tree.save("entering", node=node.id)
            self._expand(node)
        node.status = "active"
        if node.kind == "action":
            self._execute(node)
            if node.status == "failed":
                self._child_failed(node)
            return
        self.stack.append((node.id, EXIT))
        self._push_next(node)

    def _push_next(self, node: Node) -> bool:
        """Push what `node` runs next: every pending AND child in order, or the next OR
        alternative."""
        pending = [c for c in node.live_children() if c.status == "pending"]
        if node.kind == "or":
            pending = self._best_alternative(node, pending)
        for child in reversed(pending):
            self.stack.append((child.id, ENTER))
        return bool(pending)

    def _exit(self, node: Node) -> None:
        live = node.live_children()
        if node.kind == "or" and not self.settings.alternatives:
            self._no_alternatives(node, live)
        if any(c.status == "pending" for c in live) and (
            node.kind == "and" or not any(c.status == "succeeded" for c in live)
        ):
            if node.kind == "or" and any(c.status == "failed" for c in live):
                self.or_switches += 1
                self._record("andor_or_switch", node=node.id)
            self.stack.append((node.id, EXIT))  # an OR's next alternative, or an injected AND child
            self._push_next(node)
            return
        if node.kind == "or":
            node.status = "succeeded" if any(c.status == "succeeded" for c in live) else "failed"
        else:
            node.status = (
                "succeeded" if live and all(c.status == "succeeded" for c in live) else "failed"
            )
        if node.status == "succeeded" and node is self.tree.root:
            self._finish_root(node)
        if node.status == "failed":
            self._failed(node)

    def _no_alternatives(self, node: Node, live: list[Node]) -> None:
        """`--andor-or off`: once an alternative failed, the OR node tries no other."""
        if any(c.status == "failed" for c in live):
            for child in live:
                if child.status == "pending":
                    self.tree.prune(child, "pruned: OR alternatives are off (--andor-or off)")

    def _repairable(self, node: Node) -> bool:
        return self.settings.repair and node.revisions < self.settings.revision_budget

    def _report_metrics(self) -> None:
        metrics = tree_metrics(self.tree, self.or_switches, self.actions)
        self._record("andor_metrics", **metrics)
        if self.outcome is not None:
            self.outcome.control_stats = {"tree": metrics}

    def _failed(self, node: Node) -> None:
        """Repair within the budget, else prune and pass the failure to the parent."""
        if self._repairable(node) and self._repair(node):
            node.status = "active"
            self.stack.append((node.id, EXIT))
            self._push_next(node)
            return
        node.status = "failed"
        for each in list(self.tree.walk(node))[1:]:
            if each.status not in ("succeeded", "failed", "pruned"):
                each.status = "pruned"
        self._child_failed(node)

    def _child_failed(self, node: Node) -> None:
        parent = self.tree.parent_of(node)
        if parent is None:
            if node.kind == "action":  # a root action has no parent to repair it
                self._failed_root_action(node)
            return
        if parent.kind == "and":  # the conjunction cannot hold any more: drop what has not run
            for sibling in parent.live_children():
                if sibling.status == "pending":
                    self.tree.prune(sibling, f"pruned: sibling {node.id} failed")
                    self._unstack(sibling)

    def _failed_root_action(self, root: Node) -> None:
        if self._repairable(root) and self._repair(root):
            root.kind, root.status = "and", "active"
            self.stack.append((root.id, EXIT))
            self._push_next(root)

    def _unstack(self, node: Node) -> None:
        ids = {n.id for n in self.tree.walk(node)}
        self.stack = [entry for entry in self.stack if entry[0] not in ids]

    # -- actions and the root
    # -----------------------------------------------------------------------

    def _execute(self, node: Node) -> None:
        self.actions += 1
        if self.actions > self.settings.max_actions:
            raise BudgetExceeded(
                "action_limit", f"the tree used its {self.settings.max_actions} action nodes"
            )
        done = "\n".join(f"- {n}" for n in self.notes[-8:]) or "(nothing yet)"
        table = self.candidates.render()
        done += f"\n\nWhat the summarizer keeps:\n{table}" if table else ""
        reported, node.report = self.runner.run(node, self.instruction, done)
        self.candidates.acted(node.id, node.goal, node.report)
        if not reported:
            node.status = "failed"
            self._watch(node)
            return
        self._observe(node)
        verdict, evidence = self._probe(node)
        if verdict is None:
            verdict, evidence = self._completion_check(node, evidence or "(no probe)")
        node.status = "succeeded" if verdict else "failed"
        if not verdict:
            node.report += f"\n[check failed: {evidence[:400]}]"
        if self.task_state is not None and self.config.task_state.boundary_checks:
            self.task_state.check_boundary(self.sandbox, f"boundary check after node {node.id}")
        if verdict:
            self.notes.append(f"{node.id} {node.goal[:80]}: {node.report[:300]}")
        self._watch(node)
        if node.status == "succeeded":
            self._update_tree(node)

    def _watch(self, node: Node) -> None:
        response, detail = self.watch.after_node(node)
        self._respond(response, detail, node)

    def _respond(self, response: str | None, detail: str, node: Node | None) -> None:
        if response == "feedback":
            self.notes.append(f"STALL: {detail}. Do not repeat it; change the approach.")
        elif response == "replan" and node is not None and node is not self.tree.root:
            node.status = "failed"  # its parent is repaired with the stall as the failure
            node.report += f"\n[stalled: {detail}; replan with a different method]"

    def _probe(self, node: Node) -> tuple[bool | None, str]:
        if not node.probe:
            return None, ""

        try:
            outcome = run_probe_read_only(validate_probe(node.probe), self.sandbox)
        except (ToolError, StateActError, OSError) as exc:
            return None, f"the probe could not run: {exc}"
        return outcome.verdict, outcome.evidence

    def _finish_root(self, root: Node) -> None:
        shortfall = self.candidates.shortfall() if self.settings.track_candidates else None
        if shortfall is not None:  # the seed's guard against stopping early on "find N" tasks
            root.status, root.report = "failed", f"not finished: {shortfall}"
            self._record("andor_shortfall", reason=shortfall)
            return
        summary = "; ".join(self.notes[-5:])[:2000]
        if self.review is not None:
            # raises Finished("gate_rejected") when its rounds run out
            rejection = self.review(summary)
            if rejection is not None:
                root.status, root.report = "failed", rejection
                self._respond(*self.watch.after_gate(rejection), None)
            return
        done, reason = self._completion_check(root, "\n".join(self.notes[-10:]))
        if not done:
            root.status, root.report = (
                "failed",
                f"the completion check found the task unfinished: {reason}",
            )

    # -- budgets and injection
    # ----------------------------------------------------------------------

    def _check_budgets(self) -> None:
        loop = self.config.loop
        if self.ask.calls >= loop.max_turns:
            raise BudgetExceeded(
                "turn_limit", f"the planner reached its {loop.max_turns}-call limit"
            )
        check_run_budgets(loop, self.stats)

    def _consume_injection(self) -> None:
        child = self.injections.take(self.tree)
        if child is not None:
            self.stack.append((child.id, ENTER))  # the correction runs next
            self.tree.save("inject", node=child.id, goal=child.goal)

    def _record(self, event: str, **data) -> None:
        if self.record is not None:
            self.record.append(event, agent="planner", **data)


@control_mode("andor")
class AndOrMode:
    """`--control andor`: the tree of `AndOrController`; `finish` goes through `finish_review`."""

    def run(self, context) -> Finished | BudgetExceeded:
        task_state = open_task_state(context)
        review = finish_review(context, task_state)
        controller = AndOrController(context, review, task_state)
        return controller.run(resume=context.resume, since_event_index=context.since_event_index)
