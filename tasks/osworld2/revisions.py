"""Which OSWorld 2.0 a run used: the checkout's commit and the task data's dataset revision,
recorded in every run's config.json so a score can be traced to the code and data that made it.

The data's revision is read from the note `stateact osworld2 fetch` leaves in the folder
(`DATA_NOTE`), else from a Hugging Face cache path (`…/snapshots/<commit>/…`); data brought some
other way is recorded as of unknown revision rather than guessed.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

DATA_NOTE = ".stateact-osworld2.json"
"""Written by `stateact osworld2 fetch` beside the data: the dataset, the revision asked for and
the commit it resolved to (never the token)."""
SNAPSHOT = re.compile(r"^[0-9a-f]{40}$")
GIT_TIMEOUT_S = 20


def checkout_revision(checkout: Path) -> dict:
    """The checkout's commit and whether its work tree differs from it (None: not a git tree)."""
    commit = _git(checkout, "rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None}
    status = _git(checkout, "status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def data_revision(data: Path | None) -> dict:
    """The task data's dataset and commit, as far as the folder tells."""
    if data is None:
        return {"dataset": None, "commit": None}
    for folder in [data, *data.parents]:
        note = folder / DATA_NOTE
        if note.is_file():
            try:
                value = json.loads(note.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                break
            if isinstance(value, dict):
                return {"dataset": value.get("dataset"), "commit": value.get("commit")}
        if SNAPSHOT.match(folder.name) and folder.parent.name == "snapshots":
            return {"dataset": _cache_dataset(folder.parent.parent.name), "commit": folder.name}
    return {"dataset": None, "commit": None}


def _cache_dataset(name: str) -> str | None:
    """`datasets--xlangai--osworld_v2_tasks` (the Hugging Face cache's folder) -> its id."""
    parts = name.split("--")
    return "/".join(parts[1:]) if parts[0] == "datasets" and len(parts) > 2 else None


def pinned_revisions(checkout: Path, data: Path | None) -> dict:
    """What a run records about the benchmark it ran."""
    return {"checkout": checkout_revision(checkout), "data": data_revision(data)}
