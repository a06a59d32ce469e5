"""The narration-blind finish gate.

On `finish`, the gate snapshots the sandbox and starts an independent sandbox from that snapshot, so
nothing it runs can touch the state it judges. Structural checks run first; a definite failure rejects
without a model call. Otherwise a fresh model context that holds only the verbatim instruction, the
list of files the run changed (read from the file system) and the structural findings inspects the
snapshot with read-only tools and typed probes, and answers with a `verdict` call. It never sees the
agent's messages, plan or finish summary, nor any expected value or checker.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

from harness.kernel.core import (
    BudgetExceeded,
    Finished,
    Model,
    StateActError,
    ToolError,
    ToolResult,
    ToolSpec,
)
from harness.kernel.loop import LoopConfig, RunStats, ToolLoop
from harness.kernel.records import RunRecord
from harness.tools import BashTool, EditorTool
from sandboxes import open_sandbox

from .probes import run_probe, validate_probe
from .structural import check_deliverables, named_paths

log = logging.getLogger(__name__)

PROMPT = (Path(__file__).parent / "prompts" / "gate.md").read_text()


class Decision:
    """One gate round's outcome."""

    def __init__(self, passed: bool | None, gaps: list[str], source: str):
        self.passed = passed  # None: the gate could not decide (never counts as a pass)
        self.gaps = gaps
        self.source = source


class ProbeTool:
    name = "probe"

    def __init__(self, sandbox, log_to: list[dict]):
        self.sandbox = sandbox
        self.log = log_to

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=(
                "Run a typed read-only check. `spec.kind` is one of: file_exists {path}; file_grep "
                "{path, patterns, mode: all|any}; xlsx_cells {path, sheet?, cells?, expect?: {B7: "
                "{value|formula}}, sheet_names?}; docx_text / pptx_text {path, contains?, not_contains?}; "
                "sqlite_query {path, query (SELECT), expect_rows?}; shell_command {argv (read-only "
                "programs, no pipes), expect_exit?, expect_substring?, forbid_substring?}; dom_query "
                "{url, selector, expect_text?, expect_count?}; url_match {pattern, profile_root?} (newest URL in the "
                "browser's saved history). Answers true, false or inconclusive; a "
                "true/false answer is binding."
            ),
            input_schema={
                "type": "object",
                "properties": {"spec": {"type": "object", "description": "The probe spec."}},
                "required": ["spec"],
            },
        )

    def __call__(self, spec: dict) -> ToolResult:
        typed = validate_probe(spec)
        outcome = run_probe(typed, self.sandbox)
        self.log.append(
            {"spec": typed.model_dump(), "verdict": outcome.verdict, "evidence": outcome.evidence}
        )
        word = {True: "TRUE", False: "FALSE", None: "INCONCLUSIVE"}[outcome.verdict]
        return ToolResult(output=f"{word}\n{outcome.evidence}")


class VerdictTool:
    name = "verdict"

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description="Give your decision: passed, and the concrete gaps (empty when passed).",
            input_schema={
                "type": "object",
                "properties": {
                    "passed": {"type": "boolean"},
                    "gaps": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["passed", "gaps"],
            },
        )

    def __call__(self, passed: bool, gaps: list | None = None) -> ToolResult:
        if not isinstance(passed, bool):
            raise ToolError("field `passed` must be true or false.")
        gaps = [str(gap) for gap in (gaps or [])]
        if not passed and not gaps:
            raise ToolError(
                "field `gaps`: name at least one concrete gap when the task is not done."
            )
        raise Finished("passed" if passed else "rejected", json.dumps(gaps))


