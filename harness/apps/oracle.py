"""The oracle: `--model script/oracle` plays each task's reference solution as a scripted
conversation; `--model script/oracle-wrong` plays its wrong variant (a plausible mistake).

It is not a model. It exists to check a suite end to end (setup, tools, gate structure, checker,
records) with the answers known: a suite whose oracle does not score 1 has a broken task, fixture or
checker. The reference solution of a task is `solutions/<task id>.sh` beside the suite's `tasks/`
folder; a task whose checker expects `infeasible` is declared infeasible, and any other task
without a solution is refused (StateActError: there is nothing to play). A WebArena task's
solution is its browser steps and answer, `solutions/<task id>.json` (`oracle_web.py`).

OSWorld's public task files carry no solutions, so theirs are kept in StateAct, keyed by task id:
`tasks/suites/osworld-oracle/<task id>/right.sh` and `wrong.sh` (see its README). Such a script
decides the finish itself: a line `# oracle: infeasible` declares the task infeasible, as an agent
that read the instruction would, instead of trusting the checker's `infeasible`. A task with no
wrong variant does nothing under `script/oracle-wrong` (a wrong answer too).
"""

from __future__ import annotations

from pathlib import Path

from harness.kernel.core import StateActError
from harness.models.scripted import ScriptedModel
from tasks.schema import Task
from tasks.webarena.task import webarena_of

from .oracle_web import suite_solution, web_oracle_model

ORACLE_SPEC = "script/oracle"
WRONG_SPEC = "script/oracle-wrong"
OSWORLD_SOLUTIONS = Path(__file__).resolve().parents[2] / "tasks" / "suites" / "osworld-oracle"
INFEASIBLE_MARK = "# oracle: infeasible"
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
    return (spec or "").strip().lower() in (ORACLE_SPEC, WRONG_SPEC)


def variant_of(spec: str | None) -> str:
    """`right` for script/oracle, `wrong` for script/oracle-wrong."""
    return "wrong" if (spec or "").strip().lower() == WRONG_SPEC else "right"


def osworld_solution_path(task: Task, variant: str = "right") -> Path | None:
    """The bundled OSWorld solution `<task id>/<variant>.sh`, or None."""
    if not task.id or "\x00" in task.id or "/" in task.id or task.id in (".", ".."):
        return None
    path = OSWORLD_SOLUTIONS / task.id / f"{variant}.sh"
    try:
        return path if path.is_file() else None
    except OSError:  # a name too long for the file system
        return None


def solution_path(task: Task) -> Path | None:
    """The task's reference solution script, or None when the suite has none for it."""
    return suite_solution(task, f"{task.id}.sh")


def expects_infeasible(task: Task) -> bool:
    return "infeasible" in task.evaluator.funcs


def _call(name: str, **params) -> dict:
    return {"tool_calls": [{"name": name, "input": params}]}


def oracle_turns(task: Task, variant: str = "right") -> list[dict]:
    """plan, close open documents, write the script, run it, list the home folder, finish
    (infeasible without a script)."""
    bundled = osworld_solution_path(task, variant)
    if bundled is not None or variant == "wrong":
        return osworld_turns(task, bundled)
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


# An OSWorld solution may restart an application and wait for it; the bash tool's default is 180 s.
SCRIPT_TIMEOUT_S = 600


def osworld_turns(task: Task, script: Path | None) -> list[dict]:
    """plan, write the script, run it, look, finish; the script's own mark says infeasible.
    Nothing is closed first: OSWorld's solutions often act through the running application."""
    if script is None:
        turns = [_call("plan", items=[{"text": "do nothing", "status": "in_progress"}])]
        turns += [_call("bash", command=command) for command in INSPECT_ONLY]
        return [*turns, _call("finish", summary="oracle: no wrong variant, nothing done")]
    text = script.read_text()
    infeasible = any(line.strip() == INFEASIBLE_MARK for line in text.splitlines())
    goal = f"run {script.parent.name}/{script.name}"
    turns = [
        _call("plan", items=[{"text": goal, "status": "in_progress"}]),
        _call("str_replace_based_edit_tool", command="create", path=SCRIPT_PATH, file_text=text),
        _call("bash", command=f"bash {SCRIPT_PATH}", timeout=SCRIPT_TIMEOUT_S),
        _call("bash", command="ls -la /home/user"),
    ]
    finish = {"summary": f"oracle: {goal}"}
    if infeasible:
        finish["infeasible"] = True
    return [*turns, _call("finish", **finish)]


def oracle_model(task: Task, variant: str = "right") -> ScriptedModel:
    name = WRONG_SPEC if variant == "wrong" else ORACLE_SPEC
    if webarena_of(task) is not None:  # browser steps and an answer (harness/apps/oracle_web.py)
        return web_oracle_model(task, variant, name)
    return ScriptedModel(oracle_turns(task, variant), name=name)


def oracle_model_factory(spec: str | None):
    """The per-task model factory for an oracle spec."""
    variant = variant_of(spec)
    return lambda task: oracle_model(task, variant)


def oracle_gate_model(task: Task) -> ScriptedModel:
    """A gate that accepts: one `verdict(passed=true)` per possible round. The structural checks
    the gate runs before asking it are still real, so a missing or unparsable deliverable is
    still rejected."""
    verdict = _call("verdict", passed=True, gaps=[])
    return ScriptedModel([verdict] * 5, name=f"{ORACLE_SPEC}-gate")
