"""OSWorld's environment in the desktop image: its applications, sudo steps, pyautogui, and Chrome
over CDP, checked in one shared desktop sandbox (cases are ordered so they do not interfere)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import openpyxl
import pytest

from sandboxes import SandboxConfig, open_sandbox
from subagents.web import Browser, ClickTool
from tasks.cache import cache_name
from tasks.evaluate import evaluate
from tasks.getters import GetterContext, SandboxSource, run_getter
from tasks.schema import SetupStep, load_task
from tasks.setup import default_placeholders, run_setup
from tests.conftest import require_image
from tests.desktop_helpers import sh, wait_for, window_of

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.desktop]

SITE_PORT = 8766
STARTUP_TASK = "3299584d-8f11-4457-bf4c-ce98f7600250"
SAVE_TASK = (
    Path(__file__).parents[2] / "osworld_tasks" / "01b269ae-2111-4a07-81fd-3fcd711993b0.json"
)


@pytest.fixture(scope="module")
def sandbox():
    require_image("desktop")
    with open_sandbox(SandboxConfig(image="desktop", memory_mb=6144)) as box:
        code, out = box.exec(["stateact-desktop", "start", "1280x720"], timeout=120)
        assert code == 0, out
        yield box


def context(box, tmp_path, task_file: Path = SAVE_TASK, cache: Path | None = None):
    return GetterContext(load_task(task_file), SandboxSource(box), cache, tmp_path / "work")


def steps(*raw):
    return [SetupStep.model_validate(s) for s in raw]


def test_python_is_a_command_and_pyautogui_moves_the_sandbox_pointer(sandbox):
    sh(sandbox, "python -c 'import pyautogui; pyautogui.moveTo(123, 234)'")
    assert "x:123 y:234" in sh(sandbox, "xdotool getmouselocation")
    assert sh(sandbox, "socat -V | head -2; jq --version; gsettings --version").count("\n") >= 3


def test_ctrl_alt_t_opens_a_terminal_as_on_osworlds_ubuntu(sandbox):
    command = "import pyautogui; import time; pyautogui.hotkey('ctrl', 'alt', 't'); time.sleep(0.5)"
    run_setup(
        steps({"type": "execute", "parameters": {"command": ["python", "-c", command]}}),
        sandbox,
        load_task(SAVE_TASK),
        None,
    )
    window = window_of(sandbox, "gnome-terminal", "--class")
    sh(sandbox, f"xdotool windowclose {window} || true")


def test_gsettings_writes_dconf_and_the_command_getter_reads_it_back(sandbox, tmp_path):
    sh(sandbox, "gsettings set org.gnome.desktop.interface text-scaling-factor 1.25")
    sh(sandbox, "gsettings set org.gnome.shell favorite-apps \"['thunderbird.desktop']\"")
    sh(sandbox, "test -s ~/.config/dconf/user")
    ctx = context(sandbox, tmp_path)
    for key, value in [
        ("org.gnome.desktop.interface text-scaling-factor", "1.25"),
        ("org.gnome.shell favorite-apps", "['thunderbird.desktop']"),
    ]:
        spec = {"type": "vm_command_line", "command": f"gsettings get {key}", "shell": True}
        assert run_getter(spec, ctx).strip() == value


def test_a_sudo_step_runs_as_root_before_the_agent_but_the_agent_has_no_sudo(sandbox, tmp_path):
    task = load_task(SAVE_TASK)
    # OSWorld's e0df059f: `sudo mkdir` in the user's Desktop makes a root-owned folder there, which
    # the user can still rename (the folder above is the user's).
    command = "echo {CLIENT_PASSWORD} | sudo -S mkdir ~/Desktop/todo_list_Jan_1; id -u"
    setup = steps({"type": "execute", "parameters": {"command": command, "stdout": "id.out"}})
    run_setup(setup, sandbox, task, None, outputs_dir=tmp_path, before_agent=True)
    assert (tmp_path / "id.out").read_text().split() == ["0"]
    assert sh(sandbox, "stat -c %U ~/Desktop/todo_list_Jan_1").split() == ["root"]
    sh(sandbox, "mv ~/Desktop/todo_list_Jan_1 ~/Desktop/todo_list_Jan_2")
    # A package the image has "installs" as on the VM (apt-get as root, offline).
    install = "echo {CLIENT_PASSWORD} | sudo -S apt-get install jq -y; echo rc=$?"
    setup = steps({"type": "execute", "parameters": {"command": install, "stdout": "apt.out"}})
    run_setup(setup, sandbox, task, None, outputs_dir=tmp_path, before_agent=True)
    assert "rc=0" in (tmp_path / "apt.out").read_text()
    # After the agent (postconfig), sudo runs with the user's rights.
    after = steps({"type": "execute", "parameters": {"command": command, "stdout": "late.out"}})
    run_setup(after, sandbox, task, None, outputs_dir=tmp_path)
    assert (tmp_path / "late.out").read_text().split()[-1] == "1000"
    # The agent's processes have no capability and no sudo; only root's execs have a few.
    assert sh(sandbox, "grep CapEff /proc/self/status").split()[-1] == "0000000000000000"
    code, out = sandbox.exec(["bash", "-c", "echo password | sudo -S true"])
    assert code != 0 and "sudo" in out
    code, out = sandbox.exec(["bash", "-c", "grep CapEff /proc/self/status"], user="root")
    assert code == 0 and out.split()[-1] != "0000000000000000"


def quit_window(box, window: str) -> None:
    sh(box, f"xdotool windowactivate --sync {window} key --clearmodifiers ctrl+q || true")


def test_gimp_starts_and_its_config_folder_is_read_by_a_getter(sandbox, tmp_path):
    run_setup(
        steps({"type": "launch", "parameters": {"command": ["gimp"]}}),
        sandbox,
        load_task(SAVE_TASK),
        None,
    )
    window = window_of(sandbox, "GNU Image Manipulation Program")
    time.sleep(3)  # a GIMP quit while it still starts up writes no session file
    quit_window(sandbox, window)
    wait_for(sandbox, "pgrep -x gimp-2.10 >/dev/null || echo gone", "GIMP to quit", 60)
    spec = {"type": "vm_file", "path": "/home/user/.config/GIMP/2.10/sessionrc", "dest": "s"}
    path = run_getter(spec, context(sandbox, tmp_path))
    assert path and "(session-info" in Path(path).read_text()


def test_thunderbird_starts_and_writes_its_profile(sandbox, tmp_path):
    run_setup(
        steps({"type": "launch", "parameters": {"command": ["thunderbird"]}}),
        sandbox,
        load_task(SAVE_TASK),
        None,
    )
    window = window_of(sandbox, "Thunderbird", "--class")
    wait_for(sandbox, "ls ~/.thunderbird/*/prefs.js", "Thunderbird's prefs.js", 60)
    quit_window(sandbox, window)
    prefs = sh(sandbox, "ls ~/.thunderbird/*/prefs.js | head -1").strip()
    path = run_getter(
        {"type": "vm_file", "path": prefs, "dest": "prefs.js"}, context(sandbox, tmp_path)
    )
    assert path and "user_pref(" in Path(path).read_text()


def test_vlc_starts_and_writes_its_settings(sandbox, tmp_path):
    run_setup(
        steps({"type": "launch", "parameters": {"command": ["vlc"]}}),
        sandbox,
        load_task(SAVE_TASK),
        None,
    )
    window = window_of(sandbox, "VLC media player")
    quit_window(sandbox, window)
    wait_for(sandbox, "pgrep -x vlc >/dev/null || echo gone", "VLC to quit", 30)
    spec = {"type": "vm_file", "path": "/home/user/.config/vlc/vlc-qt-interface.conf", "dest": "q"}
    path = run_getter(spec, context(sandbox, tmp_path))
    assert path and "[MainWindow]" in Path(path).read_text()


def test_vs_code_opens_a_folder_and_lists_an_installed_extension(sandbox, tmp_path):
    sh(sandbox, "mkdir -p ~/proj && echo hello > ~/proj/notes.txt")
    run_setup(
        steps({"type": "launch", "parameters": {"command": ["code", "/home/user/proj/notes.txt"]}}),
        sandbox,
        load_task(SAVE_TASK),
        None,
    )
    window_of(sandbox, "notes.txt - proj - Visual Studio Code")  # the file open in its folder
    sh(sandbox, "test -d ~/.config/Code/User")
    vsix = make_vsix(tmp_path / "ext.vsix")
    sandbox.copy_in(vsix, "/tmp/ext.vsix")
    sh(sandbox, "code --install-extension /tmp/ext.vsix", timeout=180)
    spec = {"type": "vm_command_line", "command": "code --list-extensions", "shell": True}
    assert "stateact.hello" in run_getter(spec, context(sandbox, tmp_path))


def make_vsix(path: Path) -> Path:
    """The smallest VS Code extension package: a manifest and a package.json."""
    import zipfile

    package = {
        "name": "hello",
        "publisher": "stateact",
        "version": "0.0.1",
        "engines": {"vscode": "^1.50.0"},
    }
    manifest = (
        '<?xml version="1.0" encoding="utf-8"?><PackageManifest Version="2.0.0" '
        'xmlns="http://schemas.microsoft.com/developer/vsx-schema/2011"><Metadata>'
        '<Identity Language="en-US" Id="hello" Version="0.0.1" Publisher="stateact"/>'
        "<DisplayName>hello</DisplayName><Description>x</Description></Metadata>"
        '<Installation><InstallationTarget Id="Microsoft.VisualStudio.Code"/></Installation>'
        "<Dependencies/><Assets>"
        '<Asset Type="Microsoft.VisualStudio.Code.Manifest" Path="extension/package.json"/>'
        "</Assets></PackageManifest>"
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("extension.vsixmanifest", manifest)
        archive.writestr("extension/package.json", json.dumps(package))
    return path


def workbook(path: Path, level: str | None) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Name", "Level"])
    sheet.append(["Ann", level])
    sheet.append(["Bob", "low"])
    book.save(path)
    return path


def test_osworld_pyautogui_post_config_saves_the_calc_edit_and_the_task_scores(sandbox, tmp_path):
    """OSWorld's own task file: download, open, an edit in Calc, its ctrl+s post-config, its
    check."""
    task = load_task(SAVE_TASK)
    cache = tmp_path / "cache"
    cache.mkdir()
    urls = [f["url"] for f in task.config[0].parameters["files"]] + [
        task.evaluator.expected["path"]
    ]
    workbook(cache / cache_name(urls[0]), None)
    workbook(cache / cache_name(urls[1]), "high")
    run_setup(task.config, sandbox, task, cache)
    window = window_of(sandbox, "Student_Level_Fill_Blank.xlsx - LibreOffice Calc")
    # The office takes keystrokes reliably once it is fully up: its UNO pipe opens seconds after
    # the window shows (a loaded machine otherwise loses the first keys).
    sh(
        sandbox,
        "for _ in $(seq 120); do test -S /tmp/OSL_PIPE_1000_stateact-uno && break; sleep 0.5; done",
    )
    time.sleep(2)  # the grid settles once the toolbars are drawn
    sh(
        sandbox,
        f"xdotool windowactivate --sync {window} key --delay 150 ctrl+Home Down Right "
        "&& xdotool type --delay 80 high && xdotool key Return",
    )
    source = SandboxSource(sandbox)
    assert evaluate(task, source, cache).score == 0.0  # edited in Calc, not saved yet

    run_setup(task.evaluator.postconfig, sandbox, task, cache, default_placeholders(1280, 720))
    deadline, score = time.monotonic() + 45, 0.0  # a loaded machine saves slowly
    while score != 1.0 and time.monotonic() < deadline:
        score = evaluate(task, source, cache).score
        time.sleep(0.5)
    assert score == 1.0
    sh(sandbox, "pkill -x soffice.bin || true")


PAGES = {
    "a.html": "<title>Page A</title><h1>Page A</h1>",
    "b.html": "<title>Page B</title><h1>Page B</h1>"
    "<button id=go onclick=\"location.href='c.html?from=b'\">Next</button>",
    "c.html": "<title>Page C</title><h1>Page C</h1>",
}


def test_chrome_steps_getters_and_the_web_specialist_share_the_desktop_browser(sandbox, tmp_path):
    site = f"http://127.0.0.1:{SITE_PORT}"
    for name, html in PAGES.items():
        page = tmp_path / name
        page.write_text(f"<!doctype html><meta charset=utf-8>{html}")
        sandbox.copy_in(page, f"/home/user/site/{name}")
    sh(
        sandbox,
        f"cd ~/site && (setsid python3 -m http.server {SITE_PORT} --bind 127.0.0.1 "
        ">/tmp/site.log 2>&1 &) && sleep 0.5",
    )
    task = load_task(SAVE_TASK)
    history = [{"url": f"{site}/old.html", "title": "Old", "visit_time_from_now_in_seconds": 3600}]
    run_setup(
        steps(
            {"type": "update_browse_history", "parameters": {"history": history}},
            {
                "type": "launch",
                "parameters": {"command": ["google-chrome", "--remote-debugging-port=1337"]},
            },
            {
                "type": "launch",
                "parameters": {"command": ["socat", "tcp-listen:9222,fork", "tcp:localhost:1337"]},
            },
            {
                "type": "chrome_open_tabs",
                "parameters": {"urls_to_open": [f"{site}/a.html", f"{site}/b.html?x=1&y=two"]},
            },
        ),
        sandbox,
        task,
        None,
    )
    ctx = context(sandbox, tmp_path)
    urls = [tab["url"] for tab in run_getter({"type": "open_tabs_info"}, ctx)]
    assert f"{site}/a.html" in urls and f"{site}/b.html?x=1&y=two" in urls
    active = run_getter({"type": "active_tab_info"}, ctx)
    assert active["title"] == "Page B" and "<h1>Page B</h1>" in active["content"]
    spec = {"type": "active_url_from_accessTree", "goto_prefix": "http://"}
    assert run_getter(spec, ctx) == f"{site}/b.html?x=1&y=two"
    spec = {"type": "active_tab_url_parse", "goto_prefix": "http://", "parse_keys": ["x", "y"]}
    assert run_getter(spec, ctx) == {"x": "1", "y": "two"}

    # The web specialist acts on the same tab the checker reads.
    ClickTool(Browser(sandbox))(selector="#go")
    active = run_getter({"type": "active_tab_info"}, ctx)
    assert (active["title"], active["url"]) == ("Page C", f"{site}/c.html?from=b")

    close = {"type": "chrome_close_tabs", "parameters": {"urls_to_close": [f"{site}/a.html"]}}
    run_setup(steps(close), sandbox, task, None)
    urls = [tab["url"] for tab in run_getter({"type": "open_tabs_info"}, ctx)]
    assert f"{site}/a.html" not in urls and f"{site}/c.html?from=b" in urls
    assert run_getter({"type": "page_info", "url": f"{site}/a.html"}, ctx)["title"] == "Page A"
    rows = run_getter({"type": "history"}, ctx)
    assert (f"{site}/old.html", "Old") in [(url, title) for url, title, _ in rows]


def test_a_chrome_task_whose_setup_edits_the_profile_scores_0_when_nothing_is_done(sandbox):
    """OSWorld's 'stop opening funbrain.com' task: its setup writes the startup page with jq into
    the profile Chrome already has; an agent that does nothing must not score."""
    task = load_task(Path(__file__).parents[2] / "osworld_tasks" / f"{STARTUP_TASK}.json")
    sh(sandbox, "pkill -x chrome; pkill -x socat; while pgrep -x chrome; do sleep 0.2; done")
    # The profile as the image ships it (the earlier Chrome test has used this one).
    sh(
        sandbox,
        "rm -rf ~/.config/google-chrome && cp -r /etc/skel/.config/google-chrome ~/.config/",
    )
    run_setup(task.config, sandbox, task, None)
    result = evaluate(task, SandboxSource(sandbox), None)
    assert result.score == 0.0 and result.error is None, result
