"""The gate benchmark as a test: recall of the faults the model-free layers must catch >= 95%, no
correct deliverable rejected; with a scripted gate model the model and probe layers' plumbing."""

from __future__ import annotations

import pytest

from gates.bench.cases import CORRECT_SHAPES, FAULT_CLASSES, build_cases
from gates.bench.report import figures, markdown, totals
from gates.bench.runner import run_cases
from harness.models.scripted import ScriptedModel
from sandboxes.base import SandboxConfig
from tests.conftest import require_image

PROBED = "formula replaced by its value"


def verdict(passed: bool, gaps=()) -> dict:
    return {"tool_calls": [{"name": "verdict", "input": {"passed": passed, "gaps": list(gaps)}}]}


def truth_model(case) -> ScriptedModel:
    """A scripted gate model that knows each case's truth; on one class it checks with a probe
    first and then (wrongly) passes, so the probe's binding false must decide."""
    path = case.instruction.split()[1].rstrip(":.")
    if case.shape == PROBED:
        probe = {
            "kind": "xlsx_cells",
            "path": path,
            "sheet": "Data",
            "expect": {"B5": {"formula": "=SUM(B2:B4)"}},
        }
        return ScriptedModel(
            [{"tool_calls": [{"name": "probe", "input": {"spec": probe}}]}, verdict(True)]
        )
    if case.correct:
        return ScriptedModel([verdict(True)])
    return ScriptedModel([verdict(False, [f"{path}: {case.shape}"])])


def test_cases_are_seeded_deterministically_and_cover_the_issue():
    first, second = build_cases(), build_cases()
    assert len(first) >= 80
    assert [(c.id, c.instruction, c.after, c.before, c.then) for c in first] == [
        (c.id, c.instruction, c.after, c.before, c.then) for c in second
    ]
    assert {c.format for c in first} == {
        "xlsx",
        "docx",
        "pptx",
        "csv",
        "json",
        "sqlite",
        "text",
        "browser",
    }
    assert {c.shape for c in first} == {*CORRECT_SHAPES, *FAULT_CLASSES}
    assert all(not c.correct for c in first if c.structural)
    assert len({c.id for c in first}) == len(first)


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_gate_benchmark_recall_and_no_false_rejections():
    require_image("desktop")
    results = run_cases(SandboxConfig(), model_for=truth_model)
    total = totals(results)
    print(markdown(results))
    missed = [(r.case.id, r.case.shape) for r in results if r.case.structural and not r.caught]
    rejected = [
        (r.case.id, r.case.shape, r.model_free.gap_texts) for r in results if r.false_rejection
    ]
    assert total["recall"] >= 0.95, missed
    assert rejected == []
    assert all(r.then is None or not r.then.failed for r in results), [
        r.then.output for r in results if r.then and r.then.failed
    ]
    for result in results:
        case, free = result.case, result.model_free
        if case.shape == "unsaved edits in the open application" and case.then:
            assert free.gaps[0].layer == "structural"
            assert case.instruction.split()[1].rstrip(":") in free.gaps[0].text
            assert "unsaved changes" in free.gaps[0].text
            assert free.evidence["open_documents"]["asked"]
        if case.shape == "typed in the application, saved, still open":
            documents = free.evidence["open_documents"]["documents"]
            assert [d["modified"] for d in documents if d["path"] in case.instruction] == [False]
        if case.shape == "stale lock file beside it":
            assert any(f["check"] == "open" and not f["ok"] for f in free.evidence["structural"])
    # The scripted model: the whole gate is right on every case, each gap with its layer.
    for result in results:
        case, whole = result.case, result.with_model
        assert (whole.passed is True) == case.correct, (case.id, case.shape, whole.gaps)
        if case.structural:
            assert {g.layer for g in whole.gaps} == {"structural"}
            assert "transcript" not in whole.evidence  # decided without a model call
        elif case.shape == PROBED:
            assert [g.layer for g in whole.gaps] == ["probe"]
        elif not case.correct:
            assert [g.layer for g in whole.gaps] == ["model"]
    assert all(row.model_right == row.with_model for row in figures(results))
