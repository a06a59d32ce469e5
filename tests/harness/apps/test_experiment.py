"""`stateact experiment` on the bundled smoke example (oracle, a do-nothing script, the screenshot
baseline scripted to answer "infeasible") over 6 bundled tasks x 2 trials, in real sandboxes: the
three tables are written, their numbers equal an independent calculation from the arms'
results.jsonl files, a rerun keeps every finished run, and `--table` rebuilds the same files.
Bad experiment files are refused with one sentence."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path

import numpy
import pytest

from harness.cli import main
from tests.conftest import require_image

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "tasks" / "suites" / "longhorizon" / "experiments"
SMOKE = EXAMPLES / "smoke.yaml"
TASKS = ["lh-inf-002", "lh-os-001", "lh-os-003", "lh-db-001", "lh-impress-001", "lh-writer-004"]
ARMS = ["oracle", "do-nothing", "screenshot"]


def raw_lines(out: Path, arm: str) -> list[dict]:
    lines = []
    for trial in (1, 2):
        text = (out / arm / f"trial-{trial}" / "results.jsonl").read_text()
        lines += [{**json.loads(t), "trial": trial} for t in text.splitlines() if t.strip()]
    return lines


def expected_row(lines: list[dict]) -> dict:
    """The paper's columns, recomputed here from the lines alone."""
    n = len(lines)
    scores = [line["score"] or 0.0 for line in lines]
    costs = [line["cost_usd"] for line in lines]
    steps = sum(line["main_steps"] for line in lines)
    screen = sum(line["gui_delegations"] + line["main_gui_actions"] for line in lines)
    reviewed = [line for line in lines if line["gate_rounds"] > 0]
    correct = [line for line in reviewed if (line["score"] or 0.0) == 1.0]
    return {
        "runs": n,
        "binary_success": sum(s == 1.0 for s in scores) / n,
        "partial_success": sum(scores) / n,
        "cost_per_task": sum(costs) / n,
        "cost_per_task_median": statistics.median(costs),
        "cost_total": sum(costs),
        "gui_task_share": sum(line["gui_steps"] > 0 for line in lines) / n,
        "gui_step_share": screen / steps if steps else None,
        "gate_rounds": sum(line["gate_rounds"] for line in lines) / n,
        "gate_false_reject": (
            sum(not line["gate_passed"] for line in correct) / len(correct) if correct else None
        ),
    }


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), written out."""
    position = (len(sorted_values) - 1) * q
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def expected_pair(a_lines: list[dict], b_lines: list[dict]) -> dict:
    def by_task(lines):
        runs = defaultdict(list)
        for line in lines:
            runs[line["task_id"]].append(line["score"] or 0.0)
        return runs

    a, b = by_task(a_lines), by_task(b_lines)
    common = sorted(set(a) & set(b))
    binary = [
        sum(s == 1.0 for s in a[t]) / len(a[t]) - sum(s == 1.0 for s in b[t]) / len(b[t])
        for t in common
    ]
    partial = [sum(a[t]) / len(a[t]) - sum(b[t]) / len(b[t]) for t in common]

    def interval(diffs):
        picks = numpy.random.default_rng(0).integers(0, len(diffs), size=(10_000, len(diffs)))
        means = sorted(sum(diffs[i] for i in row) / len(diffs) for row in picks.tolist())
        return [percentile(means, 0.025), percentile(means, 0.975)]

    return {
        "tasks": len(common),
        "binary_diff": sum(binary) / len(binary),
        "binary_ci": interval(binary),
        "partial_diff": sum(partial) / len(partial),
        "partial_ci": interval(partial),
    }


def close(actual, expected) -> bool:
    if expected is None or actual is None:
        return actual is expected
    if isinstance(expected, list):
        return len(actual) == len(expected) and all(map(close, actual, expected))
    return actual == pytest.approx(expected, abs=2e-6)


def check_table(table: dict, out: Path) -> None:
    lines = {arm: raw_lines(out, arm) for arm in ARMS}
    assert [row["name"] for row in table["arms"]] == ARMS
    for row in table["arms"]:
        assert row["tasks"] == 6 and row["trials"] == 2
        for key, value in expected_row(lines[row["name"]]).items():
            assert close(row[key], value), (row["name"], key, row[key], value)
    domains = {line["domain"] for arm_lines in lines.values() for line in arm_lines}
    assert set(table["by_domain"]) == domains == {"inf", "os", "db", "impress", "writer"}
    for domain, rows in table["by_domain"].items():
        for arm, row in rows.items():
            subset = [line for line in lines[arm] if line["domain"] == domain]
            for key, value in expected_row(subset).items():
                assert close(row[key], value), (domain, arm, key)
    pairs = {(p["a"], p["b"]): p for p in table["pairs"]}
    assert set(pairs) == {("oracle", "do-nothing"), ("oracle", "screenshot"),
                          ("do-nothing", "screenshot")}  # fmt: skip
    for (a, b), pair in pairs.items():
        for key, value in expected_pair(lines[a], lines[b]).items():
            assert close(pair[key], value), (a, b, key, pair[key], value)
        assert pair["binary_ci"][0] <= pair["binary_diff"] <= pair["binary_ci"][1]
    do_nothing_cost = sum(x["cost_usd"] for x in lines["do-nothing"]) / 12
    screenshot_cost = sum(x["cost_usd"] for x in lines["screenshot"]) / 12
    ratio = pairs[("do-nothing", "screenshot")]["cost_ratio"]
    assert close(ratio, do_nothing_cost / screenshot_cost) and close(ratio, 0.5)
    assert pairs[("oracle", "do-nothing")]["cost_ratio"] == pytest.approx(0.0)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.desktop
def test_experiment_writes_the_tables_resumes_and_rebuilds_them(tmp_path, capsys):
    require_image("desktop")
    out = tmp_path / "smoke"
    assert main(["experiment", str(SMOKE), "--out", str(out)]) == 0
    table = json.loads((out / "table.json").read_text())
    check_table(table, out)
    rows = {row["name"]: row for row in table["arms"]}
    # The arms did what they were scripted to: the reference solutions pass everything, doing
    # nothing passes nothing, and answering "infeasible" passes the one infeasible task.
    assert rows["oracle"]["binary_success"] == 1.0 and rows["oracle"]["gate_reviewed"] == 10
    assert rows["do-nothing"]["partial_success"] == 0.0
    assert rows["screenshot"]["binary_success"] == pytest.approx(1 / 6, abs=1e-6)
    assert table["by_domain"]["inf"]["screenshot"]["binary_success"] == 1.0
    assert rows["screenshot"]["gui_task_share"] == 1.0
    assert rows["screenshot"]["gui_step_share"] == 0.75  # 3 screen actions, then finish
    assert rows["screenshot"]["options"] == {"control": "screenshot"}
    assert rows["screenshot"]["config"]["control"] == "screenshot"
    assert rows["screenshot"]["config"]["screenshot"]["gate"] is False  # the baseline: no gate
    assert rows["oracle"]["stateact_version"]
    markdown = (out / "table.md").read_text()
    assert "| screenshot | 12 | 16.7% |" in markdown
    assert "<td>screenshot</td><td>12</td><td>16.7%</td>" in (out / "table.html").read_text()

    # A rerun keeps every finished run: no run folder is written again.
    results = sorted(out.glob("*/trial-*/runs/*/result.json"))
    assert len(results) == 36
    stamps = {path: path.stat().st_mtime_ns for path in results}
    lines_before = {p: p.read_text() for p in out.glob("*/trial-*/results.jsonl")}
    assert main(["experiment", str(SMOKE), "--out", str(out)]) == 0
    assert {path: path.stat().st_mtime_ns for path in results} == stamps
    assert {p: p.read_text() for p in out.glob("*/trial-*/results.jsonl")} == lines_before

    # --table rebuilds the same three files from what is there.
    before = {name: (out / name).read_bytes() for name in ("table.json", "table.md", "table.html")}
    for name in before:
        (out / name).unlink()
    assert main(["experiment", "--table", str(out)]) == 0
    assert {name: (out / name).read_bytes() for name in before} == before


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("tasks: [x]\narms: []\n", "arms"),
        (
            "tasks: ['..']\narms: [{name: a, model: script/oracle}, {name: a, model: x/y}]\n",
            "unique",
        ),  # fmt: skip
        ("tasks: ['..']\ntrial: 2\narms: [{name: a, model: script/oracle}]\n", "trial"),
        ("tasks: ['..']\narms: [{name: a, model: script/oracle, presett: full}]\n", "presett"),
        ("tasks: ['..']\narms: [{name: a, model: script/oracle, preset: none}]\n", "preset"),
        (
            "tasks: ['..']\nselect: [nothing-*]\narms: [{name: a, model: script/oracle}]\n",
            "match no task",
        ),  # fmt: skip
        ("tasks: [: bad\n", "YAML"),
        ("- just a list\n", "mapping"),
    ],
)
def test_bad_experiment_files_are_refused_in_one_sentence(tmp_path, capsys, text, words):
    path = EXAMPLES / f".test-{tmp_path.name}.yaml"  # beside the examples, so '..' is the suite
    path.write_text(text)
    try:
        code = main(["experiment", str(path), "--out", str(tmp_path / "out")])
    finally:
        path.unlink()
    err = capsys.readouterr().err
    assert code == 2, err
    assert words in err and "Traceback" not in err
    assert not (tmp_path / "out" / "table.json").exists()


def test_table_of_a_folder_without_an_experiment_is_refused(tmp_path, capsys):
    assert main(["experiment", "--table", str(tmp_path)]) == 2
    assert "experiment.json is missing" in capsys.readouterr().err
