"""StateAct's editor compared call by call with Anthropic's reference editor.

`tests/data/editor_reference.json` holds what the reference (the computer-use demo's edit tool,
anthropics/anthropic-quickstarts, `computer-use-demo/computer_use_demo/tools/edit.py`, at the
commit named in the file) returned for each call, recorded in a scratch environment outside the
project: the outcome (ok or error), the text the model sees, its numbered lines and the files
under the scenario's root after the call. Here the same calls go through the real toolbox (as a
local process, `python -m toolbox`, and inside a docker sandbox of the base image) and every field
must agree, except where the reference is at fault: `DEVIATIONS` names those calls, the reason,
and StateAct's own result, which is asserted instead (docs/editor.md lists them for users).
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness.kernel.core import ToolError
from tests.editor_deviations import DEVIATIONS, Expect
from tests.sandboxes.test_toolbox import ToolboxProcess

DATA = json.loads((Path(__file__).parents[1] / "data" / "editor_reference.json").read_text())
SCENARIOS = {scenario["id"]: scenario for scenario in DATA["editor"]}
NUMBERED = re.compile(r"^ *(\d+)\t(.*)$")
BIG = 4000
DIRECTORY_HEADER = "Here's the files and directories up to 2 levels deep in "


def file_text(spec) -> str:
    """A setup file's text from its spec: a string or a generated pattern."""
    if isinstance(spec, str):
        return spec
    if "pattern" in spec:
        numbers = range(spec["first"], spec["last"] + 1)
        return "".join(spec["pattern"].format(n=n) for n in numbers)
    return spec["repeat"] * spec["times"] + spec["then"]


def snapshot(root: Path) -> dict:
    """Files and folders under `root`, recorded the way the reference run recorded them."""
    files, dirs = {}, []
    for base, subdirs, names in os.walk(root):
        dirs.extend(os.path.relpath(os.path.join(base, d), root) for d in subdirs)
        for name in names:
            data = (Path(base) / name).read_bytes()
            rel = os.path.relpath(os.path.join(base, name), root)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                files[rel] = {"b64": base64.b64encode(data).decode()}
                continue
            if len(text) > BIG:
                files[rel] = {"sha256": hashlib.sha256(data).hexdigest(), "chars": len(text)}
            else:
                files[rel] = text
    return {"files": dict(sorted(files.items())), "dirs": sorted(dirs)}


def numbered_lines(text: str) -> list[list]:
    return [[int(m[1]), m[2]] for m in map(NUMBERED.match, text.split("\n")) if m]


def fill(value, root: str):
    if isinstance(value, str):
        return value.replace("{root}", root)
    if isinstance(value, list):
        return [fill(item, root) for item in value]
    return value


@dataclass
class Outcome:
    """What one call returned, in the recorded form."""

    outcome: str
    text: str
    after: dict = field(default_factory=dict)

    def same_text(self, recorded: dict) -> bool:
        if "text_summary" in recorded:
            digest = hashlib.sha256(self.text.encode()).hexdigest()
            return digest == recorded["text_summary"]["sha256"]
        if recorded["text"].startswith(DIRECTORY_HEADER):
            return directory_entries(self.text) == directory_entries(recorded["text"])
        return self.text == recorded["text"]


def directory_entries(text: str) -> tuple[str, set[str]]:
    """A directory view's header and its entries; order and a folder's trailing / aside."""
    header, *entries = text.split("\n")
    return header, {entry.rstrip("/") for entry in entries if entry}


class ProcessTarget:
    """The toolbox as a local process (`python -m toolbox`), files set up directly."""

    def __init__(self, home: Path):
        self.home = home
        self.toolbox = ToolboxProcess(home)

    def prepare(self, scenario_id: str, files: dict[str, bytes]) -> str:
        root = self.home / scenario_id
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        for rel, data in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        return str(root)

    def edit(self, params: dict) -> tuple[str, str]:
        response = self.toolbox.request("editor.run", **params)
        if "result" in response:
            return "ok", response["result"]["output"]
        return "error", response["error"]["message"]

    def snapshot(self, root: str) -> dict:
        return snapshot(Path(root))

    def close(self) -> None:
        assert self.toolbox.close() == 0


