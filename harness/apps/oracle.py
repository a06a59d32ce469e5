"""The oracle: `--model script/oracle` plays each task's reference solution as a scripted
conversation.

It is not a model. It exists to check a suite end to end (setup, tools, gate structure, checker,
records) with the answers known: a suite whose oracle does not score 1 has a broken task, fixture or
checker. The reference solution of a task is `solutions/<task id>.sh` beside the suite's `tasks/`
folder; a task whose checker expects `infeasible` is declared infeasible, and any other task
without a solution is refused (StateActError: there is nothing to play).
"""

from __future__ import annotations

from pathlib import Path

from harness.kernel.core import StateActError
from harness.models.scripted import ScriptedModel
from tasks.schema import Task

ORACLE_SPEC = "script/oracle"
SCRIPT_PATH = "/tmp/stateact-oracle.sh"
NOTICE = "The oracle plays the tasks' reference solutions (solutions/<id>.sh), not a model."
# The setup may have opened the task's documents in LibreOffice; the scripts edit the files on disk,
# so
# the open copies are stale. Close them first, as an agent editing by code must, or the gate rightly
# rejects the documents for the lock files beside them.
CLOSE_OFFICE = "pkill -x soffice.bin; sleep 1; find /home/user -name '.~lock.*#' -delete; true"
# Inspection commands that make up the finish rule's three steps when there is no script to run.
INSPECT_ONLY = ("ls -la /home/user", "df -h /home/user", "id")


def is_oracle(spec: str | None) -> bool:
    return (spec or "").strip().lower() == ORACLE_SPEC


def solution_path(task: Task) -> Path | None:
    """The task's reference solution script, or None when the suite has none for it."""
    folder = Path(task.base_dir).parent / "solutions"
    path = folder / f"{task.id}.sh"
    try:
        if "\x00" in task.id or not path.resolve().is_relative_to(folder.resolve()):
            return None  # an id such as ../../x names no solution of this suite
        return path if path.is_file() else None
    except OSError:  # a name too long for the file system
        return None


def expects_infeasible(task: Task) -> bool:
    return "infeasible" in task.evaluator.funcs


def _call(name: str, **params) -> dict:
    return {"tool_calls": [{"name": name, "input": params}]}


def oracle_turns(task: Task) -> list[dict]:
    """plan, close open documents, write the script, run it, list the home folder, finish
    (infeasible without a script)."""
    script = solution_path(task)
    if script is None and not expects_infeasible(task):
        raise StateActError(
            f"the oracle has no reference solution for task {task.id} (it plays "
            f"solutions/{task.id}.sh beside the suite's tasks/ folder, and this task's checker "
            "does not expect `infeasible`)."
        )
    infeasible = script is None or expects_infeasible(task)
    goal = (
        "declare the task infeasible"
        if script is None
        else f"run the reference solution {script.name}"
    )
    turns = [_call("plan", items=[{"text": goal, "status": "in_progress"}])]
    if script is not None:
        turns += [
            _call("bash", command=CLOSE_OFFICE),
            _call(
                "str_replace_based_edit_tool",
                command="create",
                path=SCRIPT_PATH,
                file_text=script.read_text(),
            ),
            _call("bash", command=f"bash {SCRIPT_PATH}"),
            _call("bash", command="ls -la /home/user"),
        ]
    else:
        turns += [_call("bash", command=command) for command in INSPECT_ONLY]
    summary = f"oracle: {goal}"
    finish = {"summary": summary, "infeasible": True} if infeasible else {"summary": summary}
    return [*turns, _call("finish", **finish)]


def oracle_model(task: Task) -> ScriptedModel:
    return ScriptedModel(oracle_turns(task), name=ORACLE_SPEC)


def oracle_gate_model(task: Task) -> ScriptedModel:
    """A gate that accepts: one `verdict(passed=true)` per possible round. The structural checks
    the gate runs before asking it are still real, so a missing or unparsable deliverable is
    still rejected."""
    verdict = _call("verdict", passed=True, gaps=[])
    return ScriptedModel([verdict] * 5, name=f"{ORACLE_SPEC}-gate")
