"""Deterministic fixture generator for the long-horizon suite.

Writes `fixtures/<task-id>/...` (what setup uploads into the sandbox) and
`expected/<task-id>/...` (gold files the evaluators read) beside this file. Every value comes
from `random.Random(seed)`, so two runs produce the same data; `ensure_fixtures` skips the work
when the stamp matches the generator code.

    python -m tasks.suites.longhorizon.build [--force]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import shutil
from pathlib import Path

SUITE_DIR = Path(__file__).resolve().parent
STAMP_NAME = ".fixtures-stamp"
# Imported only when a rebuild is due: the office libraries they load cost most of a second.
GENERATOR_MODULES = ("gen_calc", "gen_docs", "gen_slides", "gen_misc", "gen_apps")


def generator_hash() -> str:
    """A hash of the generator source: the fixtures are up to date when the stamp holds this
    value."""
    digest = hashlib.sha256()
    sources = [
        Path(__file__),
        SUITE_DIR / "common.py",
        *(SUITE_DIR / f"{m}.py" for m in GENERATOR_MODULES),
    ]
    sources += sorted(p for p in (SUITE_DIR / "site").rglob("*") if p.is_file())
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()


def ensure_fixtures(suite_dir: Path | None = None, force: bool = False) -> Path:
    """Build `fixtures/` and `expected/` under `suite_dir` unless they are current; returns
    `suite_dir`."""
    suite_dir = Path(suite_dir or SUITE_DIR)
    stamp = suite_dir / STAMP_NAME
    wanted = generator_hash()
    fresh = (suite_dir / "fixtures").is_dir() and (suite_dir / "expected").is_dir()
    if not force and fresh and stamp.is_file() and stamp.read_text().strip() == wanted:
        return suite_dir
    for folder in ("fixtures", "expected"):
        shutil.rmtree(suite_dir / folder, ignore_errors=True)
    for name in GENERATOR_MODULES:
        module = importlib.import_module(f"tasks.suites.longhorizon.{name}")
        module.build_all(suite_dir / "fixtures", suite_dir / "expected")
    stamp.write_text(wanted + "\n")
    return suite_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Generate the long-horizon suite's fixtures and gold files."
    )
    parser.add_argument(
        "--force", action="store_true", help="rebuild even when the stamp is current"
    )
    parser.add_argument(
        "--suite-dir", type=Path, default=None, help="where to write (default: this folder)"
    )
    args = parser.parse_args(argv)
    suite_dir = ensure_fixtures(args.suite_dir, force=args.force)
    count = sum(1 for p in (suite_dir / "fixtures").rglob("*") if p.is_file())
    print(f"fixtures ready in {suite_dir} ({count} input files)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
