"""`stateact osworld2 fetch`: the gated OSWorld 2.0 datasets with your own token (what `run` and
`suite` do with `--osworld2` is in `osworld2_tasks`)."""

from __future__ import annotations

import json
from pathlib import Path

from tasks.osworld2.fetch import fetch_dataset, user_token


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "osworld2",
        help="download OSWorld 2.0's gated task data with your own Hugging Face token",
        description="`stateact osworld2 fetch tasks --revision REV --out DIR` downloads the gated "
        "dataset xlangai/osworld_v2_tasks (or `assets`: xlangai/osworld_v2_assets_gated) at the "
        "revision you pin, with your own token (--token-file, HF_TOKEN or your `hf auth login`; "
        "never written to a run record), and notes the commit beside the data so runs on it "
        "record it. Nothing is downloaded unless you run this. Exit 0 when downloaded, 2 on bad "
        "input or a refused download.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    fetch = actions.add_parser("fetch", help="download one of the gated datasets")
    fetch.add_argument("dataset", choices=["tasks", "assets"], help="which dataset")
    fetch.add_argument("--out", required=True, help="the folder to download into")
    fetch.add_argument(
        "--revision",
        required=True,
        help="the dataset commit (or tag) to pin; the run records the commit it resolves to",
    )
    fetch.add_argument("--token-file", help="a file holding your Hugging Face token")
    parser.set_defaults(handler=run)


def run(args) -> int:
    from_file = Path(args.token_file) if args.token_file else None
    fetched = _fetch(args.dataset, Path(args.out), args.revision, from_file)
    print(json.dumps(fetched))
    return 0


def _fetch(dataset: str, out: Path, revision: str, token_file: Path | None) -> dict:
    return fetch_dataset(dataset, out, revision, user_token(token_file))
