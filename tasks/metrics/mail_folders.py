"""Thunderbird's local mail folders (mbox files) compared as OSWorld's `check_thunderbird_folder`.

OSWorld splits a folder file on the upper-case separator `FROM - ` (Thunderbird writes `From - `)
and then keeps only the pieces that are blank (`if mail.strip(): continue`), so what it compares
is how many blank pieces each file has: an empty file has one, a file that starts with `FROM - `
has one, two separators with only space between them make one more. Two readable non-empty
folders written by Thunderbird therefore always agree. StateAct matches that verdict (see
docs/osworld-fidelity.md) rather than comparing messages, so scores stay comparable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.kernel.core import StateActError
from tasks.metrics.registry import metric

SEPARATOR = "FROM - "


def folder_signature(path: str | Path, remove_duplicate: bool) -> str:
    """OSWorld's reading of a folder file: one `FROM - ` line per blank piece between separators
    (a set of them when `remove_duplicate`), sorted and joined by newlines.

    Every non-blank piece is skipped before `remove_deleted`, `ignore_status` or `ignore_keys`
    could act on it, so those options change nothing. Raises StateActError for a file that is
    missing or not UTF-8 text, where OSWorld's `open(path, 'r')` raises.
    """
    try:
        with open(path, encoding="utf-8") as handle:  # universal newlines, as OSWorld's read
            data = handle.read().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise StateActError(f"cannot read the mail folder {Path(path).name} ({exc})") from None
    blanks = [SEPARATOR for piece in data.split(SEPARATOR) if not piece.strip()]
    kept = set(blanks) if remove_duplicate else blanks
    return "\n".join(sorted(kept))


@metric("check_thunderbird_folder")
def check_thunderbird_folder(result: Any, expected: Any, **options: Any) -> float:
    """1 when every result folder file reads as its expected one does (see folder_signature);
    0 when a result folder is absent. A single file is compared as a list of one."""
    if not isinstance(expected, list):
        result, expected = [result], [expected]
    if not isinstance(result, list):
        raise StateActError("check_thunderbird_folder got one result file for a list of folders")
    remove_duplicate = options.get("remove_duplicate", True)
    for got, wanted in zip(result, expected, strict=False):  # OSWorld's zip: the shorter list
        if got is None:
            return 0.0
        if not isinstance(got, str | Path) or not isinstance(wanted, str | Path):
            raise StateActError("check_thunderbird_folder needs the paths of folder files")
        if folder_signature(got, remove_duplicate) != folder_signature(wanted, remove_duplicate):
            return 0.0
    return 1.0
