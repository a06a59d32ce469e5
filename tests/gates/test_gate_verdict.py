"""The verdict value and the office observer's answer parsing (no sandbox needed)."""

from __future__ import annotations

import json

from gates import Gap, Verdict
from gates.appstate import OBSERVER_ARGV, observe_open_documents, settled_open_documents
from gates.verdict import rejected, undecided


class Answers:
    """Stands in for `sandbox.exec` only: records the argv and returns a fixed answer."""

    def __init__(self, code: int, output: str):
        self.answer = (code, output)
        self.argv: list[str] = []

    def exec(self, argv, timeout=120.0, user="user"):
        self.argv = argv
        return self.answer


def test_verdict_json_names_each_gaps_layer_and_keeps_the_transcript_out():
    verdict = rejected(
        ["/home/user/a.xlsx: wrong total"], "model", {"transcript": [1], "probes": []}
    )
    data = verdict.to_json()
    assert data["passed"] is False and data["decided_by"] == "model"
    assert data["gaps"] == [{"text": "/home/user/a.xlsx: wrong total", "layer": "model"}]
    assert "transcript" not in data and data["probes"] == []
    assert verdict.to_json(evidence=False).keys() == {"passed", "decided", "decided_by", "gaps"}
    closed = Verdict(True, (), {"transcript": []}).with_gaps(["r1 failed"], "probe")
    assert closed.passed is False and closed.gaps == (Gap("r1 failed", "probe"),)
    assert undecided("no sandbox").to_json()["decided"] is False


def test_the_observer_runs_isolated_and_parses_the_offices_answer():
    answer = {"asked": True, "documents": [{"path": "/home/user/a.xlsx", "modified": True}]}
    sandbox = Answers(0, "some warning\n" + json.dumps(answer) + "\n")
    state = observe_open_documents(sandbox)
    assert state.asked and state.open_document("/home/user/a.xlsx").modified is True
    assert state.open_document("/home/user/b.xlsx") is None
    assert sandbox.argv == OBSERVER_ARGV
    assert OBSERVER_ARGV[:4] == ["env", "-i", "-C", "/"] and "-I" in OBSERVER_ARGV
    assert "/usr/bin/python3" in OBSERVER_ARGV


def test_an_observer_that_fails_or_talks_nonsense_means_not_asked():
    nonsense = [(1, "Traceback ...\nSegmentation fault"), (0, ""), (124, "{not json"), (0, "[1]")]
    for code, output in nonsense + [(0, '{"asked": true, "documents": 3}')]:
        state = observe_open_documents(Answers(code, output))
        assert not state.asked and state.documents == [] and state.reason
    missing = {"asked": False, "reason": "no LibreOffice is running"}
    state = observe_open_documents(Answers(0, json.dumps(missing)))
    assert not state.asked and state.reason == "no LibreOffice is running"


class Saving:
    """An office whose document reports unsaved changes for its first `busy` answers (a save in
    flight), then saved; `busy=None` never saves."""

    def __init__(self, busy: int | None):
        self.busy = busy
        self.asked = 0

    def exec(self, argv, timeout=120.0, user="user"):
        self.asked += 1
        modified = self.busy is None or self.asked <= self.busy
        document = {"path": "/home/user/a.xlsx", "modified": modified}
        return 0, json.dumps({"asked": True, "documents": [document]})


def test_a_save_in_flight_is_waited_for_and_an_unsaved_document_is_not():
    saving = Saving(busy=3)
    state = settled_open_documents(saving, settle_s=5.0, poll_s=0.01)
    assert state.open_document("/home/user/a.xlsx").modified is False and saving.asked == 4
    never = Saving(busy=None)
    state = settled_open_documents(never, settle_s=0.1, poll_s=0.01)
    assert state.open_document("/home/user/a.xlsx").modified is True and never.asked >= 2
    saved = Saving(busy=0)
    settled_open_documents(saved, settle_s=5.0, poll_s=0.01)
    assert saved.asked == 1  # nothing unsaved: asked once, no waiting
