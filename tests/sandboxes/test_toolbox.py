"""The in-sandbox toolbox, run as a local subprocess and driven over its JSON-lines protocol."""

from __future__ import annotations

import base64
import io
import json
import os
import select
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

SANDBOXES_DIR = Path(__file__).resolve().parents[2] / "sandboxes"


class ToolboxProcess:
    """A minimal client: starts `python -m toolbox` and exchanges JSON lines with it."""

    def __init__(self, home: Path):
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "PYTHONPATH": str(SANDBOXES_DIR),
            "LANG": "C.UTF-8",
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "toolbox"],
            cwd=home,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.ready = json.loads(self._read_line(10))
        self._next_id = 0

    def _read_line(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        assert ready, "the toolbox did not answer in time"
        line = self.process.stdout.readline()
        assert line.endswith(b"\n"), f"incomplete line from the toolbox: {line[:200]!r}"
        return line

    def send_raw(self, line: bytes, timeout: float = 30) -> dict:
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()
        return json.loads(self._read_line(timeout))

    def request(self, method: str, **params) -> dict:
        self._next_id += 1
        response = self.send_raw(
            json.dumps({"id": self._next_id, "method": method, "params": params}).encode()
        )
        assert response["id"] == self._next_id
        return response

    def call(self, method: str, **params) -> dict:
        response = self.request(method, **params)
        assert "result" in response, response
        return response["result"]

    def error(self, method: str, **params) -> dict:
        response = self.request(method, **params)
        assert "error" in response, response
        return response["error"]

    def close(self) -> int:
        self.process.stdin.close()
        code = self.process.wait(timeout=10)
        self.process.stdout.close()
        self.process.stderr.close()
        return code


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def toolbox(home):
    client = ToolboxProcess(home)
    yield client
    assert client.close() == 0


def bash(toolbox, command: str, **params) -> dict:
    return toolbox.call("bash.run", command=command, **params)


# -- protocol -----------------------------------------------------------------------------------
def test_ready_line_and_ping(toolbox):
    assert toolbox.ready["ready"] is True and toolbox.ready["pid"] > 0
    assert toolbox.ready["python"].count(".") == 2
    assert toolbox.call("ping") == {"pong": True}


def test_unknown_method_is_bad_request(toolbox):
    error = toolbox.error("no.such.method")
    assert error["type"] == "BadRequest" and "no.such.method" in error["message"]


def test_malformed_json_gets_null_id_and_server_keeps_going(toolbox):
    response = toolbox.send_raw(b"{not json")
    assert response["id"] is None and response["error"]["type"] == "BadRequest"
    assert toolbox.send_raw(b"[1, 2]")["error"]["type"] == "BadRequest"
    assert toolbox.call("ping") == {"pong": True}


def test_missing_and_mistyped_params_name_the_param(toolbox):
    error = toolbox.error("bash.run")
    assert error["type"] == "BadRequest" and "`command`" in error["message"]
    error = toolbox.error("bash.run", command="true", timeout="soon")
    assert error["type"] == "BadRequest" and "`timeout`" in error["message"]


def test_eof_stops_children_and_exits_zero(tmp_path):
    client = ToolboxProcess(tmp_path)
    pid = client.call("bash.run", command="echo $$")["output"].strip()
    client.call("python.run", code="1")
    assert client.close() == 0
    time.sleep(0.2)
    assert (
        not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
    )


# -- bash ---------------------------------------------------------------------------------------
def test_exit_code_and_cd_and_env_persist(toolbox, home):
    assert bash(toolbox, "false")["exit_code"] == 1
    result = bash(toolbox, "mkdir -p work && cd work && export GREETING=hello")
    assert result["exit_code"] == 0 and result["cwd"] == str(home / "work")
    result = bash(toolbox, "pwd; echo $GREETING")
    assert result["output"] == f"{home / 'work'}\nhello\n" and result["cwd"] == str(home / "work")
    bash(toolbox, "cd ~")


def test_multiline_heredoc_and_special_characters(toolbox):
    command = (
        "cat > notes.txt <<'EOF'\nline one $HOME\n\ttabbed \"quoted\" 'single' "
        "!bang\nEOF\nwc -l < notes.txt\ncat notes.txt"
    )
    result = bash(toolbox, command)
    assert result["exit_code"] == 0
    assert result["output"] == "2\nline one $HOME\n\ttabbed \"quoted\" 'single' !bang\n"
    # Longer than the tty's 4 kB line limit.
    long_text = "x" * 10000
    assert bash(toolbox, f"echo {long_text} | wc -c")["output"].strip() == "10001"


def test_unicode_and_a_replaced_prompt_command(toolbox):
    result = bash(toolbox, "echo 'Zoë ✓ ü'; PROMPT_COMMAND='echo hijacked'; PS1='$ '")
    assert result["output"] == "Zoë ✓ ü\n" and result["exit_code"] == 0
    assert bash(toolbox, "echo fine")["output"] == "fine\n"
    long_unicode = "é" * 2500  # over the inline limit in bytes, not in characters
    assert bash(toolbox, f"printf %s '{long_unicode}' | wc -m")["output"].strip() == "2500"


def test_timeout_returns_partial_output_and_next_command_works(toolbox):
    started = time.monotonic()
    result = bash(toolbox, "echo start; sleep 5", timeout=1)
    assert time.monotonic() - started < 4
    assert result["timed_out"] is True and result["exit_code"] is None
    assert result["output"].startswith("start\n")
    assert (
        "timed out: bash has not returned in 1.0 seconds; the command was interrupted"
        in result["output"]
    )
    assert bash(toolbox, "echo ok") == {
        "output": "ok\n",
        "exit_code": 0,
        "cwd": result["cwd"],
        "timed_out": False,
        "truncated_chars": 0,
    }


@pytest.mark.parametrize("command", ["cat", "read x", "python3 -q"])
def test_commands_waiting_on_stdin_end_at_timeout(toolbox, command):
    result = bash(toolbox, command, timeout=0.5)
    assert result["timed_out"] is True
    assert bash(toolbox, "echo alive")["output"] == "alive\n"


def test_exit_restarts_session_with_a_note(toolbox):
    bash(toolbox, "export MARK=1", session="quitter")
    result = bash(toolbox, "exit 3", session="quitter")
    assert result["exit_code"] == 3 and "exited" in result["output"]
    result = bash(toolbox, "echo again; echo ${MARK:-unset}", session="quitter")
    assert "restart" in result["output"] and result["output"].endswith("again\nunset\n")
    assert result["exit_code"] == 0


def test_sessions_are_independent_and_restartable(toolbox):
    bash(toolbox, "X=first", session="a")
    bash(toolbox, "X=second", session="b")
    assert bash(toolbox, "echo $X", session="a")["output"] == "first\n"
    assert toolbox.call("bash.restart", session="a") == {"restarted": True}
    assert bash(toolbox, "echo ${X:-gone}", session="a")["output"] == "gone\n"
    assert "output" in toolbox.call("bash.interrupt", session="b")
    assert bash(toolbox, "echo $X", session="b")["output"] == "second\n"


def test_huge_output_is_cut_in_the_middle(toolbox):
    started = time.monotonic()
    result = bash(toolbox, "head -c 10000000 /dev/zero | tr '\\0' a; echo; echo END", timeout=60)
    elapsed = time.monotonic() - started
    print(f"10 MB of output came back in {elapsed:.2f} s")
    assert result["exit_code"] == 0 and elapsed < 15
    total = 10_000_000 + len("\nEND\n")
    assert result["truncated_chars"] == total - 30000
    head, note_and_tail = result["output"].split("\n[... ", 1)
    assert head == "a" * 15000
    assert note_and_tail.startswith(f"{total - 30000:,} characters cut ...]\n")
    assert note_and_tail.endswith("a" * 14995 + "\nEND\n")
    small = bash(toolbox, "yes 2>/dev/null | head -c 10M", max_output=1000)
    assert small["truncated_chars"] == 10 * 1024 * 1024 - 1000 and len(small["output"]) < 1100


def test_binary_and_control_output_is_text(toolbox):
    result = bash(
        toolbox, "head -c 3000 /dev/urandom; echo; printf 'a\\0b\\r\\n\\033[31mred\\033[0m\\n'"
    )
    assert result["exit_code"] == 0
    assert result["output"].endswith("ab\nred\n")
    assert "\0" not in result["output"] and "\r" not in result["output"]


def test_bash_round_trip_latency(toolbox):
    bash(toolbox, "true")
    samples = []
    for _ in range(200):
        started = time.perf_counter()
        bash(toolbox, "true")
        samples.append((time.perf_counter() - started) * 1000)
    print(
        f"bash.run('true') round trip: median {statistics.median(samples):.2f} ms, p90 "
        f"{sorted(samples)[179]:.2f} ms"
    )
    assert statistics.median(samples) < 50  # generous: this is a smoke check, the figure is printed


# -- python -------------------------------------------------------------------------------------
def test_python_variables_persist_and_trailing_expression_prints(toolbox):
    result = toolbox.call("python.run", code="values = [1, 2, 3]\nprint('sum', sum(values))")
    assert result == {"output": "sum 6\n", "error": None, "timed_out": False, "truncated_chars": 0}
    assert toolbox.call("python.run", code="values.append(4)\nvalues")["output"] == "[1, 2, 3, 4]\n"
    assert (
        toolbox.call("python.run", code="import sys\nprint('err', file=sys.stderr)")["output"]
        == "err\n"
    )


def test_python_traceback_shows_only_user_frames(toolbox):
    result = toolbox.call("python.run", code="def f():\n    return 1 / 0\nprint('before')\nf()")
    assert result["output"] == "before\n"
    assert result["error"].startswith('Traceback (most recent call last):\n  File "<cell')
    assert "ZeroDivisionError" in result["error"] and "return 1 / 0" in result["error"]
    assert "python_driver" not in result["error"] and "<string>" not in result["error"]
    syntax = toolbox.call("python.run", code="def broken(:")["error"]
    assert "SyntaxError" in syntax
    assert (
        toolbox.call("python.run", code="input()")["error"]
        .rstrip()
        .endswith("EOFError: EOF when reading a line")
    )


def test_python_timeout_keeps_variables(toolbox):
    toolbox.call("python.run", code="kept = 'still here'")
    result = toolbox.call("python.run", code="print('looping')\nwhile True: pass", timeout=1)
    assert result["timed_out"] is True and "KeyboardInterrupt" in result["error"]
    assert result["output"].startswith("looping\n") and "variables are kept" in result["output"]
    assert toolbox.call("python.run", code="kept")["output"] == "'still here'\n"


def test_python_that_ignores_interrupts_is_restarted(toolbox):
    code = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(30)"
    result = toolbox.call("python.run", code=code, timeout=0.5)
    assert result["timed_out"] is True and "restarted" in result["output"]
    assert toolbox.call("python.run", code="'fresh'")["output"] == "'fresh'\n"


def test_python_exit_and_restart(toolbox):
    toolbox.call("python.run", code="gone = 1")
    result = toolbox.call("python.run", code="import os\nos._exit(4)")
    assert "exit code 4" in result["error"]
    result = toolbox.call("python.run", code="'gone' in globals()")
    assert result["output"].endswith("False\n") and "fresh" in result["output"]
    toolbox.call("python.run", code="again = 1")
    assert toolbox.call("python.restart") == {"restarted": True}
    assert toolbox.call("python.run", code="'again' in globals()")["output"] == "False\n"


def test_python_cwd_follows_default_bash_session(toolbox, home):
    bash(toolbox, "mkdir -p pyplace && cd pyplace")
    assert (
        toolbox.call("python.run", code="import os\nos.getcwd()")["output"]
        == repr(str(home / "pyplace")) + "\n"
    )
    bash(toolbox, "cd ~")


def test_python_large_output_is_cut(toolbox):
    result = toolbox.call("python.run", code="print('b' * 2_000_000)", max_output=100)
    assert result["truncated_chars"] == 2_000_001 - 100


# -- editor -------------------------------------------------------------------------------------
def edit(toolbox, command: str, path, **params) -> dict:
    return toolbox.request("editor.run", command=command, path=str(path), **params)


def test_editor_create_view_and_refuse_overwrite(toolbox, home):
    path = home / "deep" / "dir" / "a.py"
    assert (
        "created"
        in edit(toolbox, "create", path, file_text="one\n\ttwo\nthree\n")["result"]["output"]
    )
    view = edit(toolbox, "view", path)["result"]["output"]
    assert view.endswith("     1\tone\n     2\t        two\n     3\tthree\n     4\t\n")
    ranged = edit(toolbox, "view", path, view_range=[2, -1])["result"]["output"]
    assert "     2\t        two" in ranged and "one" not in ranged
    assert path.read_text() == "one\n\ttwo\nthree\n"
    error = edit(toolbox, "create", path, file_text="x")["error"]
    assert error["type"] == "ToolError" and "str_replace" in error["message"]
    assert edit(toolbox, "view", path, view_range=[5, 9])["error"]["type"] == "ToolError"


def test_editor_str_replace_zero_one_two_matches_and_undo(toolbox, home):
    path = home / "b.txt"
    path.write_text("alpha\nbeta\ngamma\nbeta\n")
    error = edit(toolbox, "str_replace", path, old_str="delta", new_str="x")["error"]
    assert (
        error["message"]
        == f"No replacement was performed, old_str `delta` did not appear verbatim in {path}."
    )
    error = edit(toolbox, "str_replace", path, old_str="beta", new_str="x")["error"]
    assert "[2, 4]" in error["message"]
    output = edit(toolbox, "str_replace", path, old_str="gamma", new_str="GAMMA")["result"][
        "output"
    ]
    assert "     3\tGAMMA" in output and path.read_text() == "alpha\nbeta\nGAMMA\nbeta\n"
    assert "undone" in edit(toolbox, "undo_edit", path)["result"]["output"]
    assert path.read_text() == "alpha\nbeta\ngamma\nbeta\n"
    assert edit(toolbox, "undo_edit", path)["error"]["type"] == "ToolError"


def test_editor_insert(toolbox, home):
    path = home / "c.txt"
    path.write_text("1\n2\n3\n")
    edit(toolbox, "insert", path, insert_line=0, insert_text="top")
    edit(toolbox, "insert", path, insert_line=4, new_str="end\nreally")
    assert path.read_text() == "top\n1\n2\n3\nend\nreally\n"
    error = edit(toolbox, "insert", path, insert_line=99, insert_text="x")["error"]
    assert error["type"] == "ToolError" and "[0, 7]" in error["message"]


def test_editor_path_errors_and_directories(toolbox, home):
    error = edit(toolbox, "view", "relative.txt")["error"]
    assert error["type"] == "ToolError" and "absolute" in error["message"]
    error = edit(toolbox, "view", home / "missing.txt")["error"]
    assert error["type"] == "ToolError" and "does not exist" in error["message"]
    (home / "bin.dat").write_bytes(b"\x00\x01\x02binary")
    assert "binary" in edit(toolbox, "view", home / "bin.dat")["error"]["message"]
    (home / ".hidden").mkdir(exist_ok=True)
    listing = edit(toolbox, "view", home)["result"]["output"]
    assert f"{home}/deep/dir/" in listing and ".hidden" not in listing and "a.py" not in listing
    assert edit(toolbox, "explode", home / "b.txt")["error"]["type"] == "BadRequest"


# -- images and files ---------------------------------------------------------------------------
def test_image_view_scales_large_png(toolbox, home):
    path = home / "big.png"
    Image.new("RGB", (4000, 3000), (10, 200, 30)).save(path)
    result = toolbox.call("image.view", path=str(path))
    assert (result["original_width"], result["original_height"]) == (4000, 3000)
    assert result["width"] * result["height"] <= 1_150_000 and result["width"] == 1238
    with Image.open(io.BytesIO(base64.b64decode(result["png_b64"]))) as image:
        assert image.size == (result["width"], result["height"]) and image.format == "PNG"
    small = toolbox.call("image.view", path=str(path), max_long_edge=400)
    assert (small["width"], small["height"]) == (400, 300)
    assert toolbox.error("image.view", path=str(home / "b.txt"))["type"] == "ToolError"


def test_file_write_read_roundtrip_and_stat(toolbox, home):
    data = os.urandom(1_000_000)
    path = home / "blobs" / "one.bin"
    assert toolbox.call(
        "file.write", path=str(path), data_b64=base64.b64encode(data).decode(), mode=0o600
    ) == {"size": 1_000_000}
    assert path.stat().st_mode & 0o777 == 0o600
    result = toolbox.call("file.read", path=str(path))
    assert base64.b64decode(result["data_b64"]) == data and result["size"] == 1_000_000
    stat = toolbox.call("file.stat", path=str(path))
    assert stat["exists"] and not stat["is_dir"] and stat["size"] == 1_000_000
    assert toolbox.call("file.stat", path=str(home / "nope"))["exists"] is False
    assert toolbox.error("file.read", path=str(home / "nope"))["type"] == "ToolError"
    assert toolbox.error("file.read", path=str(path), max_bytes=10)["type"] == "ToolError"
    assert toolbox.error("file.write", path=str(path), data_b64="!!!")["type"] == "BadRequest"


def test_fs_changed_lists_new_files_and_skips_caches(toolbox, home):
    since = time.time() - 0.01
    bash(toolbox, "mkdir -p out .cache/x && echo 1 > out/new.txt && echo 2 > .cache/x/skip.txt")
    result = toolbox.call("fs.changed", since=since, roots=[str(home)])
    paths = [entry["path"] for entry in result["paths"]]
    assert str(home / "out" / "new.txt") in paths and not any(".cache" in p for p in paths)
    assert result["truncated"] is False
    limited = toolbox.call("fs.changed", since=0, roots=[str(home)], limit=1)
    assert len(limited["paths"]) == 1 and limited["truncated"] is True
