"""The probe guard: a positive grammar per program, live probes on a frozen copy, and every probe
failure a tool error the gate model can act on."""

from __future__ import annotations

import hashlib

import pytest

from gates.probe_view import ReadOnlyView
from gates.probes import ShellCommand, run_probe, validate_probe
from harness.kernel.core import ToolError
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.runner import run_task
from tasks.schema import Task

BYPASSES = [
    ["sqlite3", "-readonly", "x.db", ".shell touch /home/user/F"],
    ["sqlite3", "-readonly", "-safe", "x.db", ".shell touch /home/user/F"],
    ["sqlite3", "-readonly", "-safe", "x.db", ".output /home/user/F"],
    ["sqlite3", "-readonly", "-safe", "x.db", "VACUUM INTO '/home/user/F'"],
    ["sqlite3", "-readonly", "-safe", "x.db", "SELECT writefile('/home/user/F', 'x')"],
    ["sqlite3", "-readonly", "-safe", "-cmd", ".shell touch F", "x.db", "SELECT 1"],
    ["sqlite3", "-readonly", "-safe", "-init", "/home/user/cmds", "x.db"],
    ["sqlite3", "-readonly", "-safe", "x.db", "SELECT 1; SELECT 2"],
    ["find", "/home/user", "-fprint", "/home/user/F"],
    ["find", "/home/user", "-fprintf", "/home/user/F", "%p"],
    ["find", "/home/user", "-fls", "/home/user/F"],
    ["find", "/home/user", "-delete"],
    ["find", "/home/user", "-exec", "touch", "{}", "+"],
    ["find", "/home/user", "-ok", "rm", "{}", "+"],
    ["find", "/home/user", "-execdir", "rm", "{}", "+"],
    ["sort", "-o", "/home/user/F", "/home/user/a.txt"],
    ["sort", "-no", "/home/user/F", "/home/user/a.txt"],
    ["sort", "--output=/home/user/F", "/home/user/a.txt"],
    ["sort", "--out=/home/user/F", "/home/user/a.txt"],
    ["sort", "--compress-program=/home/user/x", "/home/user/a.txt"],
    ["uniq", "/home/user/a.txt", "/home/user/F"],
    ["xxd", "-r", "/home/user/dump", "/home/user/F"],
    ["xxd", "/home/user/a.txt", "/home/user/F"],
    ["unzip", "-o", "/home/user/a.zip"],
    ["unzip", "/home/user/a.zip"],
    ["unzip", "-l", "/home/user/a.zip", "-d", "/home/user/out"],
    ["unzip", "-lo", "/home/user/a.zip"],
    ["unzip", "-lT", "/home/user/a.zip"],
    ["xxd", "-revert", "/home/user/dump"],
    ["sort", "-T", "/home/user", "/home/user/a.txt"],
    ["grep", "-r", "x", "/home/user", "--devices=read", "-D", "read"],
    ["/home/user/bin/ls", "/home/user"],
    ["/tmp/cat", "/home/user/a.txt"],
    ["/usr/bin/../../home/user/bin/ls"],
    ["./ls"],
    ["date", "-s", "2020-01-01"],
    ["date", "010112002020"],
    ["gsettings", "set", "org.gnome.desktop.interface", "clock-format", "12h"],
    ["dpkg", "-i", "/home/user/x.deb"],
    ["tail", "-f", "/home/user/a.txt"],
    ["file", "-C", "-m", "/home/user/magic"],
    ["rm", "/home/user/a.txt"],
    ["cat", "a.txt|rm -rf /"],
]
ALLOWED = [
    ["ls", "-la", "/home/user"],
    ["/usr/bin/ls", "-l", "--time-style=+%s", "/home/user"],
    ["cat", "/home/user/a.txt"],
    ["head", "-n", "2", "/home/user/a.txt"],
    ["head", "-5", "/home/user/a.txt"],
    ["grep", "-c", "-e", "b", "/home/user/a.txt"],
    [
        "find",
        "/home/user",
        "-maxdepth",
        "2",
        "-name",
        "*.txt",
        "-type",
        "f",
        "-newermt",
        "2000-01-01",
    ],
    ["sort", "-n", "-k", "1", "/home/user/a.txt"],
    ["uniq", "-c", "/home/user/a.txt"],
    ["xxd", "-l", "16", "/home/user/a.txt"],
    ["unzip", "-l", "/home/user/a.zip"],
    ["unzip", "-p", "/home/user/a.zip", "inner.txt"],
    ["sqlite3", "-readonly", "-safe", "/home/user/x.db", "SELECT count(*) FROM t"],
    ["sqlite3", "-readonly", "-safe", "/home/user/x.db", ".tables"],
    ["stat", "-c", "%s", "/home/user/a.txt"],
    ["wc", "-l", "/home/user/a.txt"],
    ["md5sum", "/home/user/a.txt"],
    ["test", "-f", "/home/user/a.txt"],
    ["date", "+%Y"],
    ["od", "-c", "-N", "8", "/home/user/a.txt"],
    ["du", "-sh", "/home/user"],
    ["file", "-b", "/home/user/a.zip"],
    ["cmp", "/home/user/a.txt", "/home/user/a.txt"],
    ["diff", "-u", "/home/user/a.txt", "/home/user/a.txt"],
    ["readlink", "-f", "/home/user/a.txt"],
    ["cut", "-d", ",", "-f", "1", "/home/user/a.txt"],
]


