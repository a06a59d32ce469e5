"""LocalLSTC's runtime rules in isolation: the pre-execution repeat thresholds (bash/python 3, GUI
action-result 5, GUI decision over 3 planner calls), what clears them, and the changed region of a
GUI step (the diff's box plus a 50-pixel margin, clipped to the screen)."""

from __future__ import annotations

import io

from PIL import Image

from harness.control.lstc.region import changed_region, scaled
from harness.control.lstc.suppress import RepeatGuard

GUI = ("click", "type", "key")


def _runs(guard: RepeatGuard, tool: str, command: str, times: int, state="s") -> list:
    """Refusal before each of `times` attempts, recording the same result after each run."""
    answers = []
    for _ in range(times):
        refusal = guard.refuse(tool, command, state)
        answers.append(refusal)
        if refusal is None:
            guard.ran(tool, command, "same output", state)
    return answers


def test_a_code_action_is_refused_before_its_third_identical_run():
    answers = _runs(RepeatGuard(GUI), "bash", "ls  /home/user", 3)
    assert answers[:2] == [None, None] and "ran 2 times" in answers[2]
    guard = RepeatGuard(GUI)
    _runs(guard, "bash", "ls", 2)
    assert guard.refuse("bash", "ls", "files changed") is None  # a new state is a new basis
    guard.ran("bash", "ls", "other output", "s")
    assert guard.refuse("bash", "ls", "s") is None  # a different result restarts the count


def test_a_gui_action_result_may_repeat_four_times_and_is_refused_at_the_fifth():
    guard = RepeatGuard(GUI)
    answers = []
    for _ in range(5):
        guard.plan([{"tool": "bash", "input": "true"}])  # no repeated GUI decision
        refusal = guard.refuse("click", "the OK button", "s")
        answers.append(refusal)
        if refusal is None:
            guard.ran("click", "the OK button", "same screen", "s")
    assert answers[:4] == [None] * 4 and "ran 4 times" in answers[4]


def test_the_same_gui_decision_from_three_planner_calls_is_refused():
    guard = RepeatGuard(GUI)
    click = [{"tool": "click", "input": "the OK button"}]
    for expected in (None, None):
        guard.plan(click)
        assert guard.refuse("click", "the OK button", None) is expected
    guard.plan(click)
    assert "3 planner calls in a row" in guard.refuse("click", "the OK button", None)
    guard.clear()  # the subgoal advanced
    guard.plan(click)
    assert guard.refuse("click", "the OK button", None) is None


def _png(size=(400, 300), box=None, color=(255, 0, 0)) -> bytes:
    image = Image.new("RGB", size, (255, 255, 255))
    if box:
        image.paste(color, box)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def test_the_changed_region_is_the_diff_box_with_a_50_pixel_margin():
    before, after = _png(), _png(box=(100, 100, 120, 110))
    crop, box = changed_region(before, after)
    assert box == (50, 50, 170, 160)
    assert Image.open(io.BytesIO(crop)).size == (120, 110)
    _, edge = changed_region(before, _png(box=(0, 280, 10, 300)))
    assert edge == (0, 230, 60, 300)  # clipped to the screen
    whole, none = changed_region(before, before)
    assert none is None and whole == before  # no change: the full screenshot
    assert changed_region(None, after) == (after, None)
    assert Image.open(io.BytesIO(scaled(after, 0.5))).size == (200, 150)
