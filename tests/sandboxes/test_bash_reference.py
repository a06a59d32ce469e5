"""StateAct's bash tool compared call by call with Anthropic's reference bash tool.

The `bash` part of `tests/data/editor_reference.json` holds what the reference (the computer-use
demo's `BashTool20250124`, its 120 s timeout set to 1 s for the recording) returned for each call:
output, error and system text. Here the same calls go through StateAct's `BashTool` on the real
toolbox process, with a 1 s timeout for the calls where the reference's fired. Where the
reference is at fault, `DEVIATIONS` gives the reason and StateAct's own result is asserted
instead.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.tools.bash import BashTool
from tests.sandboxes.test_toolbox import ToolboxProcess

RECORDED = json.loads((Path(__file__).parents[1] / "data" / "editor_reference.json").read_text())[
    "bash"
]
FOOTER = re.compile(r"\n?\[exit code: (-?\d+), cwd: ([^\]]*)\]$")

DEVIATIONS = {
    2: "The reference returns stderr as the error and drops stdout whenever anything reached "
    "stderr; StateAct shows both streams in order, and the exit code (not a warning on stderr) "
    "says whether the command failed.",
    5: "After a timeout the reference's shell is unusable until a restart; StateAct interrupts the "
    "command (Ctrl-C, then the process group) and the next command runs in the same shell.",
    8: "The reference runs an empty command as `; echo <<exit>>`, a syntax error that kills its "
    "shell (the call then times out); StateAct answers with its 'no command provided.' error.",
    10: "The reference notices `exit` only when its timeout fires and reports the exit on the next "
    "call; StateAct reports it at once, with the same words, and starts a fresh shell on the next "
    "command.",
    11: "The reference refuses every command after its shell exited until a restart; StateAct runs "
    "it in a fresh shell and says so.",
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    toolbox = ToolboxProcess(tmp_path_factory.mktemp("home"))
    tool = BashTool(toolbox, session="reference", timeout_s=60.0)
    try:
        yield [tool(**call["params"], **timeout_of(call)) for call in RECORDED]
    finally:
        assert toolbox.close() == 0


def timeout_of(call: dict) -> dict:
    """The reference's 1 s timeout where it fired; elsewhere a generous one (a loaded machine)."""
    return {"timeout": 1.0} if (call["error"] or "").startswith("timed out") else {}


def without_footer(text: str) -> str:
    return FOOTER.sub("", text)


@pytest.mark.parametrize("index", [i for i in range(len(RECORDED)) if i not in DEVIATIONS])
def test_reads_as_the_reference(results, index):
    ours, recorded = results[index], RECORDED[index]
    assert (ours.error is not None) == recorded["is_error"], (recorded, ours)
    if recorded["system"] and not recorded["error"]:
        assert ours.output == recorded["system"] == "tool has been restarted."
    elif recorded["error"] and recorded["error"].startswith("timed out:"):
        # Same words up to what happens next: StateAct interrupts instead of needing a restart.
        same = recorded["error"].removesuffix(" and must be restarted")
        assert ours.error.startswith("partial\n" + same + "; the command was interrupted"), ours
    elif recorded["error"]:
        assert ours.error == recorded["error"]
    else:
        assert FOOTER.search(ours.output), ours.output
        assert without_footer(ours.output) == recorded["output"]


def test_deviations_are_recorded_calls_with_reasons():
    assert all(0 <= index < len(RECORDED) and len(why) > 60 for index, why in DEVIATIONS.items())


def test_stderr_is_shown_with_stdout_and_is_no_error(results):
    assert RECORDED[2]["params"] == {"command": "echo out; echo err >&2"}
    assert results[2].error is None and without_footer(results[2].output) == "out\nerr"


def test_shell_works_right_after_a_timeout(results):
    assert RECORDED[5]["params"] == {"command": "echo after-timeout"}
    assert without_footer(results[5].output) == "after-timeout"


def test_empty_command_is_the_no_command_error(results):
    assert RECORDED[8]["params"] == {"command": ""}
    assert results[8].error == "no command provided."


def test_exit_reads_as_the_reference_and_the_next_command_gets_a_fresh_shell(results):
    assert RECORDED[10]["params"] == {"command": "exit 3"}
    assert RECORDED[11]["error"] == "bash has exited with returncode 3"
    exited = results[10].output
    assert "bash has exited with returncode 3; the next command starts a fresh session." in exited
    assert FOOTER.search(exited)[1] == "3"
    after = results[11].output
    assert "fresh session" in after and without_footer(after).endswith("after-exit")
