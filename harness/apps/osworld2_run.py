"""One OSWorld 2.0 task module from its file to a run directory: for each phase the benchmark's
setup, the agent's work under the run's control mode, and the benchmark's evaluation once the
agent has stopped; then result.json with the task's score, every phase's verdict and checkpoint,
and `phase_results.json` as OSWorld 2.0's harness writes it.

    result = run_osworld2_task(task_file, config, out_dir, model=…)

`run` and `suite` come here for a `task_*.py` under `--osworld2` (the runner's `run_task` is for
StateAct's own JSON tasks). Whatever happens the run ends with a result.json and no sandbox or
bridge process left.
"""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import asdict
from pathlib import Path

from harness.apps.osworld2_inline import InlineEvaluations
from harness.apps.osworld2_resume import PHASE_KEY, ResumePoint, resume_point
from harness.control import controller_for, run_control
from harness.control.milestones import (
    MILESTONES_FILE,
    PINNED,
    discard_milestones,
    load_milestones,
    snapshot_of,
)
from harness.kernel.core import BudgetExceeded, StateActError
from harness.kernel.loop import RunStats
from harness.kernel.records import RunRecord, load_events, write_json_atomic
from harness.kernel.resume import restore_counters
from harness.models import endpoint_provider, make_model
from harness.run.config import RunConfig
from harness.run.context import RunContext
from harness.run.outcome import TaskOutcome, error_status
from harness.tools.ask_user import AskUserTool
from sandboxes import discard_snapshot, open_sandbox
from sandboxes.agent_stop import freeze_agent, thaw_agent
from sandboxes.base import HOST_NETWORK
from tasks.osworld2.episode import Osworld2Episode
from tasks.osworld2.revisions import pinned_revisions
from tasks.osworld2.scoring import PhaseVerdict, result_fields
from tasks.setup import DESKTOP_ENV

log = logging.getLogger(__name__)

PHASE_RESULTS = "phase_results.json"
ENDS_THE_TASK = ("infeasible",)
"""An agent that declares a phase infeasible has given up the task: later phases are not set up."""


def is_task_module(path: Path) -> bool:
    """A file the benchmark's loader reads (`task_<id>.py`), not one of StateAct's JSON tasks."""
    return path.suffix == ".py"


def run_osworld2_task(
    task_file: str | Path,
    config: RunConfig,
    out_dir: str | Path,
    *,
    model=None,
    gate_model=None,
    on_turn=None,
) -> dict:
    """Run the task module `task_file` under `config` (its `osworld2` key set) into `out_dir`;
    returns result.json's content. After each judged phase but the last, the machine is kept as a
    snapshot (a milestone of the run directory, with the verdicts so far); an unfinished `out_dir`
    continues (`--resume`) from there, its verdicts kept, inside the phase it had got to when the
    control mode allows (`harness/apps/osworld2_resume.py`)."""
    out_dir = Path(out_dir)
    if config.osworld2 is None:
        raise StateActError("an OSWorld 2.0 task module needs --osworld2 PATH (your checkout).")
    if config.best_of > 1:
        raise StateActError("--best-of does not run OSWorld 2.0 tasks yet; leave it at 1.")
    if config.sandbox.network and config.sandbox.network_mode == HOST_NETWORK:
        raise StateActError(
            "OSWorld 2.0 tasks do not run with --network-mode host: the agent would share the "
            "loopback the benchmark's guest server listens on; name a Docker network instead."
        )
    config = config.with_preset()
    if config.model_options.provider is None:
        config.model_options.provider = endpoint_provider(config.model)
    record = RunRecord(out_dir)
    task_file = Path(task_file).resolve()
    record.write_config(
        {
            "task_id": task_file.stem,
            "task_path": str(task_file),
            "osworld2_revisions": pinned_revisions(config.osworld2.checkout, config.osworld2.data),
            **config.model_dump(mode="json"),
        }
    )
    run = PhasedRun(task_file, config, record, RunStats(on_turn=on_turn))
    result = run.execute(model, gate_model)
    record.append("result", agent="harness", **result)
    record.write_result(result)
    record.close()
    discard_milestones(out_dir)  # with a result, nothing resumes this run
    return result


def osworld2_options(config: RunConfig) -> dict:
    """The OSWorld 2.0 switches a result is compared by (recorded in result.json's options)."""
    osworld2 = config.osworld2
    return {
        "checkpoint_eval_mode": osworld2.checkpoint_eval_mode,
        "checkpoint_steps": list(osworld2.checkpoint_steps),
        "osworld2_services": osworld2.starts_services,
        "osworld2_services_proxy": osworld2.services_proxy is not None,
    }


