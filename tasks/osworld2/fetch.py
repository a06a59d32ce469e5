"""`stateact osworld2 fetch`: OSWorld 2.0's gated datasets downloaded with the user's own Hugging
Face token, at the revision they pin, only when they ask (a run never downloads them).

The token is the user's: from `--token-file`, else `HF_TOKEN` or their `huggingface-cli login`;
it is handed to `huggingface_hub` and written nowhere by StateAct. Beside the data a note
(`revisions.DATA_NOTE`) keeps the dataset and the commit the revision resolved to, which every run
on that data records.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.kernel.core import StateActError
from harness.kernel.records import write_json_atomic
from tasks.osworld2.revisions import DATA_NOTE

try:  # an optional extra (`stateact[osworld2]`): only this command needs it
    import huggingface_hub
    from huggingface_hub import errors as hub_errors
except ImportError:  # pragma: no cover - the message below says how to install it
    huggingface_hub = None
    hub_errors = None

DATASETS = {
    "tasks": "xlangai/osworld_v2_tasks",
    "assets": "xlangai/osworld_v2_assets_gated",
}
"""The gated datasets of the release (the task modules, and the files their setups upload)."""


def user_token(token_file: Path | None) -> str:
    """The user's Hugging Face token; StateActError when they have none."""
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise StateActError(f"cannot read --token-file {token_file}: {exc.strerror}.") from None
        if not token:
            raise StateActError(f"--token-file {token_file} is empty.")
        return token
    token = os.environ.get("HF_TOKEN") or (huggingface_hub.get_token() if huggingface_hub else None)
    if not token:
        raise StateActError(
            "no Hugging Face token: accept the datasets' gates on huggingface.co, then set "
            "HF_TOKEN, log in with `hf auth login`, or pass --token-file FILE."
        )
    return token


def fetch_dataset(which: str, out: Path, revision: str, token: str) -> dict:
    """Download the dataset `which` (tasks or assets) at `revision` into `out`; the note
    written beside it."""
    if huggingface_hub is None:
        raise StateActError(
            "downloading OSWorld 2.0's datasets needs huggingface_hub: pip install "
            "'stateact[osworld2]'."
        )
    if which not in DATASETS:
        raise StateActError(f"the dataset must be one of {', '.join(DATASETS)}, not {which!r}.")
    if out.exists() and not out.is_dir():
        raise StateActError(f"--out {out} is not a folder.")
    repo = DATASETS[which]
    try:
        info = huggingface_hub.HfApi().dataset_info(repo, revision=revision, token=token)
        huggingface_hub.snapshot_download(
            repo, repo_type="dataset", revision=info.sha, local_dir=out, token=token
        )
    except hub_errors.GatedRepoError:
        raise StateActError(
            f"{repo} is gated and this token has no access: accept its terms on huggingface.co."
        ) from None
    except hub_errors.RevisionNotFoundError:
        raise StateActError(f"{repo} has no revision {revision!r}.") from None
    except hub_errors.RepositoryNotFoundError:
        raise StateActError(f"{repo} was not found (or the token cannot see it).") from None
    except (hub_errors.HfHubHTTPError, hub_errors.LocalEntryNotFoundError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StateActError(f"downloading {repo} failed: {first[:300]}") from None
    note = {"dataset": repo, "revision": revision, "commit": info.sha}
    write_json_atomic(out / DATA_NOTE, note)
    return note
