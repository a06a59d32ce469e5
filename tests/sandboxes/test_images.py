"""Sandbox images: content-hash refs, the `stateact image` command, and what the built images
contain."""

from __future__ import annotations

import argparse
import io
import shutil
import time
from pathlib import Path

import pytest
from rich.console import Console

from harness.cli import image as image_cli
from harness.kernel.core import StateActError
from sandboxes.images import build

DEFINITIONS = Path(build.__file__).parent


@pytest.fixture
def definitions(tmp_path: Path) -> Path:
    """A private copy of the image definitions that a test may edit."""
    for name in build.IMAGE_NAMES:
        shutil.copytree(DEFINITIONS / name, tmp_path / name)
    return tmp_path


def test_ref_is_stable_and_matches_an_identical_copy(definitions):
    first = build.image_ref("base", definitions)
    assert first == build.image_ref("base", definitions)
    assert first == build.image_ref("base")
    assert first.startswith("stateact-base:") and len(first.split(":")[1]) == 12
    assert build.image_ref("desktop", definitions) == build.image_ref("desktop")


def test_base_input_change_changes_base_and_desktop(definitions):
    base, desktop = build.image_ref("base", definitions), build.image_ref("desktop", definitions)
    wheels = definitions / "base" / "wheels.txt"
    wheels.write_text(wheels.read_text().replace("XlsxWriter==3.3.1", "XlsxWriter==3.3.0"))
    assert build.image_ref("base", definitions) != base
    assert build.image_ref("desktop", definitions) != desktop


def test_desktop_input_change_leaves_base_alone(definitions):
    base, desktop = build.image_ref("base", definitions), build.image_ref("desktop", definitions)
    with open(definitions / "desktop" / "packages.txt", "a") as handle:
        handle.write("htop\n")
    assert build.image_ref("base", definitions) == base
    assert build.image_ref("desktop", definitions) != desktop


def test_osworld2_builds_on_desktop_and_a_change_of_either_rebuilds_it(definitions):
    osworld2 = build.image_ref("osworld2", definitions)
    with open(definitions / "osworld2" / "media.txt", "a") as handle:
        handle.write("audacity\n")
    changed = build.image_ref("osworld2", definitions)
    assert changed != osworld2 and build.image_ref("desktop", definitions) == build.image_ref(
        "desktop"
    )
    with open(definitions / "desktop" / "apps.txt", "a") as handle:
        handle.write("htop\n")
    rebuilt = build.image_ref("osworld2", definitions)
    assert rebuilt != changed  # its parent's tag is an input
    # what it declares is not built into it: editing the list rebuilds nothing
    with open(definitions / "osworld2" / "osworld-apps.txt", "a") as handle:
        handle.write("audacity: Audacity\n")
    assert build.image_ref("osworld2", definitions) == rebuilt


def test_env_override_and_mirror_are_inputs(definitions, monkeypatch):
    real = build.image_ref("base")
    (definitions / "base" / "extra.txt").write_text("new input\n")
    monkeypatch.setenv(build.DEFINITIONS_ENV, str(definitions))
    assert build.image_ref("base") != real
    before = build.image_ref("base")
    monkeypatch.setenv(build.MIRROR_ENV, "http://mirror.example/debian")
    assert build.debian_mirror() == "http://mirror.example/debian"
    assert build.image_ref("base") != before


def test_bad_names_and_paths_are_user_errors(tmp_path):
    with pytest.raises(StateActError, match="unknown image"):
        build.image_ref("windows")
    with pytest.raises(StateActError, match="does not exist"):
        build.image_ref("base", tmp_path / "missing")
    with pytest.raises(StateActError, match="no Dockerfile"):
        (tmp_path / "base").mkdir()
        build.image_ref("base", tmp_path)


def test_host_apt_uri_reads_deb822_and_one_line_sources(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://m.example/debian/\nSuites: bookworm bookworm-updates\n\n"
        "Types: deb\nURIs: http://s.example/debian-security\nSuites: bookworm-security\n"
    )
    assert build.host_apt_uri("bookworm", tmp_path) == "http://m.example/debian"
    assert build.host_apt_uri("bookworm-security", tmp_path) == "http://s.example/debian-security"
    (tmp_path / "sources.list.d" / "debian.sources").unlink()
    (tmp_path / "sources.list").write_text(
        "# x\ndeb [arch=amd64] http://o.example/debian bookworm main\n"
    )
    assert build.host_apt_uri("bookworm", tmp_path) == "http://o.example/debian"
    assert build.host_apt_uri("trixie", tmp_path) is None


def test_read_list_drops_comments_and_blanks(tmp_path):
    listing = tmp_path / "packages.txt"
    listing.write_text("# header\npython3\n\n  sqlite3  # why\n")
    assert build.read_list(listing) == ["python3", "sqlite3"]


def test_no_engine_names_the_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    with pytest.raises(StateActError, match="install-engine.sh"):
        build.docker_client()


