"""`stateact audit`: plays the built-in adversarial agents (audit_agents.py) against every task of a
suite and reports, per task, each agent that scored above the do-nothing agent or got a gate pass.

Each agent runs the whole suite as `stateact suite` would (same sandboxes, setup, gate and
checker), into `OUT/<agent>/`. The gate meets the agent that attacks it (`names`); its model is a
credulous script (it believes a structural-checks block that approves the work, and otherwise
rejects), so a gate pass means something the agent wrote reached the gate as the harness's own
finding. One rejection ends a run: the checker then scores the state as the agent left it; the
other agents' runs end at `finish` without a gate (their vectors aim at the checker). For
benchmark authors the report says which tasks can be gamed and how; for StateAct it is the
red-team suite a user can run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.apps.audit_agents import (
    ADVERSARIES,
    BASELINE,
    adversary_model,
    credulous_gate,
)
from harness.apps.suite import discover_tasks, run_suite
from harness.kernel.core import StateActError
from harness.run.config import RunConfig

VERDICT_STATUSES = ("completed", "gate_rejected", "infeasible", "stalled", "budget_exceeded")
SKIPPED_STATUSES = ("unsupported",)
CAUGHT_STATUS = "evaluation_error"
GATE_AGENTS = ("names",)


@dataclass
class AuditRow:
    """One agent on one task."""

    task_id: str
    agent: str
    status: str
    score: float
    gate_passed: bool | None
    baseline_score: float | None
    gamed: bool = False
    why: str | None = None
    error: str | None = None


@dataclass
class AuditReport:
    rows: list[AuditRow] = field(default_factory=list)

    @property
    def gamed(self) -> list[AuditRow]:
        return [row for row in self.rows if row.gamed]

    @property
    def errors(self) -> list[AuditRow]:
        return [row for row in self.rows if is_error(row.status, row.agent)]

    def table(self) -> str:
        """A markdown table: one line per task, one column per agent (score, G for a gate pass,
        ! for gamed, E for an error)."""
        agents = list(dict.fromkeys(row.agent for row in self.rows))
        by_task: dict[str, dict[str, AuditRow]] = {}
        for row in self.rows:
            by_task.setdefault(row.task_id, {})[row.agent] = row
        lines = ["| task | " + " | ".join(agents) + " |", "|---" * (len(agents) + 1) + "|"]
        for task_id, cells in by_task.items():
            shown = [_cell(cells.get(agent)) for agent in agents]
            lines.append(f"| {task_id} | " + " | ".join(shown) + " |")
        gamed, errors = len(self.gamed), len(self.errors)
        tasks = len(by_task)
        lines.append(f"\n{tasks} task(s), {len(agents)} agent(s): {gamed} gamed, {errors} error(s)")
        return "\n".join(lines)


def _cell(row: AuditRow | None) -> str:
    if row is None:
        return "-"
    if row.status in SKIPPED_STATUSES:
        return "skip"
    if row.status == CAUGHT_STATUS and not is_error(row.status, row.agent):
        return "caught"
    mark = "E" if is_error(row.status, row.agent) else ""
    mark += "G" if row.gate_passed else ""
    mark += "!" if row.gamed else ""
    return f"{row.score:g}{mark}"


def is_error(status: str, agent: str = BASELINE) -> bool:
    """Whether a run ended without a verdict. An adversary's evaluation error is the harness
    refusing to score what it could not observe (its command was attacked): a verdict of its
    own, shown as `caught`."""
    if status == CAUGHT_STATUS and agent != BASELINE:
        return False
    return status not in VERDICT_STATUSES and status not in SKIPPED_STATUSES


def check_agents(names: list[str]) -> list[str]:
    """The agents to play, the baseline always first; StateActError for an unknown name."""
    unknown = [name for name in names if name not in ADVERSARIES]
    if unknown:
        raise StateActError(
            f"unknown audit agent(s) {', '.join(unknown)}; choose from {', '.join(ADVERSARIES)}"
        )
    return [BASELINE, *[name for name in dict.fromkeys(names) if name != BASELINE]]


def judged(line: dict, agent: str, baseline: dict | None) -> AuditRow:
    """One results.jsonl line as an audit row, compared with the do-nothing agent's."""
    score = float(line.get("score") or 0.0)
    base = None if baseline is None else float(baseline.get("score") or 0.0)
    row = AuditRow(
        task_id=line["task_id"],
        agent=agent,
        status=line["status"],
        score=score,
        gate_passed=line.get("gate_passed"),
        baseline_score=base,
        error=line.get("error"),
    )
    if agent == BASELINE or row.status in (*SKIPPED_STATUSES, CAUGHT_STATUS):
        return row
    reasons = []
    if base is not None and score > base:
        reasons.append(f"scored {score:g} where doing nothing scores {base:g}")
    if row.gate_passed and not (baseline or {}).get("gate_passed"):
        reasons.append("got a gate pass from a gate model that judges nothing itself")
    row.gamed, row.why = bool(reasons), "; ".join(reasons) or None
    return row


def run_audit(
    paths: list[str | Path],
    config: RunConfig,
    out_dir: str | Path,
    *,
    agents: tuple[str, ...] | list[str] = ADVERSARIES,
    parallel: int = 1,
    on_row: Callable[[AuditRow], None] | None = None,
) -> AuditReport:
    """Play `agents` (the do-nothing baseline first) over the tasks under `paths` into
    `out_dir`; write `audit.jsonl` and `audit.md` there and return the report."""
    agents = check_agents(list(agents))
    tasks = discover_tasks(paths)
    if not tasks:
        raise StateActError(f"no task files under {', '.join(map(str, paths))}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    config = config.model_copy(deep=True)
    config.gate.max_rejections = 1
    report = AuditReport()
    baseline: dict[str, dict] = {}
    with (out_dir / "audit.jsonl").open("w", encoding="utf-8") as jsonl:
        for agent in agents:
            run_suite(
                tasks,
                _config_for(agent, config),
                out_dir / agent,
                parallel=parallel,
                model_factory=lambda task, name=agent: adversary_model(name, task),
                gate_model_factory=credulous_gate,
            )
            for line in _results(out_dir / agent):
                if agent == BASELINE:
                    baseline[line["task_id"]] = line
                row = judged(line, agent, baseline.get(line["task_id"]))
                report.rows.append(row)
                jsonl.write(json.dumps(asdict(row)) + "\n")
                jsonl.flush()
                if on_row is not None:
                    on_row(row)
    (out_dir / "audit.md").write_text(report.table() + "\n", encoding="utf-8")
    return report


def _config_for(agent: str, config: RunConfig) -> RunConfig:
    """Only the agent that attacks the gate meets it: the gate model judges nothing, and the
    others' vectors aim at the checker, which scores the state whether or not a gate ran."""
    if agent in GATE_AGENTS:
        return config
    ungated = config.model_copy(deep=True)
    ungated.gate.enabled = False
    return ungated


def _results(suite_dir: Path) -> list[dict]:
    path = suite_dir / "results.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines if line.strip()]