class FinishGate:
    """Reviews `finish` calls of one run; `review` is what the finish tool calls."""

    def __init__(
        self,
        instruction: str,
        sandbox,
        model: Model,
        config,
        record: RunRecord | None,
        stats: RunStats,
        started_at: float,
        outcome,
        on_decision=None,
    ) -> None:
        self.instruction = instruction
        # on_decision(decision, probes) -> extra gaps: lets the task state hear each decision and its
        # probes, and fail the round closed when one of its stored probes fails.
        self.on_decision = on_decision
        self.sandbox = sandbox
        self.model = model
        self.config = config
        self.record = record
        self.stats = stats
        self.started_at = started_at
        self.outcome = outcome
        self.rounds = outcome.gate_rounds
        self.initially_present = {
            p: sandbox.call("file.stat", path=p)["exists"] for p in named_paths(instruction)
        }

    def review(self, summary: str) -> str | None:
        self.rounds += 1
        self.outcome.gate_rounds = self.rounds
        decision, details = self._round()
        if self.on_decision is not None:
            extra = self.on_decision(decision, details.get("probes", []))
            if decision.passed and extra:
                decision = Decision(False, list(extra), "task_state")
        self.outcome.gate_passed = decision.passed is True
        if self.record:
            self.record.write_gate_round(
                self.rounds,
                {
                    "round": self.rounds,
                    "passed": decision.passed,
                    "gaps": decision.gaps,
                    "source": decision.source,
                    **details,
                },
            )
            self.record.append(
                "gate_round",
                agent="harness",
                round=self.rounds,
                passed=decision.passed,
                gaps=decision.gaps,
            )
        if decision.passed:
            return None
        if self.rounds >= self.config.gate.max_rejections:
            raise Finished(
                "gate_rejected",
                f"the finish gate rejected {self.rounds} times; last gaps: {decision.gaps}",
            )
        verdict = (
            "could not confirm the task is done"
            if decision.passed is None
            else "rejected the finish"
        )
        gaps = "\n".join(f"- {gap}" for gap in decision.gaps)
        return (
            f"The independent finish gate {verdict} (round {self.rounds} of "
            f"{self.config.gate.max_rejections}). Gaps:\n{gaps}\nFix them, verify, and call finish again."
        )

    def _round(self) -> tuple[Decision, dict]:
        # Listed in the live sandbox (a read-only walk): a committed snapshot keeps whole-second mtimes.
        changed = self.sandbox.call("fs.changed", since=self.started_at)
        snapshot = self.sandbox.snapshot()
        try:
            # An observer sandbox: nothing the agent wrote (rc files, ~/toolbox, ~/.local) steers it.
            observer = dataclasses.replace(self.sandbox.config, observer=True)
            with open_sandbox(observer, snapshot) as view:
                report = check_deliverables(
                    view, self.instruction, self.initially_present, changed["paths"]
                )
                details = {
                    "structural": [vars(f) for f in report.findings],
                    "changed_paths": changed["paths"],
                }
                if report.definite_gaps:
                    return Decision(False, report.definite_gaps, "structural"), details
                return self._ask_model(view, report, changed, details)
        except StateActError as exc:
            log.warning("gate round failed: %s", exc)
            return Decision(None, [f"the gate could not inspect the state: {exc}"], "error"), {}
        finally:
            self.sandbox.discard_snapshot(snapshot)

    def _ask_model(self, view, report, changed, details) -> tuple[Decision, dict]:
        probes: list[dict] = []
        tools = [
            BashTool(view, session="gate"),
            EditorTool(view, commands=("view",)),
            ProbeTool(view, probes),
            VerdictTool(),
        ]
        loop = ToolLoop(
            self.model,
            tools,
            PROMPT,
            agent=f"gate-{self.rounds}",
            config=LoopConfig(max_turns=self.config.gate.max_turns),
            stats=self.stats,
            record=self.record,
            finish_tool="verdict",
        )
        changed_list = "\n".join(f"- {c['path']}" for c in changed["paths"][:200]) or "(none)"
        message = (
            f"<instruction>\n{self.instruction}\n</instruction>\n\n<files-changed-during-the-run>\n"
            f"{changed_list}\n</files-changed-during-the-run>\n\n<structural-checks>\n"
            f"{report.render()}\n</structural-checks>"
        )
        try:
            end = loop.run(message)
        except StateActError as exc:
            end = BudgetExceeded("gate_error", str(exc))
        details.update(probes=probes, transcript=loop.messages)
        if isinstance(end, BudgetExceeded):
            return Decision(
                None, [f"the gate gave no verdict ({end.message})"], "no_verdict"
            ), details
        model_passed, gaps = end.status == "passed", json.loads(end.message)
        failed = [
            f"probe {p['spec']['kind']} on {p['spec'].get('path') or p['spec'].get('argv') or p['spec'].get('url')}: {p['evidence'][:300]}"
            for p in probes
            if p["verdict"] is False
        ]
        if model_passed and failed:
            return Decision(False, failed, "probe_override"), details
        return Decision(model_passed, gaps, "model"), details