def resumable(run_dir: Path, control: str) -> bool:
    """Whether the unfinished run in `run_dir` goes on where it stopped rather than afresh."""
    return resume_point(run_dir, control) is not None


class RecordedUser:
    """The episode's simulated user, each question and answer written to the run record (the gate
    never reads it: it judges the machine)."""

    def __init__(self, episode: Osworld2Episode, record: RunRecord):
        self.episode = episode
        self.record = record

    def ask(self, question: str) -> str | None:
        answer = self.episode.ask(question)
        self.record.append("ask_user", agent="user", question=question, answer=answer)
        return answer


class PhasedRun:
    """One task's sandbox, bridge and phases; `execute` never raises."""

    def __init__(self, task_file: Path, config: RunConfig, record: RunRecord, stats: RunStats):
        self.task_file, self.config, self.record, self.stats = task_file, config, record, stats
        self.outcome = TaskOutcome(task_file.stem, control=config.control, preset=config.preset)
        self.outcome.options = {**config.options(), **osworld2_options(config)}
        self.verdicts: list[PhaseVerdict] = []
        self.phases = 0
        self.resuming: ResumePoint | None = None
        """Where a resumed run goes on, until its phase has started."""
        self.inline = None
        if config.osworld2.checkpoint_eval_mode == "inline":
            self.inline = InlineEvaluations(config.osworld2.checkpoint_steps, record)
            stats.on_turn = self.inline.chained(stats.on_turn)

    def execute(self, model, gate_model) -> dict:
        sandbox = episode = None
        point = resume_point(self.record.dir, self.config.control)
        try:
            controller_for(self.config.control)  # an unknown mode fails before any sandbox opens
            model = model or make_model(self.config.model, self.config.model_options)
            sandbox = open_sandbox(self.config.sandbox, snapshot_of(point and point.milestone))
            if point is not None:
                self._resume(point, sandbox)
            self.outcome.status = "setup"
            episode = Osworld2Episode(self.config.osworld2, self.task_file, self.record.dir)
            info = episode.open(sandbox)
            self.phases = len(episode.phases)
            self.record.append(
                "osworld2_task",
                agent="harness",
                phases=self.phases,
                has_user=episode.has_user,
                related_apps=info.get("related_apps", []),
                domain=info.get("domain"),
            )
            for phase in range(len(self.verdicts), self.phases):
                if not self._phase(episode, sandbox, phase, model, gate_model):
                    break
        except StateActError as exc:
            judging = self.outcome.status == "judging"  # the benchmark's evaluation failed
            status = "evaluation_error" if judging else error_status(exc, self.outcome.status)
            self.outcome.fail(status, str(exc))
        except Exception as exc:  # a bug must still leave a result and nothing running
            log.error("run of %s failed:\n%s", self.task_file, traceback.format_exc())
            self.outcome.fail("error", f"{type(exc).__name__}: {exc}")
        finally:
            if episode is not None:
                episode.close()
            if sandbox is not None:
                sandbox.close()
        return self._result()

    def _resume(self, point: ResumePoint, sandbox) -> None:
        """Take up the stopped run: its verdicts, and, unless the agent resumes inside the phase
        (which restores them with its history), the counters of what it spent so far."""
        if point.milestone is not None:
            # A snapshot keeps files, not programs: the desktop's note that it runs is stale.
            sandbox.exec(["rm", "-f", DESKTOP_ENV], user="root")
        self.verdicts = list(point.verdicts)
        events = [e for e in load_events(self.record.dir) if e["event"] != "end"]
        if not point.in_phase:
            restore_counters(events, self.stats)
        if self.inline is not None:
            self.inline.restore(events)
        self.resuming = point
        self.record.append(
            "resumed",
            agent="harness",
            after_phase=point.after_phase,
            phase=point.phase,
            in_phase=point.in_phase,
        )

    def _phase(self, episode, sandbox, phase: int, model, gate_model) -> bool:
        """Set up, run and judge one phase; whether the next one may start."""
        self.outcome.status = "setup"
        episode.set_up(phase)
        self.record.append("setup_done", agent="harness", phase=phase)
        resuming = self.resuming if self.resuming and self.resuming.in_phase else None
        self.resuming = None
        turns_before = resuming.turns_before if resuming else self.stats.main_turns
        context = RunContext(
            config=self._phase_config(turns_before),
            model=model,
            sandbox=sandbox,
            task=episode.task(phase),
            gate_model=gate_model,
            record=self.record,
            stats=self.stats,
            outcome=self.outcome,
            extra_tools=[AskUserTool(RecordedUser(episode, self.record))],
            resume=resuming is not None,
            milestone={"event_index": resuming.since_event_index} if resuming else None,
        )
        if self.inline is not None:
            self.inline.watch(episode, sandbox, phase)
        if turns_before < self.config.loop.max_turns:
            end = run_control(context)
        else:  # a resumed task that had spent its turns: judged as it stands
            end = BudgetExceeded("turn_limit", self._turn_limit())
        if isinstance(end, BudgetExceeded) and end.status == "turn_limit":
            end = BudgetExceeded(end.status, self._turn_limit())  # the task's, not the phase's
        self.outcome.status = end.status
        self.outcome.final_action = "FAIL" if end.status == "infeasible" else None
        if isinstance(end, BudgetExceeded):
            self.outcome.error = end.message
        last = phase == self.phases - 1 or isinstance(end, BudgetExceeded)
        last = last or end.status in ENDS_THE_TASK
        # Judging starts when the agent stops: nothing it started acts while the benchmark scores.
        frozen = freeze_agent(sandbox, end=last)
        if frozen is not None:
            self.record.append("agent_stopped", agent="harness", phase=phase, **frozen.summary())
        self.outcome.status = "judging"
        verdict = episode.judge(phase)
        self.verdicts.append(verdict)
        self.record.append("phase_judged", agent="harness", **verdict.model_dump())
        write_json_atomic(self.record.dir / PHASE_RESULTS, [v.model_dump() for v in self.verdicts])
        if verdict.judge_errors:  # the score is not the agent's: no later phase can fix that
            last = True
        if not last:
            self._checkpoint(sandbox, phase)
            thaw_agent(sandbox, frozen)
        self.outcome.status = end.status
        return not last

    def _phase_config(self, turns_before: int) -> RunConfig:
        """The run's config with the turns the task has left: its main agent's turn budget counts
        the whole task, each phase's agent a new loop."""
        config = self.config.model_copy(deep=True)
        config.loop.max_turns = max(1, self.config.loop.max_turns - turns_before)
        return config

    def _turn_limit(self) -> str:
        turns = self.config.loop.max_turns
        return f"the task reached its {turns}-turn limit (main-agent turns over all its phases)"

    def _checkpoint(self, sandbox, phase: int) -> None:
        """Keep the machine after `phase` (the agent still stopped) for a resumed run; only the
        newest checkpoint is kept. Programs do not survive a snapshot: the next phase's setup and
        the agent start them again."""
        milestones = load_milestones(self.record.dir)
        number = len(milestones) + 1
        snapshot = sandbox.persist(self.record.dir, f"phase-{phase}")
        for older in milestones:
            if not older.get("discarded") and not older.get("superseded"):
                older["superseded"] = True
                older["discarded"] = discard_snapshot(snapshot_of(older))
        milestone = {
            "number": number,
            PHASE_KEY: phase,
            PINNED: True,
            "verdicts": [verdict.model_dump() for verdict in self.verdicts],
            "snapshot": asdict(snapshot),
            "time": time.time(),
        }
        write_json_atomic(self.record.dir / MILESTONES_FILE, [*milestones, milestone])
        self.record.append("milestone", agent="harness", **milestone)

    def _result(self) -> dict:
        """result.json: the runner's fields, the benchmark's score and every phase's verdict."""
        if self.verdicts:
            fields = result_fields(self.verdicts, phases=self.phases)
            self.outcome.score = fields["score"]
            self.outcome.metrics = [
                {"phase": v.phase, **checkpoint}
                for v in self.verdicts
                for checkpoint in v.checkpoints
            ]
            if fields["evaluation_error"] and self.outcome.error is None:
                self.outcome.fail("evaluation_error", fields["evaluation_error"])
        else:
            fields = {"phase_results": [], "partial_score": None, "evaluation_error": None}
        result = self.outcome.result(self.stats)
        result.update(
            benchmark="osworld2",
            phases=self.phases,
            phases_judged=len(self.verdicts),
            partial_score=fields["partial_score"],
            phase_results=fields["phase_results"],
        )
        if self.inline is not None:
            result["inline_evaluations"] = self.inline.taken
        if fields["evaluation_error"]:
            result["score"], result["success"] = None, False  # not the agent's score
        return result