def shell(argv: list[str]) -> dict:
    return {"kind": "shell_command", "argv": argv}


@pytest.mark.parametrize("argv", BYPASSES, ids=lambda argv: " ".join(argv)[:60])
def test_every_named_bypass_is_refused(argv):
    with pytest.raises(ToolError, match="field `argv`"):
        validate_probe(shell(argv))


@pytest.mark.parametrize("argv", ALLOWED, ids=lambda argv: " ".join(argv)[:60])
def test_read_only_command_lines_pass(argv):
    validate_probe(shell(argv))


SETUP = """
cd /home/user && printf 'b\\na\\nb\\n' > a.txt && mkdir -p folder.xlsx && echo nope > fake.xlsx
python3 -c "
import sqlite3, zipfile, openpyxl
db = sqlite3.connect('x.db'); db.execute('create table t (v)')
db.execute('insert into t values (1)'); db.commit(); db.close()
zipfile.ZipFile('a.zip', 'w').writestr('inner.txt', 'inner')
wb = openpyxl.Workbook(); wb.active['A1'] = 5; wb.save('book.xlsx')
"
"""


HOME_LISTING = (
    "cd /home/user && find . -printf '%p %m %s %T@\\n' | sort && find . -type f -print0 | sort -z "
    "| xargs -0 sha256sum"
)


def home_digest(sandbox) -> str:
    """Names, modes, sizes, mtimes and contents of everything under the sandbox's home."""
    code, listing = sandbox.exec(["bash", "-c", HOME_LISTING])
    assert code == 0 and "./a.txt" in listing, listing
    return hashlib.sha256(listing.encode()).hexdigest()