def test_cli_parses_build_and_list():
    parser = argparse.ArgumentParser(prog="stateact")
    image_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["image", "build", "desktop", "--force"])
    assert (args.image_command, args.names, args.force, args.func) == (
        "build",
        ["desktop"],
        True,
        image_cli.run,
    )
    assert parser.parse_args(["image", "list"]).image_command == "list"
    with pytest.raises(StateActError, match="unknown image"):
        image_cli.build_command(["nope"])
    with pytest.raises(StateActError, match="stateact image build"):
        image_cli.run(parser.parse_args(["image"]))


# --- with a Docker engine ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def client():
    try:
        return build.docker_client()
    except StateActError as exc:
        pytest.skip(str(exc))


def _container(client, name: str):
    ref = build.ensure_images([name], log=lambda line: None)[-1]
    return client.containers.run(
        ref, ["sleep", "infinity"], detach=True, network_mode="none", user="user", init=True
    )


def _sh(container, script: str) -> tuple[int, str]:
    code, output = container.exec_run(["bash", "-lc", script], user="user")
    return code, output.decode(errors="replace").strip()


@pytest.fixture(scope="module")
def base_container(client):
    container = _container(client, "base")
    yield container
    container.remove(force=True)


@pytest.fixture(scope="module")
def desktop_container(client):
    container = _container(client, "desktop")
    yield container
    container.remove(force=True)


@pytest.mark.docker
def test_base_runs_as_user_offline_with_document_libraries(client, base_container):
    assert _sh(base_container, "id -un") == (0, "user")
    assert _sh(base_container, "echo $HOME; pwd; echo $LANG") == (
        0,
        "/home/user\n/home/user\nC.UTF-8",
    )
    code, out = _sh(
        base_container, "python3 -c 'import openpyxl, docx, pptx, lxml, pexpect, PIL, xlsxwriter'"
    )
    assert code == 0, out
    code, out = _sh(base_container, "ls /sys/class/net")
    assert out.split() == ["lo"]
    assert base_container.attrs["HostConfig"]["NetworkMode"] == "none"
    assert (
        client.images.get(build.image_ref("base")).id
        == client.images.get("stateact-base:latest").id
    )


@pytest.mark.docker
def test_list_shows_the_built_base(client, base_container):
    buffer = io.StringIO()
    image_cli.list_command(Console(file=buffer, width=200))
    row = next(line for line in buffer.getvalue().splitlines() if "stateact-base:" in line)
    assert build.image_ref("base") in row and "yes" in row and "MB" in row


@pytest.mark.docker
def test_ensure_images_does_not_rebuild(client, base_container):
    lines: list[str] = []
    started = time.monotonic()
    assert build.ensure_images(["base"], log=lines.append) == [build.image_ref("base")]
    assert lines == [] and time.monotonic() - started < 10


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_desktop_has_its_programs_and_modules(desktop_container):
    code, out = _sh(
        desktop_container,
        "command -v soffice Xvfb xdotool openbox chromium wmctrl xclip import pdftotext",
    )
    assert code == 0, out
    code, out = _sh(
        desktop_container, "python3 -c 'import playwright, markdownify, pyatspi, bs4, pptx'"
    )
    assert code == 0, out
    assert _sh(desktop_container, "id -un")[1] == "user"


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_desktop_starts_idempotently_and_opens_calc(desktop_container):
    code, out = _sh(desktop_container, "stateact-desktop start")
    assert code == 0, out
    assert "DISPLAY=:1" in out and "DBUS_SESSION_BUS_ADDRESS" in out
    started = time.monotonic()
    assert _sh(desktop_container, "stateact-desktop start")[0] == 0
    assert time.monotonic() - started < 3
    env = "source /tmp/stateact-desktop.env; "
    # OSWorld's screen by default
    assert _sh(desktop_container, env + "xdotool getdisplaygeometry") == (0, "1920 1080")
    assert _sh(desktop_container, env + "wmctrl -m | head -1") == (0, "Name: Openbox")

    code, out = _sh(
        desktop_container,
        "python3 -c \"import openpyxl; wb = openpyxl.Workbook(); wb.active['A1'] = "
        "7; wb.save('/home/user/x.xlsx')\"",
    )
    assert code == 0, out
    _sh(
        desktop_container,
        env + "setsid soffice --calc /home/user/x.xlsx </dev/null >/tmp/soffice.log 2>&1 &",
    )
    # LibreOffice's first start (profile creation) takes 5-13 s here; leave room for a busy host.
    deadline, titles = time.monotonic() + 30, ""
    while time.monotonic() < deadline and "x.xlsx" not in titles:
        titles = _sh(desktop_container, env + "wmctrl -l")[1]
        time.sleep(0.5)
    assert "x.xlsx - LibreOffice Calc" in titles, _sh(desktop_container, "cat /tmp/soffice.log")[1]
    assert _sh(desktop_container, env + "xdotool search --onlyvisible --name x.xlsx")[0] == 0
    # A first-start dialog (tip of the day, what's new) would be a second managed window.
    time.sleep(2)
    titles = _sh(desktop_container, env + "wmctrl -l")[1]
    assert len(titles.splitlines()) == 1, titles
