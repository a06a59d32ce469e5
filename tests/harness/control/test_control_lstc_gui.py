"""`--control lstc --grounder openai/NAME` in a real desktop-image sandbox: the planner (the real
OpenAI SDK against the fake server) names a button, the fake grounder server receives the screenshot
and finds the button's pixels, the click goes through xdotool and the application sees it; each
action's evidence line comes from a Step Abstraction call that saw the screenshot (GUI) or the file
diff."""

from __future__ import annotations

import json

import pytest

from harness.run.config import RunConfig
from harness.runner import run_task
from tasks.schema import Task
from tests.conftest import require_image
from tests.fakes import FakeOpenAIServer
from tests.fakes.grounder import grounding, vision_parts

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.desktop]

CLICKED = "/tmp/clicked.txt"
# xmessage exits with the value of the pressed button: 7 only when "Go" was clicked.
APP = (
    "xmessage -xrm '*Command.background: red' -xrm '*Command.foreground: red' -center "
    f"-buttons Go:7 'Press Go'; echo $? > {CLICKED}"
)


def wait_for(window: str) -> str:
    """Shell text printing `shown` once a window is on the screen, else the launch log: the launch
    step returns at once, and a search can fail while windows come and go, so it is retried."""
    search = f"xdotool search --onlyvisible {window} >/dev/null 2>&1"
    return (
        f". /tmp/stateact-desktop.env; for i in $(seq 120); do {search} && break; sleep 0.5; "
        f"done; sleep 1; {search} && echo shown || cat /tmp/stateact-launch-1.log"
    )


WAIT = wait_for("--class xmessage")


