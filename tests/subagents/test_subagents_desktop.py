"""GUI and web specialists against a real desktop-image sandbox, driven by scripted models."""

from __future__ import annotations

import base64
import io
import json
import time

import openpyxl
import pytest
from openpyxl.styles import PatternFill
from PIL import Image

from harness.kernel.loop import RunStats
from harness.kernel.records import RunRecord
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.run.context import RunContext
from sandboxes import SandboxConfig, open_sandbox
from subagents import DelegateTool, Desktop
from tests.conftest import require_image

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.desktop]

# 1.6 MP: scaled to 1352x845 (8:5 exactly) for the model, so coordinates really get mapped
SCREEN = (1600, 1000)
DECLARED = (1352, 845)
BOOK = "/home/user/book.xlsx"
REPORT = "C3 now holds Zoë 42; saved as xlsx."
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Greeter</title></head><body>
<h1>Greeting form</h1><p>Type a name and press the button.</p>
<div id="secret" style="display:none">SECRET-HIDDEN-TEXT</div>
<label for="name">Your name</label> <input id="name" type="text">
<select id="lang"><option value="en">English</option><option value="fr">Français</option></select>
<button id="go" onclick="document.getElementById('out').textContent =
  (document.getElementById('lang').value === 'fr' ? 'Bonjour, ' : 'Hello, ')
  + document.getElementById('name').value">Greet</button>