class SandboxTarget:
    """A docker sandbox from the base image (its own Python, user `user`), used over the RPC."""

    SNAPSHOT = "\n".join(
        [
            "import base64, hashlib, json, os, sys",
            "from pathlib import Path",
            f"BIG = {BIG}",
            inspect.getsource(snapshot),
            "print(json.dumps(snapshot(Path(sys.argv[1]))))",
        ]
    )

    def __init__(self, sandbox):
        self.sandbox = sandbox

    def prepare(self, scenario_id: str, files: dict[str, bytes]) -> str:
        root = f"/home/user/editor-reference/{scenario_id}"
        self.sandbox.call("proc.run", argv=["rm", "-rf", root])
        self.sandbox.call("proc.run", argv=["mkdir", "-p", root])
        for rel, data in files.items():
            self.sandbox.call(
                "file.write", path=f"{root}/{rel}", data_b64=base64.b64encode(data).decode()
            )
        return root

    def edit(self, params: dict) -> tuple[str, str]:
        try:
            return "ok", self.sandbox.call("editor.run", **params)["output"]
        except ToolError as exc:
            return "error", str(exc)

    def snapshot(self, root: str) -> dict:
        result = self.sandbox.call("proc.run", argv=["python3", "-c", self.SNAPSHOT, root])
        return json.loads(result["output"])

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def process_target(tmp_path_factory):
    target = ProcessTarget(tmp_path_factory.mktemp("home"))
    yield target
    target.close()


@pytest.fixture(scope="module")
def sandbox_target(base_sandbox):
    return SandboxTarget(base_sandbox)


def replay(target, scenario: dict) -> list[Outcome]:
    files = {rel: file_text(spec).encode() for rel, spec in scenario.get("files", {}).items()}
    for rel, data in scenario.get("files_b64", {}).items():
        files[rel] = base64.b64decode(data)
    root = target.prepare(scenario["id"], files)
    outcomes = []
    for call in scenario["calls"]:
        params = {name: fill(value, root) for name, value in call["params"].items()}
        outcome, text = target.edit(params)
        outcomes.append(Outcome(outcome, text.replace(root, "{root}"), target.snapshot(root)))
    return outcomes


def check_clear_error(text: str) -> None:
    """An error the model can act on: one short message, no traceback."""
    assert text and len(text) < 600 and "Traceback" not in text, text


@pytest.mark.parametrize("scenario_id", list(SCENARIOS))
def test_matches_reference(process_target, scenario_id):
    compare(scenario_id, replay(process_target, SCENARIOS[scenario_id]))


def test_matches_reference_in_a_docker_sandbox(sandbox_target):
    """The same comparison inside a real sandbox: the image's Python runs the toolbox."""
    for scenario_id, scenario in SCENARIOS.items():
        compare(scenario_id, replay(sandbox_target, scenario))


def compare(scenario_id: str, outcomes: list[Outcome]) -> None:
    scenario = SCENARIOS[scenario_id]
    deviation = DEVIATIONS.get(scenario_id)
    for index, (ours, recorded) in enumerate(zip(outcomes, scenario["calls"], strict=True)):
        where = f"{scenario_id} call {index} {recorded['params']}"
        expect: Expect = deviation.calls.get(index, Expect()) if deviation else Expect()
        if ours.outcome == "error":
            check_clear_error(ours.text)
        assert ours.outcome == (expect.outcome or recorded["outcome"]), f"{where}: {ours.text}"
        if expect.text is not None:
            assert ours.text == expect.text, where
        elif expect.text_contains is not None:
            assert expect.text_contains in ours.text, f"{where}: {ours.text}"
        elif ours.outcome == "ok":
            assert ours.same_text(recorded), f"{where}\nours: {ours.text!r}\nref:  {recorded}"
            if "numbered_lines" in recorded:
                assert numbered_lines(ours.text) == recorded["numbered_lines"], where
        if expect.files is not None:
            assert ours.after["files"] == expect.files, where
        else:
            assert ours.after["files"] == recorded["after"]["files"], where
        if expect.dirs is not None:
            assert ours.after["dirs"] == expect.dirs, where
        else:
            assert ours.after["dirs"] == recorded["after"]["dirs"], where


def test_every_deviation_names_a_recorded_call_and_a_reason():
    for scenario_id, deviation in DEVIATIONS.items():
        assert scenario_id in SCENARIOS, scenario_id
        assert len(deviation.reason) > 40, scenario_id
        for index in deviation.calls:
            assert 0 <= index < len(SCENARIOS[scenario_id]["calls"]), (scenario_id, index)


def test_recording_covers_the_issue():
    """The recorded calls include every kind the issue names (guards against a thinned file)."""
    calls = [call["params"] for scenario in DATA["editor"] for call in scenario["calls"]]
    commands = {call["command"] for call in calls}
    assert {"view", "create", "str_replace", "insert", "undo_edit"} <= commands
    assert any(call.get("view_range") == [1, 4] for call in calls)  # N+1 on a 3-line file
    assert {"view_tabs", "view_crlf", "view_empty_file", "view_long_file"} <= set(SCENARIOS)
    assert DATA["source"]["repository"] == "anthropics/anthropic-quickstarts"