@pytest.mark.parametrize("backend", ["local_sandbox", "base_sandbox"])
def test_probes_on_a_live_sandbox_leave_it_byte_identical(backend, request):
    sandbox = request.getfixturevalue(backend)
    assert sandbox.call("bash.run", command=SETUP)["exit_code"] == 0
    before = home_digest(sandbox)
    battery = [validate_probe(shell(argv)) for argv in ALLOWED]
    battery += [
        validate_probe(spec)
        for spec in (
            {"kind": "file_exists", "path": "/home/user/a.txt"},
            {"kind": "file_grep", "path": "/home/user/a.txt", "patterns": ["^a$"]},
            {"kind": "xlsx_cells", "path": "/home/user/book.xlsx", "expect": {"A1": {"value": 5}}},
            {"kind": "sqlite_query", "path": "/home/user/x.db", "query": "SELECT v FROM t"},
            {"kind": "url_match", "pattern": "example", "profile_root": "/home/user"},
        )
    ]
    # A program with a side effect nobody foresaw (here, plainly `touch`) runs in the frozen copy.
    touch = ShellCommand.model_construct(
        kind="shell_command",
        argv=["touch", "/home/user/a.txt", "/home/user/new"],
        expect_exit=0,
        expect_substring=None,
        forbid_substring=None,
    )
    with ReadOnlyView(sandbox) as view:
        verdicts = [view.run(spec) for spec in battery]
        touched = view.run(touch)
    # Locally it runs and writes only into the copy; in docker it runs as the observer user, who
    # may read every file but write none of the agent's, not even in the copy.
    assert touched.verdict is (backend == "local_sandbox"), touched.evidence
    missing = [o.evidence for o in verdicts[: len(ALLOWED)] if o.verdict is not True]
    # The base image has no xxd; every other read-only line runs and succeeds.
    assert all("exit 127" in evidence for evidence in missing), missing
    assert len(missing) <= (0 if backend == "local_sandbox" else 1)
    for argv in BYPASSES:
        with pytest.raises(ToolError):
            validate_probe(shell(argv))
    assert home_digest(sandbox) == before
    assert not sandbox.call("file.stat", path="/home/user/new")["exists"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"kind": "xlsx_cells", "path": "/home/user/folder.xlsx"}, "not a regular file"),
        ({"kind": "xlsx_cells", "path": "/home/user/fake.xlsx"}, "could not run"),
        ({"kind": "docx_text", "path": "/home/user/fake.xlsx", "contains": ["x"]}, "could not"),
        ({"kind": "file_grep", "path": "/home/user/folder.xlsx", "patterns": ["x"]}, "regular"),
        ({"kind": "sqlite_query", "path": "/home/user/a.txt", "query": "SELECT 1 FROM t"}, "query"),
    ],
)
def test_a_broken_probe_is_a_tool_error(local_sandbox, spec, message):
    assert local_sandbox.call("bash.run", command=SETUP)["exit_code"] == 0
    with pytest.raises(ToolError, match=message):
        run_probe(validate_probe(spec), local_sandbox)


def test_a_broken_probe_does_not_end_the_run(tmp_path):
    if not __import__("shutil").which("bwrap"):
        pytest.skip("bubblewrap is not installed")

    def bash(command):
        return {"tool_calls": [{"name": "bash", "input": {"command": command}}]}

    def probe(path):
        return {
            "tool_calls": [
                {"name": "probe", "input": {"spec": {"kind": "xlsx_cells", "path": path}}}
            ]
        }

    # Laid out by the task's setup, before the run starts: not files the run changed.
    setup = [{"type": "execute", "parameters": {"command": ["bash", "-c", SETUP]}}]
    task = Task.model_validate(
        {
            "id": "broken-probe",
            "instruction": "Write 'hi' into /home/user/hi.txt.",
            "config": setup,
            "evaluator": {},
            "base_dir": tmp_path,
        }
    )
    agent = [
        bash("echo hi > /home/user/hi.txt"),
        bash("cat hi.txt"),
        bash("ls"),
        {"tool_calls": [{"name": "finish", "input": {"summary": "done"}}]},
    ]
    gate = [
        probe("/home/user/folder.xlsx"),
        probe("/home/user/fake.xlsx"),
        {"tool_calls": [{"name": "verdict", "input": {"passed": True, "gaps": []}}]},
    ]
    config = RunConfig(model="script/test")
    config.sandbox.backend = "local"
    config.sandbox.memory_mb = 2048
    result = run_task(
        task, config, tmp_path / "run", model=ScriptedModel(agent), gate_model=ScriptedModel(gate)
    )
    assert result["status"] == "completed" and result["gate_passed"], result
    transcript = (tmp_path / "run" / "gate" / "round-1.json").read_text()
    assert "not a regular file" in transcript and "could not run" in transcript
