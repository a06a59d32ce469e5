"""OSWorld task JSON as pydantic models, and `load_task` that turns a task file into a `Task`.

Every model keeps unknown fields (`extra="allow"`): OSWorld's files carry fields that change between
releases, and a loader that rejects them would break on the next one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.kernel.core import StateActError
from tasks.webarena.schema import is_webarena_task
from tasks.webarena.task import list_item, read_json, webarena_task_dict


class SetupStep(BaseModel):
    """One setup (or postconfig) step: `{"type": T, "parameters": {...}}`."""

    model_config = ConfigDict(extra="allow")

    type: str
    """The step kind: download, open, launch, execute, command, sleep, activate_window, ..."""
    parameters: dict[str, Any] = Field(default_factory=dict)
    """The step's arguments, as OSWorld writes them."""


class Evaluator(BaseModel):
    """How a task is scored: metric name(s), getters for the result and expected values, options."""

    model_config = ConfigDict(extra="allow")

    func: str | list[str] = Field(default_factory=list)
    """Metric name, or a list of names scored together with `conj`; empty for a task with no
    checker."""
    conj: Literal["and", "or"] = "and"
    """How several metrics combine: `and` (0 if any is 0, else the mean) or `or` (1 if any is 1,
    else the max)."""
    result: dict[str, Any] | list[dict[str, Any] | None] | None = None
    """Getter spec(s) for the machine state; a list is aligned with `func`."""
    expected: dict[str, Any] | list[dict[str, Any] | None] | None = None
    """Getter spec(s) for the reference value; a list is aligned with `func`."""
    options: dict[str, Any] | list[dict[str, Any] | None] | None = None
    """Metric keyword arguments; a list is aligned with `func`."""
    postconfig: list[SetupStep] = Field(default_factory=list)
    """Steps the caller runs in the live machine after the episode, before scoring."""

    @property
    def funcs(self) -> list[str]:
        """The metric names as a list."""
        return self.func if isinstance(self.func, list) else [self.func]

    def aligned(self, field: str) -> list[Any]:
        """`result`, `expected` or `options` as a list with one entry per metric."""
        value = getattr(self, field)
        if isinstance(self.func, list) and isinstance(value, list):
            return list(value) + [None] * (len(self.func) - len(value))
        return [value] * len(self.funcs)


class Task(BaseModel):
    """An OSWorld-format task; `base_dir` is the folder of the task file (for relative fixture
    paths)."""

    model_config = ConfigDict(extra="allow")

    id: str
    """Task id (OSWorld uses a uuid equal to the file stem)."""
    instruction: str
    """What the agent is asked to do."""
    config: list[SetupStep] = Field(default_factory=list)
    """Ordered setup steps run before the agent starts."""
    evaluator: Evaluator = Field(default_factory=Evaluator)
    """How the end state is scored; a task without one (just an instruction) is run but not
    scored."""
    related_apps: list[str] = Field(default_factory=list)
    """Applications the task touches (informational)."""
    source: str | list[str] | None = None
    """Where the task came from (informational)."""
    snapshot: str | None = None
    """Legacy VM snapshot label; unused at run time."""
    proxy: bool = False
    """OSWorld runs the task through a proxy to reach live websites."""
    possibility_of_env_change: str | None = None
    """Whether the live web the task uses may have changed (informational)."""
    fixed_ip: bool = False
    """The task needs a fixed IP address (informational)."""
    trajectory: str | None = None
    """Placeholder path for a reference trajectory (informational)."""
    hint: str | None = None
    """Optional hint some task files carry."""
    base_dir: Path = Field(default=Path("."), exclude=True)
    """Folder the task file lives in; not part of the JSON."""
    allow_host_paths: bool = Field(default=False, exclude=True)
    """Let file references leave the task's folder and the cache (the user's --allow-host-paths)."""
    extra_roots: list[Path] = Field(default_factory=list, exclude=True)
    """Host files or folders the harness itself names (batch inputs) that references may use."""


SUITE_MARKERS = ("build.py", "solutions")


def reference_root(task: Task) -> Path:
    """The folder a task's relative file references may use: its own, or its suite's when the task
    sits in a suite's `tasks/` folder (a folder beside `build.py` or `solutions/`)."""
    folder = Path(task.base_dir)
    suite = folder.parent
    if folder.name == "tasks" and any((suite / marker).exists() for marker in SUITE_MARKERS):
        return suite
    return folder


UNION_TAGS = {"str", "int", "float", "bool", "list", "dict", "literal", "none"}


def load_task(path: str | Path) -> Task:
    """Read and validate one task file; raises StateActError with one sentence for bad input."""
    path = Path(path)
    item = None if path.is_file() else list_item(path)  # `test.raw.json#12`: one of a list
    file = item[0] if item else path
    if not file.is_file():
        raise StateActError(f"task file {path} does not exist")
    try:
        data = read_json(file) if item else json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StateActError(f"task file {file} is not valid JSON ({exc})") from None
    if item is not None:
        if not isinstance(data, list) or not item[1] < len(data):
            raise StateActError(f"{file} holds no task number {item[1]}")
        data = data[item[1]]
    return task_from_dict(data, path)


def task_from_dict(data: Any, path: Path) -> Task:
    """Validate parsed task JSON; `path` names the file in errors and gives the default id."""
    if not isinstance(data, dict):
        raise StateActError(f"task file {path} must hold a JSON object, not {type(data).__name__}")
    if is_webarena_task(data):  # WebArena's own format (tasks/webarena/task.py)
        data = webarena_task_dict(data, str(path))
    if "instruction" not in data:
        raise StateActError(f"task file {path} has no 'instruction' field")
    data = {**data, "id": data.get("id") or path.stem, "base_dir": path.parent.resolve()}
    try:
        return Task.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        # Union members show up in the location (`func.str`); keep only the field path.
        parts = [
            str(p)
            for p in first["loc"]
            if not (isinstance(p, str) and p in UNION_TAGS or "[" in str(p))
        ]
        where = ".".join(parts) or "(top level)"
        raise StateActError(
            f"task file {path} has an invalid field '{where}': {first['msg']}"
        ) from None
