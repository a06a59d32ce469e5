"""The getters that ask running applications, in one shared desktop sandbox: nautilus under Xvfb,
VLC's playing state, the active tab's page and URL path, a page read for the check, and a VS Code
extension command. Pages are served inside the sandbox on 127.0.0.1; nothing leaves it."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

import pytest

from harness.kernel.core import StateActError
from sandboxes import SandboxConfig, open_sandbox
from tasks.eval_failure import EvaluationFailed
from tasks.getters import GetterContext, SandboxSource, run_getter
from tasks.metrics import METRICS
from tasks.schema import SetupStep, load_task
from tasks.setup import run_setup
from tests.conftest import OSWORLD_EXAMPLES, require_image
from tests.desktop_helpers import sh, wait_for, window_of

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.desktop]

SITE_PORT = 8767
SITE = f"http://127.0.0.1:{SITE_PORT}"
TASK = load_task(
    Path(__file__).parents[2] / "osworld_tasks" / "01b269ae-2111-4a07-81fd-3fcd711993b0.json"
)


@pytest.fixture(scope="module")
def sandbox():
    require_image("desktop")
    with open_sandbox(SandboxConfig(image="desktop", memory_mb=6144)) as box:
        code, out = box.exec(["stateact-desktop", "start", "1280x720"], timeout=120)
        assert code == 0, out
        yield box


def launch(box, command) -> None:
    step = SetupStep.model_validate({"type": "launch", "parameters": {"command": command}})
    run_setup([step], box, TASK, None)


def ctx(box, tmp_path) -> GetterContext:
    return GetterContext(TASK, SandboxSource(box), None, tmp_path / "work")


def test_a_vs_code_setup_writes_its_settings_before_code_ever_ran(sandbox):
    # 982d12a5's first step sets a theme in ~/.config/Code/User/settings.json, then launches code.
    task = OSWORLD_EXAMPLES / "vs_code" / "982d12a5-beab-424f-8d38-d2a48429e511.json"
    step = json.loads(task.read_text())["config"][0]
    assert step["type"] == "command"
    assert sh(sandbox, "pgrep -c -f '[c]ode-server' || true").strip() == "0"  # never started
    run_setup([SetupStep.model_validate(step)], sandbox, TASK, None)
    settings = json.loads(sh(sandbox, "cat ~/.config/Code/User/settings.json"))
    assert settings == {"workbench.colorTheme": "Red"}


def _lists(getter, needle: str) -> bool:
    """Whether the accessibility tree shows `needle`; a dump that ran past its limit does not."""
    try:
        return needle in run_getter({"type": "accessibility_tree"}, getter)
    except EvaluationFailed:
        return False


def test_nautilus_starts_under_xvfb_and_makes_a_folder(sandbox, tmp_path):
    sh(sandbox, "mkdir -p ~/Documents/Papers && touch ~/Documents/Papers/a.pdf")
    launch(sandbox, ["nautilus", "/home/user/Documents/Papers"])  # as OSWorld's tasks launch it
    window = window_of(sandbox, "^Papers$")
    # The folder lists once Tracker's miner (started on D-Bus demand) answers: seconds here, more
    # under load. Its accessibility tree shows the files, as OSWorld's accessibility_tree reads it.
    getter = ctx(sandbox, tmp_path)
    deadline = time.monotonic() + 90
    while not _lists(getter, 'name="a.pdf"'):
        if time.monotonic() > deadline:
            # Seen on one host (kernel 6.18): Nautilus 43 stays on "Loading…" for any folder,
            # spinning (its tree then takes minutes to walk); nothing of StateAct's is reached.
            listed = sh(sandbox, "gio list /home/user/Documents/Papers")
            assert "a.pdf" in listed, listed  # the folder itself is readable
            pytest.skip("Nautilus never finished loading a folder on this host")
        time.sleep(2)
    sh(sandbox, f"xdotool windowactivate --sync {window} key --delay 200 ctrl+shift+n")
    dialog = window_of(sandbox, "^New Folder$")
    sh(
        sandbox,
        f"xdotool windowactivate --sync {dialog} && sleep 0.5 "
        "&& xdotool type --delay 60 Reviewed && xdotool key Return",
    )
    wait_for(sandbox, "test -d ~/Documents/Papers/Reviewed && echo made", "the new folder", 30)
    listing = run_getter({"type": "list_directory", "path": "/home/user/Documents/Papers"}, getter)
    assert {"type": "directory", "name": "Reviewed", "children": []} in listing["children"]
    sh(sandbox, "pkill -x nautilus || true")


def tone_wav(path: Path, seconds: int = 60) -> Path:
    import wave

    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(bytes(2 * 8000 * seconds))
    return path


def test_vlc_playing_info_reads_the_playing_file_from_vlcs_web_interface(sandbox, tmp_path):
    sandbox.copy_in(tone_wav(tmp_path / "tone.wav"), "/home/user/Music/tone.wav")
    ctx_ = ctx(sandbox, tmp_path)
    spec = {"type": "vlc_playing_info", "dest": "status.xml"}
    assert run_getter(spec, ctx_) is None  # VLC is not running: nothing answers
    launch(sandbox, "VLC_VERBOSE=-1 vlc --no-audio --no-video-title-show /home/user/Music/tone.wav")
    playing = METRICS["is_vlc_playing"]
    rule = {"type": "file_name", "file_name": "tone.wav"}
    deadline, path = time.monotonic() + 60, None
    while time.monotonic() < deadline:
        path = run_getter(spec, ctx_)
        if path and playing(path, rule) == 1.0:
            break
        time.sleep(1)
    assert path and "<state>playing</state>" in Path(path).read_text()
    assert playing(path, rule) == 1.0
    assert playing(path, {"type": "file_name", "file_name": "other.wav"}) == 0.0
    sh(
        sandbox,
        "curl -fsS -u :password 'http://127.0.0.1:8080/requests/status.xml?command=pl_pause'",
    )
    time.sleep(1)
    assert playing(run_getter(spec, ctx_), rule) == 0.0  # paused
    # The web interface listens on the sandbox's loopback only (port 8080 is 1F90 in hex).
    listening = sh(sandbox, "awk '$4 == \"0A\" {print $2}' /proc/net/tcp /proc/net/tcp6")
    ports = [line for line in listening.split() if line.endswith(":1F90")]
    assert ports == ["0100007F:1F90"], ports
    sh(sandbox, "pkill -x vlc || true")
    # The agent stops VLC and serves the status a pass needs on VLC's port: it is not read.
    forged = Path(path).read_text().replace("<state>paused</state>", "<state>playing</state>")
    (tmp_path / "forged.xml").write_text(forged)
    sh(sandbox, "mkdir -p /tmp/forged/requests")
    sandbox.copy_in(tmp_path / "forged.xml", "/tmp/forged/requests/status.xml")
    server = "python3 -m http.server 8080 --bind 127.0.0.1 --directory /tmp/forged"
    launch(sandbox, server.split())
    wait_for(sandbox, "curl -fsS http://127.0.0.1:8080/requests/status.xml", "the forged server")
    assert run_getter(spec, ctx_) is None  # another program holds VLC's port
    sh(sandbox, "pkill -f '^python3 -m http.server' || true")


SHOP = """<!doctype html><meta charset=utf-8><title>Shop</title>
<ul class=crumbs><li class=catAllProducts><span>Kids</span></li>
<li class=catAllProducts><span> Toys </span></li><li class=other><span>Home</span></li></ul>
<a class=filter>Women</a><a class=filter>Nike</a>
<div class=route>SEA<div class=separator></div>NYC</div>
<div class=card><h3> Apply for TAP </h3></div><div class=card><p>none</p></div>
<div class=card><h3>June 01, 10:15 AM</h3></div>
<span class=chip>Black</span><span class=chip>On sale</span>
<h2 data-automation=geo> New York City Hotels </h2>
<form><input id=name value="James Smith"><input id=mail></form>
<p>Total: 42</p>
<script>document.getElementById('mail').value = 'james.smith@gmail.com'</script>
"""
PAGE_TWO = "<!doctype html><title>Two</title><a id=paper href='/paper.pdf'>The paper</a>"
PROFILE = """<!doctype html><title>Profile</title><div id=name>Ada Lovelace</div>
<table id=stats><tr><td>Citations</td><td>1234</td></tr></table>
<a id=first href='/two.html' data-kind='article'>First paper</a>"""


def serve(box, tmp_path, pages: dict[str, str]) -> None:
    for name, html in pages.items():
        page = tmp_path / name.replace("/", "_")
        page.write_text(html)
        box.copy_in(page, f"/home/user/site/{name}")
    sh(
        box,
        f"cd ~/site && (setsid python3 -m http.server {SITE_PORT} --bind 127.0.0.1 "
        ">/tmp/site.log 2>&1 &) && sleep 0.5",
    )


def open_tabs(box, urls: list[str]) -> None:
    launch(box, ["google-chrome", "--remote-debugging-port=1337"])
    launch(box, ["socat", "tcp-listen:9222,fork", "tcp:localhost:1337"])
    step = {"type": "chrome_open_tabs", "parameters": {"urls_to_open": urls}}
    run_setup([SetupStep.model_validate(step)], box, TASK, None)


def test_active_tab_html_parse_and_url_path_parse_read_the_tab_on_screen(sandbox, tmp_path):
    serve(sandbox, tmp_path, {"shop.html": SHOP, "two.html": PAGE_TWO, "profile.html": PROFILE})
    open_tabs(sandbox, [f"{SITE}/two.html", f"{SITE}/shop.html?kids&toys"])
    getter = ctx(sandbox, tmp_path)

    def parse(**spec):
        return run_getter(
            {"type": "active_tab_html_parse", "goto_prefix": "http://", **spec}, getter
        )

    assert parse(
        category="class",
        class_multiObject={"filter": {"1": "second", "5": "sixth"}},
        class_multiObject_child={"route": {"0": "start", "1": "end"}},
        class_multiObject_only_child={"card": {"0": "content", "1": "time"}},
        class_multiObject_search_exist={"chip": ["Black", "$25 - $60", "is_other_exist"]},
        class_singleObject={"filter": "first"},
    ) == {
        "second": "Nike",
        "sixth": "",
        "start": "SEA",
        "end": "NYC",
        "content": "Apply for TAP",
        "time": "June 01, 10:15 AM",
        "Black": True,
        "$25 - $60": False,
        "is_other_exist": True,
        "first": "Women",
    }
    assert parse(
        category="class&url",
        class_multiObject_li={"crumbs": ["Toys", "Kids"]},
        url_include_expected=["toys", "jerseys"],
    ) == {"toys": True, "kids": True, "is_other_exist": False, "jerseys": False}
    assert parse(
        category="xpath", xpathObject={"//h2[@data-automation='geo']": "city", "//h4": "none"}
    ) == {"city": "New York City Hotels", "none": ""}
    assert parse(
        category="input", inputObject={"//input[@id='name']": "name", "//input[@id='mail']": "m"}
    ) == {"name": "James Smith", "m": "james.smith@gmail.com"}
    assert parse(category="label", labelObject={"Total": "total"}) == {"total": "Total: 42"}
    # OSWorld's default prefix https:// names no open page: an empty result, as OSWorld's.
    spec = {"type": "active_tab_html_parse", "category": "label", "labelObject": {"Total": "t"}}
    assert run_getter(spec, getter) == {}

    # A new tab on a shop's URL whose path holds the shopping filters (the page itself is a 404).
    facets = "Men_regular_size_t,Price_discount_range/L,50_PERCENT_%20off%20%26%20more"
    step = {
        "type": "chrome_open_tabs",
        "parameters": {"urls_to_open": [f"{SITE}/shop/mens-clothing/{facets}"]},
    }
    run_setup([SetupStep.model_validate(step)], sandbox, TASK, None)
    keys = ["mens_clothing", "shirts", "Men_regular_size_t", "Price_discount_range"]
    spec = {"type": "url_path_parse", "goto_prefix": "http://", "parse_keys": keys}
    deadline, values = time.monotonic() + 20, None
    while time.monotonic() < deadline:
        values = run_getter(spec, getter)
        if values and values.get("mens_clothing"):
            break
        time.sleep(0.5)
    assert values == {
        "mens_clothing": True,
        "shirts": None,
        "short_sleeve": None,
        "Men_regular_size_t": "L",
        "Price_discount_range": "50_PERCENT_ off & more",
    }


def test_info_from_website_reads_a_page_opened_for_the_check(sandbox, tmp_path):
    getter = ctx(sandbox, tmp_path)
    tabs_before = len(run_getter({"type": "open_tabs_info"}, getter))
    spec = {
        "type": "info_from_website",
        "url": f"{SITE}/profile.html",
        "infos": [
            {"action": "inner_text", "selector": "#name"},
            {"action": "inner_text", "selector": "#stats > tbody > tr > td:nth-child(2)"},
            {"action": "attribute", "selector": "#first", "attribute": "data-kind"},
            {"action": "click_and_inner_text", "selector": ["#first", "#paper"]},
            {
                "action": "click_and_attribute",
                "selector": ["#first", "#paper"],
                "attribute": "href",
            },
        ],
        "backups": ["backup"],
    }
    values = run_getter(spec, getter)
    assert values == ["Ada Lovelace", "1234", "article", "The paper", "/paper.pdf"]
    assert len(run_getter({"type": "open_tabs_info"}, getter)) == tabs_before  # its tab is closed
    unreachable = {**spec, "url": "http://127.0.0.1:9/profile.html"}
    assert run_getter(unreachable, getter) == ["backup"]  # OSWorld's backups when it cannot read

    # With Chrome closed (the agent quit it) the getter starts it, as OSWorld's does.
    sh(sandbox, "pkill -x chrome; pkill -x socat; while pgrep -x chrome; do sleep 0.2; done")
    values = run_getter({**spec, "infos": spec["infos"][:1]}, getter)
    assert values == ["Ada Lovelace"]


def test_pdf_from_url_prints_the_page_with_the_desktops_chrome(sandbox, tmp_path):
    from pypdf import PdfReader

    getter = ctx(sandbox, tmp_path)
    spec = {"type": "pdf_from_url", "path": f"{SITE}/profile.html", "dest": "gold.pdf"}
    path = run_getter(spec, getter)
    assert path and Path(path).name == "gold.pdf"
    assert "Ada Lovelace" in PdfReader(path).pages[0].extract_text()
    assert not sh(sandbox, "ls -d /tmp/stateact-pdf-* 2>/dev/null || true").strip()  # cleaned up
    # A page that cannot be loaded gives OSWorld's placeholder PDF after its three tries.
    path = run_getter({**spec, "path": "http://127.0.0.1:9/none.html"}, getter)
    assert Path(path).read_text() == "%PDF-1.4\n%EOF\n"


def eval_extension(path: Path) -> Path:
    """A VS Code extension like OSWorld's eval extension: its `OpenProject` command writes the
    open folder's name to ~/OpenProject.txt."""
    package = {
        "name": "eval",
        "publisher": "stateact",
        "version": "0.0.1",
        "engines": {"vscode": "^1.50.0"},
        "main": "./extension.js",
        "activationEvents": ["onCommand:stateact.openProject"],
        "contributes": {"commands": [{"command": "stateact.openProject", "title": "OpenProject"}]},
    }
    script = """const vscode = require('vscode'), fs = require('fs'), os = require('os');
exports.activate = (context) => context.subscriptions.push(vscode.commands.registerCommand(
  'stateact.openProject', () => {
    const folders = vscode.workspace.workspaceFolders || [];
    fs.writeFileSync(os.homedir() + '/OpenProject.txt', folders.length ? folders[0].name : '');
  }));
"""
    manifest = (
        '<?xml version="1.0" encoding="utf-8"?><PackageManifest Version="2.0.0" '
        'xmlns="http://schemas.microsoft.com/developer/vsx-schema/2011"><Metadata>'
        '<Identity Language="en-US" Id="eval" Version="0.0.1" Publisher="stateact"/>'
        "<DisplayName>eval</DisplayName><Description>x</Description></Metadata>"
        '<Installation><InstallationTarget Id="Microsoft.VisualStudio.Code"/></Installation>'
        "<Dependencies/><Assets>"
        '<Asset Type="Microsoft.VisualStudio.Code.Manifest" Path="extension/package.json"/>'
        "</Assets></PackageManifest>"
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("extension.vsixmanifest", manifest)
        archive.writestr("extension/package.json", json.dumps(package))
        archive.writestr("extension/extension.js", script)
    return path


def test_vscode_config_runs_the_extension_command_and_reads_its_file(sandbox, tmp_path):
    sandbox.copy_in(eval_extension(tmp_path / "eval.vsix"), "/tmp/eval.vsix")
    sh(sandbox, "code --install-extension /tmp/eval.vsix && mkdir -p ~/project", timeout=180)
    launch(sandbox, ["code", "/home/user/project"])
    window = window_of(sandbox, "project - Visual Studio Code")
    # The workbench takes commands once its extension host is up (tens of seconds after the title
    # shows here; an agent's task ends long after that).
    ready = "grep -rl 'Eager extensions activated' ~/.config/Code/logs 2>/dev/null"
    wait_for(sandbox, ready, "VS Code's extension host", 150)
    time.sleep(2)
    spec = {
        "type": "vscode_config",
        "vscode_extension_command": "OpenProject",
        "path": "/home/user/OpenProject.txt",
        "dest": "OpenProject.txt",
    }
    getter = ctx(sandbox, tmp_path)
    sh(sandbox, f"xdotool windowactivate --sync {window}")  # the tasks' postconfig step
    path = run_getter(spec, getter)
    assert path and Path(path).read_text() == "project"
    assert METRICS["compare_config"](path, {"expected": "project"}) == 1.0


def test_a_devtools_endpoint_chrome_does_not_hold_is_not_believed(sandbox, tmp_path):
    # The agent quits Chrome and serves a DevTools answer of its own on 9222: nothing is read.
    sh(sandbox, "pkill -x chrome; pkill -x socat; while pgrep -x chrome; do sleep 0.2; done")
    version = {"Browser": "Chrome/1", "webSocketDebuggerUrl": "ws://127.0.0.1:9222/devtools/x"}
    (tmp_path / "version").write_text(json.dumps(version))
    sh(sandbox, "mkdir -p /tmp/fake-devtools/json")
    sandbox.copy_in(tmp_path / "version", "/tmp/fake-devtools/json/version")
    launch(
        sandbox,
        "python3 -m http.server 9222 --bind 127.0.0.1 --directory /tmp/fake-devtools".split(),
    )
    wait_for(sandbox, "curl -fsS http://127.0.0.1:9222/json/version", "the fake endpoint")
    with pytest.raises(StateActError, match="no Chrome answers"):
        run_getter({"type": "open_tabs_info"}, ctx(sandbox, tmp_path))
    sh(sandbox, "pkill -f '^python3 -m http.server' || true")