def red_centre(image, text: str) -> tuple[int, int]:
    assert "Element: the red " in text, text
    rgb = image.convert("RGB")
    points = [
        (x, y)
        for y in range(0, rgb.height, 2)
        for x in range(0, rgb.width, 2)
        if (lambda p: p[0] > 200 and p[1] < 60 and p[2] < 60)(rgb.getpixel((x, y)))
    ]
    assert points, "no red button on the screenshot"
    xs, ys = sorted(p[0] for p in points), sorted(p[1] for p in points)
    return xs[len(xs) // 2], ys[len(ys) // 2]


def commit(subgoal: str, *actions: dict) -> dict:
    return {"text": json.dumps({"candidates": [{"subgoal": subgoal, "actions": list(actions)}]})}


def evidence(line: str, changed: bool = True) -> dict:
    return {"text": json.dumps({"evidence": line, "changed": changed})}


def verdict(word: str, missing: str = "") -> dict:
    return {"text": json.dumps({"verdict": word, "missing": missing})}


def test_an_lstc_gui_step_is_grounded_from_the_screenshot_and_clicks(tmp_path):
    require_image("desktop")
    planner = [
        commit(
            "Press the Go button",
            {"tool": "bash", "input": WAIT},
            {"tool": "click", "input": "the red Go button"},
        ),
        evidence("the Press Go window is shown"),
        evidence("the Press Go window closed after the click"),
        commit("Check the click", {"tool": "bash", "input": f"cat {CLICKED}"}),
        evidence("clicked.txt holds 7: Go was pressed"),
        commit("Finish", {"tool": "done", "input": "Go pressed"}),  # the gate is off:
        verdict("FAIL", "the click is not shown"),  # Final Verification fails it once
        commit("continue", {"tool": "bash", "input": f"cat {CLICKED}"}),
        evidence("clicked.txt still holds 7", changed=False),
        commit("Finish", {"tool": "done", "input": "Go pressed and checked"}),
        verdict("PASS"),
    ]
    with FakeOpenAIServer(planner) as main, FakeOpenAIServer([grounding(red_centre)]) as vision:
        config = RunConfig(model="openai/qwen3-9b", control="lstc")
        config.model_options.base_url, config.model_options.api_key = main.base_url, "test-key"
        config.sandbox.image = "desktop"
        config.gate.enabled = False
        config.lstc.grounder = "openai/gta1-7b"
        config.lstc.grounder_base_url = vision.base_url
        task = Task.model_validate(
            {
                "id": "lstc-gui",
                "instruction": "Press the Go button on the screen.",
                "config": [{"type": "launch", "parameters": {"command": ["bash", "-c", APP]}}],
                "evaluator": {},
                "base_dir": tmp_path,
            }
        )
        result = run_task(task, config, tmp_path / "run", resume=False)
        grounding_requests = vision.completion_requests()
        planner_requests = main.completion_requests()
    assert result["status"] == "completed", result
    assert len(planner_requests) == len(planner)
    # The grounder got one vision request: the screenshot and the planner's description.
    assert len(grounding_requests) == 1 and grounding_requests[0]["json"]["model"] == "gta1-7b"
    images, texts = vision_parts(grounding_requests[0]["json"])
    assert len(images) == 1 and "Element: the red Go button" in "\n".join(texts)
    events = [
        json.loads(line)
        for line in (tmp_path / "run" / "trajectory.jsonl").read_text().splitlines()
    ]
    actions = [e for e in events if e["event"] == "lstc_action"]
    assert actions[0]["output"].startswith("shown"), actions[0]
    assert actions[1]["tool"] == "click" and actions[1]["ok"], actions[1]
    assert "the grounder chose" in actions[1]["output"]
    # The application saw the click: xmessage exited with the Go button's value.
    assert actions[2]["output"].startswith("7\n"), actions[2]
    # Step Abstraction: the GUI step's call carried the screenshot after the click, the bash step's
    # the output; their lines are the evidence the next planning requests show.
    assert vision_parts(planner_requests[1]["json"])[0] == []  # bash: the output, no screenshot
    shot, words = vision_parts(planner_requests[2]["json"])
    assert len(shot) == 1 and "ACTION: click the red Go button" in "\n".join(words)
    assert "the Press Go window closed" in json.dumps(planner_requests[3]["json"]["messages"])
    assert "clicked.txt holds 7" in json.dumps(planner_requests[5]["json"]["messages"])
    # The planner saw the screen; Step Abstraction of the click saw the changed region (50 px
    # margin); Final Verification saw the first and the latest screenshots.
    assert len(vision_parts(planner_requests[0]["json"])[0]) == 1
    assert "the image is the changed region (" in "\n".join(words)
    final, said = vision_parts(planner_requests[6]["json"])
    assert len(final) == 2 and "CLAIM: Go pressed" in "\n".join(said)


PAGE = """<!doctype html><html><head><title>Type here</title></head><body>
<input id="box" style="background:#ff0000;width:400px;height:80px;font-size:30px" onkeydown="
if (event.key === 'Enter') document.title = 'typed:' + this.value"></body></html>"""
BROWSER = "chromium --no-sandbox --disable-gpu --no-first-run --app=file:///home/user/type.html"
WAIT_BROWSER = wait_for("--name 'Type here'")
TITLE = ". /tmp/stateact-desktop.env; xdotool getactivewindow getwindowname"


def test_lstc_gui_types_and_presses_keys_into_the_grounded_element(tmp_path):
    require_image("desktop")
    planner = [
        commit(
            "Type hello into the box",
            {"tool": "bash", "input": WAIT_BROWSER},
            {"tool": "click", "input": "the red text box"},
            {"tool": "type", "input": "hello"},
            {"tool": "key", "input": "Return"},
        ),
        *[evidence(f"step {n}") for n in range(4)],
        commit("Check", {"tool": "bash", "input": TITLE}),
        evidence("the window title says typed:hello"),
        commit("Finish", {"tool": "done", "input": "typed and checked"}),
        verdict("PASS"),
    ]
    code = f"open('/home/user/type.html', 'w').write({PAGE!r})"
    with FakeOpenAIServer(planner) as main, FakeOpenAIServer([grounding(red_centre)]) as vision:
        config = RunConfig(model="openai/qwen3-9b", control="lstc")
        config.model_options.base_url, config.model_options.api_key = main.base_url, "test-key"
        config.sandbox.image = "desktop"
        config.gate.enabled = False
        config.lstc.grounder = "openai/gta1-7b"
        config.lstc.grounder_base_url = vision.base_url
        task = Task.model_validate(
            {
                "id": "lstc-type",
                "instruction": "Type hello into the box and press Enter.",
                "config": [
                    {"type": "execute", "parameters": {"command": ["python3", "-c", code]}},
                    {"type": "launch", "parameters": {"command": ["bash", "-c", BROWSER]}},
                ],
                "evaluator": {},
                "base_dir": tmp_path,
            }
        )
        result = run_task(task, config, tmp_path / "run", resume=False)
        grounded = len(vision.completion_requests())
    assert result["status"] == "completed", result
    events = [
        json.loads(line)
        for line in (tmp_path / "run" / "trajectory.jsonl").read_text().splitlines()
    ]
    actions = [e for e in events if e["event"] == "lstc_action"]
    assert [a["ok"] for a in actions] == [True] * 5, actions
    assert actions[0]["output"].startswith("shown") and grounded == 1
    # The page saw the click's focus, the typed text and the Enter key: its title changed.
    assert actions[4]["output"].startswith("typed:hello"), actions[4]
