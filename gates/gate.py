"""The narration-blind finish gate.

On `finish`, the gate lists what changed and asks open applications about unsaved changes in the
live sandbox, then snapshots the sandbox and starts an independent sandbox from that snapshot, so
nothing it runs can touch the state it judges. Structural checks run first; a definite failure
rejects without a model call. Otherwise a fresh model context that holds only the verbatim
instruction, the list of files the run changed (read from the file system) and the structural
findings inspects the snapshot with read-only tools and typed probes, and answers with a
`verdict` call. It never sees the agent's messages, plan or finish summary, nor any expected
value or checker. A round's outcome is a `Verdict` value; the caller records it.
"""

from __future__ import annotations

import dataclasses
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
from harness.kernel.loop import LoopConfig, RunScope, ToolLoop
from harness.tools import BashTool, EditorTool
from sandboxes import open_sandbox
from sandboxes.agent_stop import freeze_agent, thaw_agent
from sandboxes.disk_watch import SandboxLimitExceeded
from sandboxes.toolbox.protocol import FileStatRequest, FsChanged
from sandboxes.typed import run

from .appstate import AppState, settled_open_documents
from .probes import run_probe, validate_probe
from .quoting import quoted
from .structural import check_deliverables, named_paths
from .verdict import Verdict, rejected, undecided

log = logging.getLogger(__name__)

PROMPT = (Path(__file__).parent / "prompts" / "gate.md").read_text()


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
                "{value|formula}}, sheet_names?}; docx_text / pptx_text {path, contains?, "
                "not_contains?}; sqlite_query {path, query (SELECT), expect_rows?}; shell_command "
                "{argv (read-only programs, no pipes), expect_exit?, expect_substring?, "
                "forbid_substring?}; dom_query {url, selector, expect_text?, expect_count?}; "
                "url_match {pattern, profile_root?} (newest URL in the browser's saved history). "
                "Answers true, false or inconclusive; a true/false answer is binding."
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
    ends_loop = True  # the tool loop names it when the model answers without a call

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

    def __init__(self):
        self.given: tuple[bool, list[str]] | None = None
        """The model's decision once it called the tool."""

    def __call__(self, passed: bool, gaps: list | None = None) -> ToolResult:
        if not isinstance(passed, bool):
            raise ToolError("field `passed` must be true or false.")
        gaps = [str(gap) for gap in (gaps or [])]
        if not passed and not gaps:
            raise ToolError(
                "field `gaps`: name at least one concrete gap when the task is not done."
            )
        self.given = (passed, gaps)
        raise Finished("verdict", "passed" if passed else "rejected")


class Gate:
    """Judges one sandbox's state against an instruction, layer by layer, and returns a `Verdict`.

    `model` None runs only the model-free layers: the verdict is a pass unless they find a definite
    gap. `initially_present` says which named paths existed before the work (so a named file that
    was never there and is still missing is a gap, while one the task deletes is not).
    """

    def __init__(
        self,
        instruction: str,
        sandbox,
        model: Model | None,
        *,
        started_at: float,
        initially_present: dict[str, bool],
        max_turns: int = 30,
        scope: RunScope | None = None,
    ) -> None:
        """`scope` holds the run's counters and record the gate's model turns join (a fresh one
        when the gate runs alone)."""
        self.instruction = instruction
        self.sandbox = sandbox
        self.model = model
        self.started_at = started_at
        self.initially_present = initially_present
        self.max_turns = max_turns
        self.scope = scope or RunScope()
        self.record = self.scope.record

    @staticmethod
    def present(sandbox, instruction: str) -> dict[str, bool]:
        """Which of the instruction's named paths exist now (call before the work starts)."""
        return {p: run(sandbox, FileStatRequest(p)).exists for p in named_paths(instruction)}

    def judge(self, label: str = "gate") -> Verdict:
        """One round: observe the live sandbox, then judge a snapshot of it."""
        try:
            # Nothing the agent started acts while the gate looks (see sandboxes/agent_stop.py);
            # its processes resume once the snapshot holds the state.
            frozen = freeze_agent(self.sandbox)
        except StateActError as exc:
            log.warning("gate round failed: %s", exc)
            return undecided(f"the gate could not stop the agent's processes: {exc}")
        try:
            observed = self.observe()
            snapshot = self.sandbox.snapshot()
        except SandboxLimitExceeded:
            raise  # the sandbox was ended for its size: the run ends, with that status
        except StateActError as exc:
            log.warning("gate round failed: %s", exc)
            return undecided(f"the gate could not inspect the state: {exc}")
        finally:
            thaw_agent(self.sandbox, frozen)
        try:
            # An observer sandbox: nothing the agent wrote (rc files, ~/toolbox, ~/.local) steers
            # it.
            observer = dataclasses.replace(self.sandbox.config, observer=True)
            with open_sandbox(observer, snapshot) as view:
                return self.assess(view, observed, label)
        except StateActError as exc:
            log.warning("gate round failed: %s", exc)
            return undecided(f"the gate could not inspect the state: {exc}", observed)
        finally:
            self.sandbox.discard_snapshot(snapshot)

    def observe(self) -> dict:
        """What only the live sandbox knows: files changed since the start (listed live, since a
        committed snapshot keeps whole-second mtimes) and what open applications say. The
        applications are asked first, so a save that finishes while they settle is listed."""
        apps = settled_open_documents(self.sandbox)
        changed = run(self.sandbox, FsChanged(self.started_at))
        return {"changed_paths": changed.paths, "open_documents": apps}

    def assess(self, view, observed: dict, label: str = "gate") -> Verdict:
        """The layers on `view` (a snapshot, or any sandbox that holds the state) given
        `observed`."""
        apps: AppState = observed["open_documents"]
        changed = observed["changed_paths"]
        report = check_deliverables(view, self.instruction, self.initially_present, changed, apps)
        evidence = {
            "structural": [vars(f) for f in report.findings],
            "changed_paths": changed,
            "open_documents": apps.to_json(),
        }
        if report.definite_gaps:
            return rejected(report.definite_gaps, "structural", evidence)
        if self.model is None:
            return Verdict(True, (), evidence)
        return self._ask_model(view, report, changed, evidence, label)

    def _ask_model(self, view, report, changed, evidence: dict, label: str) -> Verdict:
        probes: list[dict] = []
        verdict_tool = VerdictTool()
        tools = [
            # The model is expected to run the agent's code: its shell imports from the folder it
            # is in, like any shell; the structural checks and probes stay isolated.
            BashTool(view, session="gate", local_imports=True),
            EditorTool(view, commands=("view",)),
            ProbeTool(view, probes),
            verdict_tool,
        ]
        loop = ToolLoop(
            self.model,
            tools,
            PROMPT,
            agent=label,
            config=LoopConfig(max_turns=self.max_turns),
            scope=self.scope,
        )
        # File names are the agent's: quoted, so none can close this block or forge another.
        changed_list = "\n".join(f"- {quoted(c['path'])}" for c in changed[:200]) or "(none)"
        message = (
            f"<instruction>\n{self.instruction}\n</instruction>\n\n<files-changed-during-the-run>\n"
            f"{changed_list}\n</files-changed-during-the-run>\n\n<structural-checks>\n"
            f"{report.render()}\n</structural-checks>"
        )
        try:
            end = loop.run(message)
        except StateActError as exc:
            end = BudgetExceeded("gate_error", str(exc))
        evidence.update(probes=probes, transcript=loop.messages)
        if verdict_tool.given is None:
            return undecided(f"the gate gave no verdict ({end.message})", evidence)
        model_passed, gaps = verdict_tool.given
        failed = [
            f"probe {p['spec']['kind']} on {_probe_target(p['spec'])}: {p['evidence'][:300]}"
            for p in probes
            if p["verdict"] is False
        ]
        if model_passed and failed:
            return rejected(failed, "probe", evidence)
        if model_passed:
            return Verdict(True, (), evidence)
        return rejected(gaps, "model", evidence)


