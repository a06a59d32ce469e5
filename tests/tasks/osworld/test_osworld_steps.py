"""OSWorld's sudo, Chrome and account setup steps, and Chrome's profile-file getters (no Docker)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from harness.kernel.core import StateActError
from tasks.chrome_live import omnibox_text
from tasks.getters import GetterContext, RootDirSource, run_getter
from tasks.schema import SetupStep, load_task
from tasks.setup import SUDO, SUDO_AS_USER, run_setup
from tests.tasks.test_task_setup import RecordingSandbox


def task(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps({"id": "t", "instruction": "x", "evaluator": {"func": "infeasible"}})
    )
    return load_task(path)


def run(tmp_path, *raw, sandbox=None, before_agent=False):
    sandbox = sandbox or RecordingSandbox()
    steps = [SetupStep.model_validate(s) for s in raw]
    run_setup(steps, sandbox, task(tmp_path), None, before_agent=before_agent)
    return sandbox


@pytest.mark.parametrize(
    "command, uses_sudo",
    [
        ("echo {CLIENT_PASSWORD} | sudo -S apt-get install jq -y", True),
        ("sudo mkdir /opt/x", True),
        ("ls; sudo -S true", True),
        ("echo pseudo code", False),
        ("grep sudoers /etc/group", False),
        ("cat ~/sudo.txt", False),
    ],
)
def test_sudo_is_recognised_as_a_command_word_only(command, uses_sudo):
    assert (SUDO.search(command) is not None) is uses_sudo


@pytest.mark.parametrize("as_root", [False, True])
def test_a_sudo_step_runs_with_sudo_defined_in_its_shell_as_root_only_before_the_agent(
    tmp_path, as_root
):
    sandbox = run(
        tmp_path,
        {"type": "execute", "parameters": {"command": "echo pw | sudo -S mkdir ~/Desktop/x"}},
        {"type": "execute", "parameters": {"command": ["ls", "/home/user"]}},
        before_agent=as_root,
    )
    # The desktop session comes first (command steps run in it); then the two steps.
    steps = [(argv, user) for argv, user in sandbox.commands if "cd /home/user;" in argv[-1]]
    (sudo_argv, sudo_user), (plain_argv, plain_user) = steps
    assert SUDO_AS_USER in sudo_argv[-1]
    assert sudo_user == ("root" if as_root else "user")
    assert ("export HOME=/home/user USER=user" in sudo_argv[-1]) is as_root
    assert plain_user == "user" and "sudo" not in plain_argv[-1]


@pytest.mark.parametrize(
    "line, output",
    [
        ("echo secret | sudo -S sh -c 'cat; echo ran'", "ran"),  # -S eats the password line
        ("printf 'pw\\nrest\\n' | sudo -S -u root cat", "rest"),
        ("sudo -E -H -- echo plain", "plain"),
        ("sudo -n true && echo ok", "ok"),
    ],
)
def test_the_sudo_function_drops_its_options_and_runs_the_command(line, output):
    result = subprocess.run(["bash", "-c", SUDO_AS_USER + line], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.split() == [output], result.stderr


@pytest.mark.parametrize("step", ["login", "googledrive"])
def test_account_steps_are_reported_unsupported_in_one_sentence(tmp_path, step):
    with pytest.raises(StateActError, match=rf"setup step 0 \({step}\) is unsupported: .*account"):
        run(tmp_path, {"type": step, "parameters": {"settings_file": "x.json"}})


def test_chrome_steps_fail_with_the_reason_when_no_browser_answers(tmp_path):
    class NoChrome(RecordingSandbox):
        def exec(self, argv, timeout=120.0, user="user"):
            if "chrome_cdp" in " ".join(argv) or "connect_over_cdp" in " ".join(argv):
                return 1, "no Chrome answers on 127.0.0.1 port 9222 or 1337; launch it\n"
            return super().exec(argv, timeout, user)

    step = {"type": "chrome_open_tabs", "parameters": {"urls_to_open": ["https://a.example"]}}
    with pytest.raises(StateActError, match="chrome_open_tabs.*no Chrome answers on 127.0.0.1"):
        run(tmp_path, step, sandbox=NoChrome())


@pytest.mark.parametrize(
    "url, shown",
    [
        ("https://www.example.com/a?b=1", "example.com/a?b=1"),
        ("http://127.0.0.1:8000/x", "127.0.0.1:8000/x"),
        ("file:///home/user/a.html", "file:///home/user/a.html"),
        ("about:blank", "about:blank"),
    ],
)
def test_the_address_bar_text_elides_scheme_and_www_as_chrome_does(url, shown):
    assert omnibox_text(url) == shown


def profile_context(tmp_path):
    """A getter context over a machine folder holding a google-chrome profile."""
    task_file = tmp_path / "t.json"
    task_file.write_text(json.dumps({"id": "c", "instruction": "x", "evaluator": {"func": "x"}}))
    root = tmp_path / "root"
    default = root / "home/user/.config/google-chrome/Default"
    default.mkdir(parents=True)
    ctx = GetterContext(load_task(task_file), RootDirSource(root), None, tmp_path / "work")
    return default, ctx


def test_profile_file_getters_read_bookmarks_history_cookies_and_font_sizes(tmp_path):
    default, ctx = profile_context(tmp_path)
    roots = {"bookmark_bar": {"children": [{"type": "url", "name": "A", "url": "https://a.org/"}]}}
    (default / "Bookmarks").write_text(json.dumps({"roots": roots, "version": 1}))
    (default / "Preferences").write_text(
        json.dumps({"webkit": {"webprefs": {"default_font_size": 20}}})
    )
    with sqlite3.connect(default / "History") as db:
        db.execute("CREATE TABLE urls (url TEXT, title TEXT, last_visit_time INTEGER)")
        db.execute("INSERT INTO urls VALUES ('https://a.org/', 'A', 13300000000000000)")
    (default / "Network").mkdir()
    with sqlite3.connect(default / "Network" / "Cookies") as db:
        db.execute("CREATE TABLE cookies (host_key TEXT)")

    assert run_getter({"type": "bookmarks"}, ctx) == roots
    assert run_getter({"type": "history"}, ctx) == [("https://a.org/", "A", 13300000000000000)]
    cookies = run_getter({"type": "cookie_data", "dest": "Cookies"}, ctx)
    assert Path(cookies).name == "Cookies" and sqlite3.connect(cookies).execute(
        "SELECT count(*) FROM cookies"
    ).fetchone() == (0,)
    sizes = {"default_font_size": 20, "default_fixed_font_size": 13, "minimum_font_size": 0}
    assert run_getter({"type": "chrome_font_size"}, ctx) == sizes


def test_profile_file_getters_answer_none_without_the_file_and_refuse_broken_json(tmp_path):
    default, ctx = profile_context(tmp_path)
    assert run_getter({"type": "bookmarks"}, ctx) is None
    assert run_getter({"type": "history"}, ctx) is None
    assert run_getter({"type": "cookie_data"}, ctx) is None
    (default / "Bookmarks").write_text("{not json")
    with pytest.raises(StateActError, match="Bookmarks is not valid JSON"):
        run_getter({"type": "bookmarks"}, ctx)


class CannedChrome:
    """A machine whose Chrome answers every DevTools operation with `answer` (the parsing only;
    the live path runs in tests/tasks/osworld/test_osworld_desktop.py)."""

    def __init__(self, answer):
        self.answer = answer

    def run_command(self, command, shell):
        return {"output": "\n" + json.dumps(self.answer) + "\n", "returncode": 0}


def test_url_getters_parse_the_active_tabs_address_as_osworld_does(tmp_path):
    _, ctx = profile_context(tmp_path)
    ctx.source = CannedChrome({"title": "T", "url": "https://www.x.org/a/b?pu=1&do=two"})
    url = {"type": "active_url_from_accessTree", "goto_prefix": "https://www."}
    assert run_getter(url, ctx) == "https://www.x.org/a/b?pu=1&do=two"
    assert run_getter({**url, "goto_prefix": ""}, ctx) == "x.org/a/b?pu=1&do=two"
    parse = {"type": "active_tab_url_parse", "parse_keys": ["pu", "do"], "replace": {"do": "d"}}
    assert run_getter(parse, ctx) == {"pu": "1", "d": "two"}
    dash = {"type": "url_dashPart", "partIndex": 3, "returnType": "json", "key": "k"}
    assert run_getter(dash, ctx) == {"k": "a"}
    assert run_getter({**dash, "partIndex": 40}, ctx) is None
    with pytest.raises(StateActError, match="page_info getter needs a 'url' string"):
        run_getter({"type": "page_info"}, ctx)
    ctx.source = CannedChrome(None)  # no tab on screen
    assert run_getter(url, ctx) is None and run_getter({"type": "active_tab_info"}, ctx) is None
