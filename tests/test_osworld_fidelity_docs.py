"""Differential cases: StateAct's metrics must give OSWorld's own verdicts on the same inputs.

Each family folder under `tests/osworld_cases/` holds one folder of input files per case and a
`cases.json` whose scores came from running OSWorld's metric functions on those files (outside
the project). A `result`/`expected` naming a file of the case folder is passed as its path (a list
of names as a list of paths); any other value is passed as is. A metric that raises scores 0, as in
`tasks.evaluate`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.evaluate import run_metric_value

CASES_DIR = Path(__file__).parent / "osworld_cases"
FAMILIES = ("docs", "slides", "general", "media")


def load_cases() -> list[tuple[str, dict]]:
    found = []
    for family in FAMILIES:
        listing = CASES_DIR / family / "cases.json"
        if listing.is_file():
            found += [(family, case) for case in json.loads(listing.read_text())]
    return found


CASES = load_cases()


def resolve(value, folder: Path):
    """A file name of the case folder becomes its path; anything else stays as it is."""
    if isinstance(value, str) and (folder / value).is_file():
        return str(folder / value)
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, str) and (folder / v).is_file() for v in value)
    ):
        return [str(folder / v) for v in value]
    return value


def score_case(family: str, case: dict) -> float:
    folder = CASES_DIR / family / case["id"]
    result = resolve(case["result"], folder)
    expected = resolve(case["expected"], folder)
    return run_metric_value(case["metric"], result, expected, case["options"])


def test_the_case_sets_are_there():
    assert len(CASES) >= 200
    assert len({case["metric"] for _, case in CASES}) >= 35


@pytest.mark.parametrize(
    ("family", "case"), CASES, ids=[f"{family}/{case['id']}" for family, case in CASES]
)
def test_stateact_agrees_with_osworld(family, case):
    assert score_case(family, case) == pytest.approx(case["score"], abs=1e-6)