def _probe_target(spec: dict) -> str:
    return str(spec.get("path") or spec.get("argv") or spec.get("url") or spec.get("pattern"))


class FinishGate:
    """The rounds of one run's finish gate: `review` is what the finish tool calls.

    Each round's `Verdict` goes to `on_verdict(round, verdict)` (the caller records it) and, when
    the gate has a record, into `gate/round-N.json`. `on_decision(verdict, probes) -> extra gaps`
    lets the task state hear each verdict and fail the round closed when one of its stored probes
    fails.
    """

    def __init__(
        self,
        gate: Gate,
        max_rejections: int,
        *,
        on_decision=None,
        on_verdict=None,
    ) -> None:
        self.gate = gate
        self.max_rejections = max_rejections
        self.on_decision = on_decision
        self.on_verdict = on_verdict
        self.rounds = 0
        self.verdicts: list[Verdict] = []

    def review(self, summary: str) -> str | None:
        self.rounds += 1
        verdict = self.gate.judge(label=f"gate-{self.rounds}")
        if self.on_decision is not None:
            extra = self.on_decision(verdict, verdict.evidence.get("probes", []))
            if verdict.passed and extra:
                verdict = verdict.with_gaps(list(extra), "probe")
        self.verdicts.append(verdict)
        if self.on_verdict is not None:
            self.on_verdict(self.rounds, verdict)
        self._write(verdict)
        if verdict.passed:
            return None
        if self.rounds >= self.max_rejections:
            raise Finished(
                "gate_rejected",
                f"the finish gate rejected {self.rounds} times; last gaps: {verdict.gap_texts}",
            )
        said = (
            "could not confirm the task is done"
            if verdict.passed is None
            else "rejected the finish"
        )
        gaps = "\n".join(f"- {gap}" for gap in verdict.gap_texts)
        return (
            f"The independent finish gate {said} (round {self.rounds} of {self.max_rejections}). "
            f"Gaps:\n{gaps}\nFix them, verify, and call finish again."
        )

    def _write(self, verdict: Verdict) -> None:
        record = self.gate.record
        if record is None:
            return
        data = {
            "round": self.rounds,
            **verdict.to_json(),
            "gaps": verdict.gap_texts,  # plain sentences, as the run's readers expect
            "gap_layers": [gap.layer for gap in verdict.gaps],
            "source": verdict.decided_by,
            "transcript": verdict.evidence.get("transcript", []),
        }
        record.write_gate_round(self.rounds, data)
        record.append(
            "gate_round",
            agent="harness",
            round=self.rounds,
            passed=verdict.passed,
            gaps=verdict.gap_texts,
            layers=data["gap_layers"],
        )
