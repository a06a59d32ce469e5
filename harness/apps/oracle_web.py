"""The oracle on WebArena tasks: a solution is what the web specialist does in the browser and the
answer the main agent finishes with, kept as `solutions/<task id>.json` (the wrong variant:
`<task id>.wrong.json`) beside the folder of the suite's task files.

    {"steps": [{"tool": "navigate", "input": {"url": "__SHOPPING__/sales/order/history/"}},
               {"tool": "read_dom", "input": {}}],
     "answer": "365.42"}

`steps` are the web specialist's tool calls (`navigate`, `fill`, `click`, `read_dom`, …), played in
order and closed by its `report`; WebArena's site placeholders in any string resolve against the
run's `--sites`. With no steps the main agent only answers. The oracle is one scripted model for
both roles, told apart by the tools each is offered, so the real delegation path runs.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.kernel.core import StateActError
from harness.models.scripted import ScriptedModel
from tasks.schema import Task
from tasks.webarena.deployment import active

WEB_TOOL = "navigate"
"""A tool only the web specialist is offered: its requests get the browser steps."""
MAX_SOLUTION_BYTES = 1 << 20
SPARE_TURNS = 8
"""Room for a harness request beyond the script (a refused finish asked again): the last turn of
the role repeats."""


class WebStep(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool: str = Field(min_length=1)
    input: dict = Field(default_factory=dict)


class WebSolution(BaseModel):
    model_config = ConfigDict(extra="forbid")
    steps: list[WebStep] = Field(default_factory=list)
    answer: str = ""


def suite_solution(task: Task, name: str) -> Path | None:
    """The file `name` in the `solutions/` folder beside the folder of `task`'s file, or None
    when there is none (or `name` would leave that folder: a task id such as ../../x)."""
    folder = Path(task.base_dir).parent / "solutions"
    path = folder / name
    try:
        if "\x00" in name or not path.resolve().is_relative_to(folder.resolve()):
            return None
        return path if path.is_file() else None
    except OSError:  # a name too long for the file system
        return None


def web_solution_path(task: Task, variant: str = "right") -> Path | None:
    """The suite's solution file of `task` for `variant`, or None when it has none."""
    return suite_solution(
        task, f"{task.id}.json" if variant == "right" else f"{task.id}.{variant}.json"
    )


def load_web_solution(path: Path) -> WebSolution:
    """The solution at `path` with the sites' placeholders resolved; one sentence when it is bad."""
    sites = active().sites
    if sites is None:
        raise StateActError(
            f"the oracle's solution {path.name} plays on WebArena sites; give them (--sites FILE)."
        )
    try:
        if path.stat().st_size > MAX_SOLUTION_BYTES:
            raise StateActError(f"the oracle's solution {path} is larger than 1 MiB.")
        solution = WebSolution.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError) as exc:
        reason = str(exc).splitlines()[0]
        raise StateActError(f"the oracle's solution {path} is not valid: {reason}.") from None
    return WebSolution.model_validate(_resolved(solution.model_dump(), sites.resolve))


def _resolved(value, resolve):
    if isinstance(value, str):
        return resolve(value)
    if isinstance(value, dict):
        return {key: _resolved(item, resolve) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolved(item, resolve) for item in value]
    return value


def _call(name: str, **params) -> dict:
    return {"tool_calls": [{"name": name, "input": params}]}


class WebOracle:
    """Answers the main agent (delegate the steps to the web specialist, look, finish with the
    answer) and the web specialist (the steps, then a report): three main turns before `finish`,
    as the finish rule asks."""

    def __init__(self, solution: WebSolution):
        self.web = [_call(step.tool, **step.input) for step in solution.steps]
        self.web.append(_call("report", text="the reference steps are done"))
        delegate = _call("delegate", agent="web", task="Play the reference steps in the browser.")
        looks = [_call("bash", command="true")] * (2 if solution.steps else 3)
        self.main = [*([delegate] if solution.steps else []), *looks]
        self.main.append(_call("finish", summary=solution.answer))

    def __call__(self, system, messages, tools) -> dict:
        turns = self.web if WEB_TOOL in {tool.name for tool in tools} else self.main
        played = sum(message["role"] == "assistant" for message in messages)
        return turns[min(played, len(turns) - 1)]

    @property
    def turns(self) -> int:
        return len(self.web) + len(self.main)


def web_oracle_model(task: Task, variant: str, name: str) -> ScriptedModel:
    """The scripted model that plays `task`'s WebArena solution of `variant`; a task with no
    wrong variant answers nothing under the wrong oracle (a wrong answer too)."""
    path = web_solution_path(task, variant)
    if path is None and variant == "right":
        raise StateActError(
            f"the oracle has no reference solution for task {task.id} (it plays "
            f"solutions/{task.id}.json beside the folder of the suite's task files)."
        )
    oracle = WebOracle(load_web_solution(path) if path else WebSolution())
    return ScriptedModel([oracle] * (oracle.turns + SPARE_TURNS), name=name)
