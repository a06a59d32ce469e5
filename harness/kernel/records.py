"""Run directories: everything a run did, written as it happens so a killed run stays readable.

config.json        what was asked for (model, limits, task) trajectory.jsonl   one event per
line, appended and flushed after every model turn and tool result images/            PNGs from
tool results, referenced from the trajectory as {"type": "image", "file": ...} gate/round-N.json
each finish-gate round result.json        the outcome, written atomically at the end
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import re
import threading
import time
from pathlib import Path

from .core import StateActError
from .secrets import redact

RESULT_FIELDS = (
    "task_id",
    "score",
    "success",
    "status",
    "error",
    "cost_usd",
    "input_tokens",
    "output_tokens",
    "model_turns",
    "main_turns",
    "tool_uses",
    "delegations",
    "gui_steps",
    "gate_rounds",
    "gate_passed",
    "duration_s",
)


RUN_NAME_LIMIT = 100


def safe_run_name(text: str, fallback: str = "task") -> str:
    """A folder name made from an id: one path component of [A-Za-z0-9._-], never `.` or `..`.

    Whatever a task file calls itself (`..`, `a/../../b`, NUL, 10,000 characters), its run folder
    stays a direct child of the folder it is made in; a shortened name keeps a hash of the whole id.
    """
    name = re.sub(r"[^A-Za-z0-9._-]", "_", str(text)).lstrip(".-") or fallback
    if len(name) > RUN_NAME_LIMIT:
        digest = hashlib.sha256(str(text).encode("utf-8", "replace")).hexdigest()[:12]
        name = f"{name[: RUN_NAME_LIMIT - 13]}-{digest}"
    return name


def write_json_atomic(path: Path, data) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(redact(json.dumps(data, indent=2, default=str)) + "\n")
    os.replace(tmp, path)


class RunRecord:
    """Writes one run directory."""

    def __init__(self, run_dir: Path):
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "images").mkdir(exist_ok=True)
        self._lock = threading.Lock()
        self._image_count = len(list((self.dir / "images").glob("*.png")))
        self._trajectory = open(self.dir / "trajectory.jsonl", "a", encoding="utf-8")

    def write_config(self, config: dict) -> None:
        write_json_atomic(self.dir / "config.json", config)

    def append(self, event: str, **data) -> None:
        """Append one event; image blocks inside `data` are written out as files first."""
        with self._lock:
            record = {"event": event, "time": round(time.time(), 3), **self._externalize(data)}
            self._trajectory.write(redact(json.dumps(record, default=str)) + "\n")
            self._trajectory.flush()

    def write_gate_round(self, number: int, data: dict) -> Path:
        gate_dir = self.dir / "gate"
        gate_dir.mkdir(exist_ok=True)
        path = gate_dir / f"round-{number}.json"
        write_json_atomic(path, self._externalize(data))
        return path

    def write_result(self, result: dict) -> None:
        missing = [name for name in RESULT_FIELDS if name not in result]
        if missing:
            raise ValueError(f"result.json is missing {missing}")
        write_json_atomic(self.dir / "result.json", result)

    def close(self) -> None:
        self._trajectory.close()

    def _externalize(self, value):
        """A copy of `value` with base64 images replaced by files under images/."""
        if isinstance(value, dict):
            if value.get("type") == "image" and value.get("source", {}).get("type") == "base64":
                self._image_count += 1
                name = f"images/{self._image_count:05d}.png"
                (self.dir / name).write_bytes(base64.b64decode(value["source"]["data"]))
                return {"type": "image", "file": name}
            return {key: self._externalize(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._externalize(item) for item in value]
        return value


def load_events(run_dir: Path) -> list[dict]:
    """The trajectory's events; a last line cut short by a kill is ignored."""
    path = Path(run_dir) / "trajectory.jsonl"
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return events


def internalize_images(run_dir: Path, value):
    """The inverse of externalizing: image files become base64 blocks again (for resume and
    replay)."""
    if isinstance(value, dict):
        if value.get("type") == "image" and "file" in value:
            path = Path(run_dir) / str(value["file"])
            if not path.resolve().is_relative_to(Path(run_dir).resolve()):
                raise StateActError(f"the image {value['file']!r} is not inside the run folder.")
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            return {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": data},
            }
        return {key: internalize_images(run_dir, item) for key, item in value.items()}
    if isinstance(value, list):
        return [internalize_images(run_dir, item) for item in value]
    return copy.copy(value)
