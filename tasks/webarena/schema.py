"""WebArena's task files as published (`config_files/test.raw.json` holds 812 of them in a list;
the per-task files are one object each), loaded as pydantic models that keep unknown fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.kernel.core import StateActError

EvalType = Literal["string_match", "url_match", "program_html"]
SITE_NAMES = ("shopping", "shopping_admin", "reddit", "gitlab", "map", "wikipedia", "homepage")


class HtmlTarget(BaseModel):
    """One `program_html` check: which page, which element, what it must contain."""

    model_config = ConfigDict(extra="allow")

    url: str
    """A URL (placeholders allowed), `last` for the page the agent ended on, or `func:…`."""
    locator: str = ""
    """Empty (the whole page), JavaScript starting `document.`/`[...document.`, or `func:…`."""
    required_contents: dict[str, Any]
    """`{"exact_match": str}` or `{"must_include": [str, …]}` (`|OR|` alternatives)."""
    prep_actions: list[str] = Field(default_factory=list)
    """JavaScript run on the page before the locator (errors ignored, as WebArena does)."""


class WebArenaEval(BaseModel):
    model_config = ConfigDict(extra="allow")

    eval_types: list[EvalType]
    reference_answers: dict[str, Any] | None = None
    """`exact_match` (str), `must_include` (list), `fuzzy_match` (list, or "N/A")."""
    reference_url: str | None = ""
    """Reference URLs joined by ` |OR| `."""
    url_note: str = "GOLD in PRED"
    program_html: list[HtmlTarget] = Field(default_factory=list)
    string_note: str | None = ""
    """For an unachievable task, why it is unachievable (judged against the agent's reason)."""


class WebArenaTask(BaseModel):
    """One WebArena task; `intent` is the instruction and the `finish` answer is the answer."""

    model_config = ConfigDict(extra="allow")

    task_id: int | str
    sites: list[str]
    require_login: bool = False
    storage_state: str | None = None
    start_url: str
    geolocation: Any = None
    intent_template: str | None = None
    instantiation_dict: dict[str, Any] = Field(default_factory=dict)
    intent: str
    require_reset: bool = False
    eval: WebArenaEval
    intent_template_id: int | None = None

    @property
    def id(self) -> str:
        return f"webarena-{self.task_id}"

    @property
    def start_urls(self) -> list[str]:
        """Each URL of `start_url` (` |AND| ` opens several tabs)."""
        return [url.strip() for url in self.start_url.split(" |AND| ") if url.strip()]


def is_webarena_task(data: Any) -> bool:
    """Whether a parsed JSON object is a WebArena task (as opposed to an OSWorld one)."""
    return isinstance(data, dict) and {"intent", "eval", "sites", "start_url"} <= data.keys()


def validated(model: type[BaseModel], data: Any, what: str):
    """`data` as `model`, or one StateActError sentence naming `what` and the first bad field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise StateActError(f"{what}: {field}: {first['msg']}") from None


def parse_webarena_task(data: dict, where: str) -> WebArenaTask:
    return validated(WebArenaTask, data, f"{where} is not a WebArena task")


def load_webarena_tasks(path: str | Path) -> list[WebArenaTask]:
    """The tasks of a WebArena file: one object, or a list of them (as `test.raw.json`)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StateActError(f"cannot read the WebArena task file {path}: {exc}") from None
    items = data if isinstance(data, list) else [data]
    return [parse_webarena_task(item, f"{path} item {n}") for n, item in enumerate(items)]