<p id="out">nobody greeted yet</p></body></html>"""


@pytest.fixture(scope="module")
def desktop_sandbox():
    require_image("desktop")
    with open_sandbox(SandboxConfig(image="desktop", display_size=SCREEN)) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def config():
    return RunConfig(sandbox=SandboxConfig(image="desktop", display_size=SCREEN))


def _results(messages: list[dict]) -> list[dict]:
    return [
        b
        for m in messages
        if m["role"] == "user"
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


def _text(result: dict) -> str:
    return "\n".join(b["text"] for b in result["content"] if b.get("type") == "text")


def _images(messages: list[dict]) -> list[Image.Image]:
    blocks = [b for r in _results(messages) for b in r["content"] if b.get("type") == "image"]
    return [Image.open(io.BytesIO(base64.b64decode(b["source"]["data"]))) for b in blocks]


def _red_centre(image: Image.Image) -> list[int]:
    """Centre of the red cell the workbook was given: found in the screenshot, not assumed."""
    point = _red_point(image)
    assert point, "the red C3 cell is not on the screenshot"
    return point


def _red_point(image: Image.Image) -> list[int] | None:
    """`_red_centre`, or None while the sheet is not drawn yet."""
    rgb = image.convert("RGB")
    points = [
        (x, y)
        for y in range(0, rgb.height, 2)
        for x in range(0, rgb.width, 2)
        if (lambda p: p[0] > 200 and p[1] < 60 and p[2] < 60)(rgb.getpixel((x, y)))
    ]
    if not points:
        return None
    # The median ignores the few red pixels of toolbar icons; the cell is a solid block of them.
    xs, ys = sorted(p[0] for p in points), sorted(p[1] for p in points)
    return [xs[len(xs) // 2], ys[len(ys) // 2]]


def _computer(action: str, **params) -> dict:
    return {"tool_calls": [{"name": "computer", "input": {"action": action, **params}}]}


def _wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def test_gui_types_into_a_cell_found_on_the_screen_and_saves_the_workbook(
    desktop_sandbox, config, tmp_path
):
    book = openpyxl.Workbook()
    book.active["A1"] = "Name"
    book.active["C3"].fill = PatternFill("solid", fgColor="FF0000")
    buffer = io.BytesIO()
    book.save(buffer)
    desktop_sandbox.call(
        "file.write", path=BOOK, data_b64=base64.b64encode(buffer.getvalue()).decode()
    )
    desktop = Desktop(desktop_sandbox, SCREEN)
    opened_s = desktop.launch(
        ["soffice", "--calc", "--norestore", BOOK], window="book.xlsx", timeout=120
    )
    print(
        f"desktop + Calc with the file open in {opened_s:.1f} s (desktop start "
        f"{desktop.start_seconds:.1f} s)"
    )
    assert desktop.screen_watch == "damage"  # the settle wait grabs only after X reports drawing

    def click_red_cell(system, messages, tools):
        return _computer("left_click", coordinate=_red_centre(_images(messages)[-1]))

    def keep_format_when_asked(system, messages, tools):
        # Like a model looking at the screen: press Return only once the dialog has the focus. The
        # image's profile, like OSWorld's VM, saves xlsx without asking: then it looks again.
        try:
            _wait_for(lambda: "Calc" not in (desktop.active_window() or "Calc"), 5, "a dialog")
        except AssertionError:
            return _computer("screenshot")
        return _computer("key", text="Return")

    def report_once_the_dialog_closed(system, messages, tools):
        # A model that still sees the dialog focused presses Return again; otherwise it reports.
        try:
            _wait_for(lambda: "Calc" in desktop.active_window(), 10, "the dialog to close")
        except AssertionError:
            return _computer("key", text="Return")
        return {"tool_calls": [{"name": "report", "input": {"text": REPORT}}]}

    model = ScriptedModel(
        [
            _computer("screenshot"),
            click_red_cell,
            _computer("type", text="Zoë 42"),
            _computer("key", text="Return"),
            _computer("key", text="ctrl+s"),
            keep_format_when_asked,
            report_once_the_dialog_closed,
            {"tool_calls": [{"name": "report", "input": {"text": REPORT}}]},
        ]
    )
    stats, record = RunStats(), RunRecord(tmp_path / "run")
    result = DelegateTool(
        RunContext(config=config, model=model, sandbox=desktop_sandbox, record=record, stats=stats)
    )(
        agent="gui",
        task="Type 'Zoë 42' into the red cell C3 and save, keeping the format.",
        facts=f"The file is {BOOK}.",
    )
    record.close()
    turns = int(result.output.split("(")[1].split(" ")[0])
    assert turns in (7, 8) and result.output.endswith(f"turns):\n{REPORT}")
    assert stats.gui_steps == turns - 1 and stats.delegations == 1

    final = model.calls[-1]["messages"]
    assert not any(r["is_error"] for r in _results(final)), [
        _text(r) for r in _results(final) if r["is_error"]
    ]
    shots = _images(final)
    for number, shot in enumerate(shots):  # kept for diagnosis beside the test's tmp files
        shot.save(tmp_path / f"shot-{number}.png")
    assert len(shots) == turns - 1
    assert all(shot.format == "PNG" and shot.size == DECLARED for shot in shots)
    spec = next(s for s in model.calls[0]["tools"] if s.name == "computer")
    assert spec.native_params == {"display_width_px": DECLARED[0], "display_height_px": DECLARED[1]}

    def saved_value():
        desktop_sandbox.copy_out(BOOK, tmp_path / "book.xlsx")
        return openpyxl.load_workbook(tmp_path / "book.xlsx").active["C3"].value

    try:
        _wait_for(lambda: saved_value() == "Zoë 42", 30, "C3 = 'Zoë 42' in the saved file")
    except AssertionError as missing:
        state = f"C3 = {saved_value()!r}; windows: {desktop.windows()!r}; screenshots in {tmp_path}"
        raise AssertionError(f"{missing} ({state})") from None
    events = [
        json.loads(line)
        for line in (tmp_path / "run" / "trajectory.jsonl").read_text().splitlines()
    ]
    delegation = next(e for e in events if e["event"] == "delegation")
    assert (
        delegation["specialist"] == "gui"
        and delegation["name"] == "gui-1"
        and delegation["turns"] == turns
    )


def test_gui_bad_input_is_a_tool_error_and_the_specialist_goes_on(desktop_sandbox, config):
    model = ScriptedModel(
        [
            _computer("left_click", coordinate=[5000, 10]),
            _computer("key", text="ctrl+nosuchkey"),
            _computer("fly"),
            _computer("type"),
            _computer("scroll", coordinate=[10, 10]),
            _computer("left_click_drag", start_coordinate=[10, 10]),
            _computer("mouse_move", coordinate=[DECLARED[0] - 1, DECLARED[1] - 1]),
            {"tool_calls": [{"name": "report", "input": {"text": "checked"}}]},
        ]
    )
    result = DelegateTool(RunContext(config=config, model=model, sandbox=desktop_sandbox))(
        agent="gui", task="Try things."
    )
    assert result.output.endswith("checked")
    outcomes = _results(model.calls[-1]["messages"])[
        :7
    ]  # the list is live: the report's result follows
    assert [r["is_error"] for r in outcomes] == [True] * 6 + [False]
    texts = [_text(r) for r in outcomes]
    assert "outside the screen" in texts[0] and "unknown key name 'nosuchkey'" in texts[1]
    assert "unknown action 'fly'" in texts[2] and "needs `text`" in texts[3]
    assert "scroll_direction" in texts[4] and "needs `coordinate`" in texts[5]
    assert _images(model.calls[-1]["messages"])[-1].size == DECLARED


def test_an_action_where_the_pointer_already_is_does_not_wait_for_it_to_move(desktop_sandbox):
    desktop = Desktop(desktop_sandbox, SCREEN)
    here = [["mousemove", "--sync", "300", "300"]]
    desktop.act(here, SCREEN, settle_s=0.0)
    began = time.monotonic()
    desktop.act([*here, ["click", "1"]], SCREEN)  # xdotool's --sync alone would wait 15 s here
    assert time.monotonic() - began < 5 and desktop.cursor() == (300, 300)


@pytest.fixture(scope="module")
def page_url(desktop_sandbox):
    desktop_sandbox.call(
        "file.write",
        path="/home/user/site/form.html",
        data_b64=base64.b64encode(PAGE.encode()).decode(),
    )
    desktop_sandbox.call(
        "bash.run",
        session="test-web-server",
        command="cd /home/user/site && (setsid python3 -m http.server 8765 --bind 127.0.0.1 "
        ">/tmp/http.log 2>&1 &) && "
        'for i in $(seq 100); do python3 -c "import urllib.request as u; '
        "u.urlopen('http://127.0.0.1:8765/')\" 2>/dev/null && break; sleep 0.1; done",
    )
    return "http://127.0.0.1:8765/form.html"


def _handle(text: str, marker: str) -> str:
    line = next(line for line in text.splitlines() if marker in line)
    return line.split("]")[0].split("[")[-1]


def test_web_reads_the_dom_with_handles_and_changes_the_page_by_selector(
    desktop_sandbox, config, page_url
):
    handles = {}

    def fill_name(system, messages, tools):
        dom = _text(_results(messages)[-1])
        handles.update(
            name=_handle(dom, '"Your name"'),
            go=_handle(dom, 'button "Greet"'),
            lang=_handle(dom, "select"),
        )
        return {
            "tool_calls": [
                {
                    "name": "fill",
                    "input": {"selector": f'[data-sa-id="{handles["name"]}"]', "text": "Zoë"},
                }
            ]
        }

    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "navigate", "input": {"url": page_url}}]},
            {"tool_calls": [{"name": "read_dom", "input": {}}]},
            fill_name,
            lambda *a: {
                "tool_calls": [
                    {
                        "name": "select",
                        "input": {
                            "selector": f'[data-sa-id="{handles["lang"]}"]',
                            "value": "Français",
                        },
                    }
                ]
            },
            lambda *a: {"tool_calls": [{"name": "click", "input": {"selector": handles["go"]}}]},
            {
                "tool_calls": [
                    {
                        "name": "run_js",
                        "input": {"code": "document.getElementById('out').textContent"},
                    }
                ]
            },
            {"tool_calls": [{"name": "read_dom", "input": {}}]},
            {"tool_calls": [{"name": "report", "input": {"text": "greeted"}}]},
        ]
    )
    stats = RunStats()
    result = DelegateTool(
        RunContext(config=config, model=model, sandbox=desktop_sandbox, stats=stats)
    )(agent="web", task="Greet Zoë in French.")
    assert result.output.endswith("greeted") and stats.gui_steps == 0
    outcomes = _results(model.calls[-1]["messages"])[:7]
    assert not any(r["is_error"] for r in outcomes), [_text(r) for r in outcomes]
    texts = [_text(r) for r in outcomes]
    assert "Greeter" in texts[0] and "HTTP 200" in texts[0]
    first_dom, last_dom = texts[1], texts[6]
    assert "# Greeting form" in first_dom and "Type a name and press the button." in first_dom
    assert "SECRET-HIDDEN-TEXT" not in first_dom and "nobody greeted yet" in first_dom
    assert texts[5] == '"Bonjour, Zoë"'
    assert "Bonjour, Zoë" in last_dom and 'value: "Zoë"' in last_dom
    assert _handle(last_dom, 'button "Greet"') == handles["go"]  # handles are stable on the page


def test_web_failures_are_tool_errors_and_the_specialist_goes_on(desktop_sandbox, config, page_url):
    def call(name, **params):
        return {"tool_calls": [{"name": name, "input": params}]}

    model = ScriptedModel(
        [
            call("navigate", url="http://127.0.0.1:8799/"),
            call("navigate", url=page_url),
            call("click", selector="#nope"),
            call("fill", selector="[[", text="x"),
            call("run_js", code="throw new Error('boom')"),
            call("run_js", code="const n = 2 + 3;\nreturn n * 2"),
            call("report", text="done"),
        ]
    )
    DelegateTool(RunContext(config=config, model=model, sandbox=desktop_sandbox))(
        agent="web", task="Try things."
    )
    outcomes = _results(model.calls[-1]["messages"])[:6]
    assert [r["is_error"] for r in outcomes] == [True, False, True, True, True, False], [
        _text(r) for r in outcomes
    ]
    texts = [_text(r) for r in outcomes]
    assert (
        "navigation to http://127.0.0.1:8799/ failed" in texts[0]
        and "ERR_CONNECTION_REFUSED" in texts[0]
    )
    assert "matches nothing" in texts[2] and "invalid selector" in texts[3]
    assert "boom" in texts[4] and texts[5] == "10"
