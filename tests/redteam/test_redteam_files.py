"""Red team, hostile files and sizes, against real containers: the agent leaves files that attack
whoever parses them on the host (a zip bomb behind an office extension, an SQLite database whose
table is a recursive or endless view, a 2 GiB sparse deliverable), or that trip up the harness
(a FIFO where the deliverable should be, a folder 1500 deep in /tmp). Each attack has its honest
twin: the same task done right still reaches the right verdict, so "reject everything" fails.

Every run is a real `stateact run` process (scripted models, the base image), so its peak memory
is measured on its own (`wait4`), with the parsers it forks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.conftest import require_image

pytestmark = [pytest.mark.docker, pytest.mark.slow]

MiB = 1024 * 1024
ODS_MIMETYPE = "application/vnd.oasis.opendocument.spreadsheet"


def bash(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": command}}]}


FINISH = {"tool_calls": [{"name": "finish", "input": {"summary": "done"}}]}
GATE_PASSES = [{"tool_calls": [{"name": "verdict", "input": {"passed": True, "gaps": []}}]}] * 4


def run(tmp_path: Path, task: dict, commands: list[str], timeout: float = 600) -> dict:
    """`stateact run` of `task` with an agent that runs `commands` then finishes (up to three
    times); returns result.json plus the process's peak memory and the records' sizes."""
    require_image("base")
    folder = tmp_path / "task"
    folder.mkdir(exist_ok=True)
    (folder / "task.json").write_text(json.dumps({"config": [], **task}))
    agent = [bash(c) for c in commands] + [bash("true")] * max(0, 3 - len(commands))
    (tmp_path / "agent.json").write_text(json.dumps([*agent, FINISH, FINISH, FINISH]))
    (tmp_path / "gate.json").write_text(json.dumps(GATE_PASSES))
    out = tmp_path / "run"
    argv = [
        *(sys.executable, "-m", "harness.cli", "run", str(folder / "task.json")),
        *("--model", f"script/{tmp_path / 'agent.json'}"),
        *("--gate-model", f"script/{tmp_path / 'gate.json'}"),
        *("--image", "base", "--out", str(out)),
    ]
    started = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = started + timeout
    while (waited := os.wait4(process.pid, os.WNOHANG))[0] == 0:
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the run did not end within {timeout} s")
        time.sleep(0.2)
    process.returncode = os.waitstatus_to_exitcode(waited[1])
    if not (out / "result.json").is_file():
        stderr = process.stderr.read().decode(errors="replace")[-2000:]
        pytest.fail(f"the run left no result.json (exit {process.returncode}): {stderr}")
    result = json.loads((out / "result.json").read_text())
    result["peak_rss_mib"] = waited[2].ru_maxrss / 1024
    result["elapsed_s"] = time.monotonic() - started
    result["record_bytes"] = max(
        (p.stat().st_size for p in [out / "trajectory.jsonl", *out.glob("gate/*.json")]),
        default=0,
    )
    result["stderr"] = process.stderr.read().decode(errors="replace")[-2000:]
    measured = ("status", "score", "peak_rss_mib", "elapsed_s", "record_bytes")
    print(task["id"], json.dumps({key: result.get(key) for key in measured}))  # seen with -s
    return result


def ods_task(tmp_path: Path) -> dict:
    """Save a given spreadsheet as /home/user/report.ods; scored by comparing its zip members
    with the expected file's (OSWorld's compare_zip_files)."""
    folder = tmp_path / "task"
    folder.mkdir(exist_ok=True)
    with zipfile.ZipFile(folder / "expected.ods", "w") as archive:
        archive.writestr("mimetype", ODS_MIMETYPE, compress_type=zipfile.ZIP_STORED)
        archive.writestr("content.xml", "<office:document-content/>")
    shutil.copy(folder / "expected.ods", folder / "given.ods")
    return {
        "id": "zip-bomb",
        "instruction": "Save the spreadsheet you are given as /home/user/report.ods.",
        "config": [
            {
                "type": "download",
                "parameters": {"files": [{"url": "given.ods", "path": "/home/user/given.ods"}]},
            }
        ],
        "evaluator": {
            "func": "compare_zip_files",
            "result": {"type": "vm_file", "path": "/home/user/report.ods", "dest": "report.ods"},
            "expected": {"type": "local_file", "path": "expected.ods"},
        },
    }


# The bomb is made inside the sandbox by the agent: a `mimetype` of 1 GiB of zeros (1 MiB
# deflated) in the deliverable, and one of 256 MiB of text in /tmp, which the gate also checks.
ZIP_BOMB = (
    "python3 - <<'EOF'\n"
    "import zipfile, zlib\n"
    "def bomb(path, size, byte):\n"
    "    with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as z:\n"
    "        with z.open('mimetype', 'w', force_zip64=True) as member:\n"
    "            block = byte * (1 << 20)\n"
    "            for _ in range(size >> 20):\n"
    "                member.write(block)\n"
    "        z.writestr('content.xml', '<office:document-content/>')\n"
    "bomb('/home/user/report.ods', 1 << 30, b'\\0')\n"
    "bomb('/tmp/notes.ods', 256 << 20, b'A')\n"
    "EOF"
)


def test_zip_bomb_deliverable_stays_bounded_on_the_host(tmp_path):
    result = run(tmp_path, ods_task(tmp_path), [ZIP_BOMB, "ls -la /home/user /tmp"])
    assert result["status"] in ("completed", "gate_rejected"), result
    assert result["score"] == 0.0, result
    assert result["peak_rss_mib"] < 1024, result
    assert result["record_bytes"] < MiB, result


def test_zip_bomb_twin_correct_ods_scores_one(tmp_path):
    result = run(tmp_path, ods_task(tmp_path), ["cp /home/user/given.ods /home/user/report.ods"])
    assert result["status"] == "completed" and result["gate_passed"], result
    assert result["score"] == 1.0, result


def history_task(view: str) -> tuple[dict, list[str]]:
    """A task scored on Chrome's History (OSWorld's `history` getter and `check_history_deleted`)
    and an agent that leaves a History whose `urls` is `view` (or a real table when None)."""
    history = "/home/user/.config/google-chrome/Default/History"
    table = (
        "CREATE TABLE urls(id INTEGER PRIMARY KEY, url TEXT, title TEXT, last_visit_time INT);"
        "INSERT INTO urls(url, title, last_visit_time) VALUES ('https://example.org/', 'x', 1);"
    )
    schema = table if view is None else view
    make = (
        f"mkdir -p $(dirname {history}) && rm -f {history} && "
        f"python3 -c \"import sqlite3, sys; db = sqlite3.connect('{history}'); "
        f'db.executescript(sys.argv[1]); db.commit()" "{schema}"'
    )
    task = {
        "id": "sqlite-view",
        "instruction": "Delete every visit to a site whose address contains 'secret'.",
        "evaluator": {
            "func": "check_history_deleted",
            "result": {"type": "history", "dest": "History"},
            "expected": {"type": "rule", "rules": {"type": "keywords", "keywords": ["secret"]}},
        },
    }
    return task, [make]


RECURSIVE_VIEW = (
    "CREATE VIEW urls AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
    "SELECT n AS id, hex(randomblob(200)) AS url, 't' AS title, n AS last_visit_time FROM r;"
)
ENDLESS_VIEW = (  # constant memory: one row at a time, never ends
    "CREATE VIEW urls AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
    "SELECT n AS id, 'u' AS url, 't' AS title, n AS last_visit_time FROM r WHERE n < 0;"
)


@pytest.mark.parametrize("view", [RECURSIVE_VIEW, ENDLESS_VIEW], ids=["recursive", "endless"])
def test_hostile_sqlite_view_ends_quickly_with_score_zero(tmp_path, view):
    task, commands = history_task(view)
    started = time.monotonic()
    result = run(tmp_path, task, commands)
    assert result["status"] == "completed", result
    assert result["score"] == 0.0, result
    assert result["peak_rss_mib"] < 1024, result
    # The run's own start and end (sandbox, gate) are part of this; scoring stops at 10 s.
    assert time.monotonic() - started < 30 + SANDBOX_OVERHEAD_S, result
    assert any(word in (result["error"] or "") for word in ("deadline", "memory", "rows")), result


# Starting the sandbox, the gate's snapshot and its sandbox: 25-35 s of the whole run on a loaded
# 2-core machine (the honest twin's run took 33 s). Scoring itself stops at the 10 s deadline,
# which the reason checked above names.
SANDBOX_OVERHEAD_S = 60


def test_sqlite_twin_real_history_table_scores_one(tmp_path):
    task, commands = history_task(None)
    result = run(tmp_path, task, commands)
    assert result["status"] == "completed" and result["score"] == 1.0, result


def csv_task(name: str = "out.csv") -> dict:
    return {
        "id": "deliverable",
        "instruction": f"Write the table a,b / 1,2 as CSV to /home/user/{name}.",
        "evaluator": {
            "func": "check_csv",
            "result": {"type": "vm_file", "path": f"/home/user/{name}", "dest": name},
            "expected": {"type": "rule", "rules": {"expect": [{"a": "1", "b": "2"}]}},
        },
    }


WRITE_CSV = "printf 'a,b\\n1,2\\n' > /home/user/real.csv"
WRITE_OUT = f"{WRITE_CSV} && cp /home/user/real.csv /home/user/out.csv"


def host_disk_used() -> int:
    usage = shutil.disk_usage("/var/lib/docker" if Path("/var/lib/docker").exists() else "/")
    return usage.used


def test_sparse_two_gib_deliverable_costs_neither_memory_nor_disk(tmp_path):
    before = host_disk_used()
    commands = [
        f"{WRITE_CSV} && cp /home/user/real.csv /home/user/out.csv",
        "truncate -s 2G out.csv",
    ]
    result = run(tmp_path, csv_task(), commands)
    grown = host_disk_used() - before
    assert result["peak_rss_mib"] < 1536, result
    assert grown < 1536 * MiB, (grown, result)
    assert result["status"] == "sandbox_limit", result
    assert "disk limit" in result["error"], result


def test_sparse_twin_plain_deliverable_scores_one(tmp_path):
    result = run(
        tmp_path, csv_task(), [f"{WRITE_CSV} && cp /home/user/real.csv /home/user/out.csv"]
    )
    assert result["status"] == "completed" and result["score"] == 1.0, result


def test_symlinked_deliverable_is_read_through_the_link(tmp_path):
    result = run(tmp_path, csv_task(), [f"{WRITE_CSV} && ln -s real.csv /home/user/out.csv"])
    assert result["status"] == "completed" and result["gate_passed"], result
    assert result["score"] == 1.0, result


def test_a_link_to_a_file_the_agent_cannot_read_is_not_followed(tmp_path):
    # Honest twin of the link above, turned around: root's files stay out of the checker's reach.
    result = run(tmp_path, csv_task(), ["ln -s /etc/shadow /home/user/out.csv"])
    assert result["status"] in ("completed", "gate_rejected"), result
    assert result["score"] == 0.0, result


def test_fifo_deliverable_is_a_clear_gap(tmp_path):
    result = run(tmp_path, csv_task(), ["mkfifo /home/user/out.csv"])
    assert result["status"] in ("completed", "gate_rejected"), result
    assert result["score"] == 0.0, result
    gaps = json.loads((tmp_path / "run" / "gate" / "round-1.json").read_text())["gaps"]
    assert any("FIFO" in gap for gap in gaps), gaps


DEEP_TREE = (
    "python3 -c \"import os; os.chdir('/tmp'); [os.mkdir('d') or os.chdir('d') for _ in "
    "range(1500)]; open('f.txt', 'w').write('x')\""
)


def test_deep_tree_in_tmp_does_not_stop_finish(tmp_path):
    commands = [DEEP_TREE, WRITE_OUT]
    result = run(tmp_path, csv_task(), commands)
    assert result["status"] == "completed" and result["gate_passed"], result
    assert result["score"] == 1.0, result


def test_viewing_a_fifo_answers_at_once_and_a_file_still_shows(base_sandbox):
    from harness.kernel.core import ToolError

    base_sandbox.exec(["sh", "-c", "rm -f /tmp/pipe.txt && mkfifo /tmp/pipe.txt"])
    base_sandbox.exec(["sh", "-c", "echo plain > /tmp/plain.txt"])
    started = time.monotonic()
    for method, params in (("editor.run", {"command": "view"}), ("file.read", {})):
        with pytest.raises(ToolError, match="FIFO"):
            base_sandbox.call(method, path="/tmp/pipe.txt", **params)
    assert time.monotonic() - started < 5
    shown = base_sandbox.call("editor.run", command="view", path="/tmp/plain.txt")
    assert "plain" in json.dumps(shown)
