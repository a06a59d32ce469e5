"""`stateact code`: a scripted agent fixes a failing unittest in a copied repository; the gate
runs the tests; the patch makes them pass on the host; the host repository is untouched without
--apply."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_image, stateact

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TEST_COMMAND = "cd /home/user/calcproj && python3 -m unittest -v"


def make_repo(root: Path) -> Path:
    """A tiny project whose one test fails (add subtracts), with a .git and caches that must not
    travel."""
    repo = root / "calcproj"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "test_calc.py").write_text(
        "import unittest\n\nfrom calc import add\n\n\n"
        "class AddTest(unittest.TestCase):\n    def test_add(self):\n        "
        "self.assertEqual(add(2, 3), 5)\n\n\n"
        "if __name__ == '__main__':\n    unittest.main()\n"
    )
    (repo / "README.md").write_text("calc\n")
    (repo / "__pycache__").mkdir()
    (repo / "__pycache__" / "calc.cpython-311.pyc").write_bytes(b"\x00stale")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def write_script(path: Path, turns: list[dict]) -> str:
    path.write_text(json.dumps(turns))
    return f"script/{path}"


def call(name: str, **params) -> dict:
    return {"tool_calls": [{"name": name, "input": params}]}


AGENT_TURNS = [
    call("bash", command=TEST_COMMAND),
    call(
        "str_replace_based_edit_tool",
        command="str_replace",
        path="/home/user/calcproj/calc.py",
        old_str="a - b",
        new_str="a + b",
    ),
    call(
        "str_replace_based_edit_tool",
        command="create",
        path="/home/user/calcproj/NOTES.md",
        file_text="add fixed\n",
    ),
    call("bash", command=TEST_COMMAND),
    call("finish", summary="fixed add"),
]
GATE_TURNS = [call("bash", command=TEST_COMMAND), call("verdict", passed=True, gaps=[])]


def gate_bash_commands(run_dir: Path) -> list[str]:
    data = json.loads((run_dir / "gate" / "round-1.json").read_text())
    return [
        block["input"].get("command", "")
        for message in data.get("transcript", [])
        if message["role"] == "assistant"
        for block in message["content"]
        if block.get("type") == "tool_use" and block["name"] == "bash"
    ]


def test_code_fixes_a_failing_test_and_leaves_the_repo_alone(tmp_path):
    require_image("base")
    repo = make_repo(tmp_path)
    before = tree_hash(repo)
    agent = write_script(tmp_path / "agent.json", AGENT_TURNS)
    gate = write_script(tmp_path / "gate.json", GATE_TURNS)
    run_dir = tmp_path / "run"
    done = stateact(
        "code",
        "--repo",
        str(repo),
        "Make the failing test in test_calc.py pass.",
        "--model",
        agent,
        "--gate-model",
        gate,
        "--out",
        str(run_dir),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["gate_passed"] is True and summary["status"] == "completed"
    assert (
        summary["modified"] == ["calc.py"]
        and summary["added"] == ["NOTES.md"]
        and summary["deleted"] == []
    )
    assert summary["applied"] is False
    assert tree_hash(repo) == before  # the host repository is untouched without --apply
    assert TEST_COMMAND in gate_bash_commands(run_dir)  # the gate ran the project's tests itself
    gate_request = (run_dir / "gate" / "round-1.json").read_text()
    assert (
        "fixed add" not in gate_request
    )  # narration-blind: the finish summary never reaches the gate
    # The patch applies to a pristine copy and makes the test pass there.
    patch = Path(summary["patch"]).read_text()
    assert "-    return a - b" in patch and "+    return a + b" in patch and "b/NOTES.md" in patch
    assert "__pycache__" not in patch
    subprocess.run(["git", "apply", summary["patch"]], cwd=repo, check=True)
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"], cwd=repo, capture_output=True, text=True
    )
    assert tests.returncode == 0, tests.stderr
    assert (repo / "NOTES.md").read_text() == "add fixed\n"


def test_code_apply_writes_the_change(tmp_path):
    require_image("base")
    repo = make_repo(tmp_path)
    agent = write_script(tmp_path / "agent.json", AGENT_TURNS)
    gate = write_script(tmp_path / "gate.json", GATE_TURNS)
    done = stateact(
        "code",
        "--repo",
        str(repo),
        "Make the failing test pass.",
        "--model",
        agent,
        "--gate-model",
        gate,
        "--out",
        str(tmp_path / "run"),
        "--apply",
    )
    assert done.returncode == 0, done.stderr
    assert "applied to" in done.stdout
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (repo / "__pycache__" / "calc.cpython-311.pyc").read_bytes() == b"\x00stale"


def test_code_gate_rejection_exits_nonzero_and_applies_nothing(tmp_path):
    require_image("base")
    repo = make_repo(tmp_path)
    before = tree_hash(repo)
    agent = write_script(tmp_path / "agent.json", AGENT_TURNS)
    gate = write_script(
        tmp_path / "gate.json",
        [
            call("bash", command=TEST_COMMAND),
            call("verdict", passed=False, gaps=["tests were not run by the author"]),
        ],
    )
    done = stateact(
        "code",
        "--repo",
        str(repo),
        "Make the failing test pass.",
        "--model",
        agent,
        "--gate-model",
        gate,
        "--out",
        str(tmp_path / "run"),
        "--apply",
        "--json",
    )
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout)
    assert summary["gate_passed"] is False and summary["applied"] is False
    assert tree_hash(repo) == before


def test_code_missing_repository_is_one_clear_error(tmp_path):
    done = stateact("code", "--repo", str(tmp_path / "nope"), "fix it", "--model", "script/x.json")
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        == f"stateact: error: the repository path {tmp_path / 'nope'} does not exist or "
        "is not a folder."
    )
