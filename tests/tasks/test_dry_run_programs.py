"""The dry run names a program the image lacks, and a task that needs root, as blockers: programs
come from the tasks' execute/launch steps and command getters, and each image declares its own."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sandboxes.images.apps import declared_apps
from sandboxes.images.build import DECLARATION_FILES, image_ref
from sandboxes.images.programs import declared_programs, image_programs
from tasks.programs import required_programs, root_reasons, shell_programs
from tasks.schema import load_task
from tasks.support import dry_run_record
from tests.conftest import OSWORLD_EXAMPLES, REPO, require_image

needs_examples = pytest.mark.skipif(
    not OSWORLD_EXAMPLES.is_dir(), reason="the OSWorld task files are not here"
)


def programs(text: str) -> list[str]:
    return list(shell_programs(text))


def test_the_programs_of_shell_text_are_its_command_words():
    # 3ce045a0's check: bc inside a quoted command substitution, after `timeout 10`.
    text = (
        "TEXT_SCALE=$(timeout 10 gsettings get org.gnome.desktop.interface text-scaling-factor "
        "2>/dev/null | grep -oE '[0-9]+' | head -1); if [ -n \"$TEXT_SCALE\" ] && "
        '[ "$(echo "$TEXT_SCALE > 1.0" | bc)" -eq 1 ]; then echo "on"; fi'
    )
    assert sorted(programs(text)) == ["bc", "grep", "gsettings", "head"]
    assert programs("pulseaudio --start\npactl list sinks | awk '{print $5}'") == [
        "pulseaudio",
        "pactl",
        "awk",
    ]
    assert programs("sudo -S apt-get install -y x; /usr/bin/thunderbird") == [
        "apt-get",
        "thunderbird",
    ]
    assert programs("for f in *.txt; do wc -l $f; done") == ["wc"]
    # Builtins, variables and the task's own scripts are not programs an image provides.
    assert programs("cd /tmp && ./setup.sh && $EDITOR x && export A=1 && [ -f x ]") == []
    assert programs("bash eval.sh") == ["bash"]
    assert programs("bash -c 'xsel --clipboard --output'") == ["bash", "xsel"]
    assert programs("echo 'unbalanced") == []  # broken quoting: nothing guessed


def write_task(folder: Path, **fields) -> Path:
    data = {"id": "t", "instruction": "Do it.", "evaluator": {"func": "exact_match"}, **fields}
    path = folder / "t.json"
    path.write_text(json.dumps(data))
    return path


def test_a_program_missing_from_the_image_is_a_blocker(tmp_path):
    check = {"type": "vm_command_line", "command": "echo '1.5 > 1' | bc", "shell": True}
    path = write_task(
        tmp_path,
        config=[{"type": "execute", "parameters": {"command": ["spotifyd", "--version"]}}],
        evaluator={"func": "exact_match", "result": check},
    )
    assert required_programs(load_task(path)) == ["spotifyd", "bc"]
    images = tmp_path / "images"
    subprocess.run(["cp", "-r", str(REPO / "sandboxes" / "images"), str(images)], check=True)
    listed = (images / "desktop" / "programs.txt").read_text().splitlines()
    (images / "desktop" / "programs.txt").write_text("\n".join(p for p in listed if p != "bc"))
    apps = declared_apps("desktop", images)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STATEACT_IMAGES_DIR", str(images))
        reasons = dry_run_record(path, None, apps=apps)["reasons"]
    assert reasons == [
        "program missing from the image desktop: spotifyd",
        "program missing from the image desktop: bc",
    ]
    # The image's own list has bc; unchecked without an image (apps=None).
    assert dry_run_record(path, None, apps=apps)["reasons"] == [
        "program missing from the image desktop: spotifyd"
    ]
    assert dry_run_record(path, None, apps=None)["runnable"]
    # The list is a declaration: editing it never changes the image's hash.
    assert "programs.txt" in DECLARATION_FILES
    assert image_ref("desktop", images) == image_ref("desktop")


@needs_examples
def test_tasks_whose_check_reads_root_state_need_agent_sudo():
    zone = load_task(OSWORLD_EXAMPLES / "os/b6781586-6346-41cd-935a-a6b1487918fc.json")
    assert root_reasons(zone) == [
        "its check reads the system time zone (timedatectl), which only root sets"
    ]
    path = zone.base_dir / "b6781586-6346-41cd-935a-a6b1487918fc.json"
    apps = declared_apps("desktop")
    blocked = dry_run_record(path, None, apps=apps)
    assert blocked["reasons"] == [
        "needs root: its check reads the system time zone (timedatectl), which only root sets; "
        "add --agent-sudo"
    ]
    assert dry_run_record(path, None, apps=apps, agent_sudo=True)["runnable"]
    user = load_task(OSWORLD_EXAMPLES / "os/5812b315-e7bd-4265-b51f-863c02174c28.json")
    assert [r.split(" (")[0] for r in root_reasons(user)] == [
        "its check reads the system's user accounts"
    ]
    volume = load_task(OSWORLD_EXAMPLES / "os/28cc3b7e-b194-4bc9-8353-d04c0f4d56d2.json")
    assert root_reasons(volume) == []


@pytest.mark.docker
def test_the_declared_programs_are_the_images():
    """programs.txt is written from the built image; it must list exactly what the image has
    (regenerate it with `python -m sandboxes.images.programs desktop`)."""
    for name in ("base", "desktop", "osworld2"):
        require_image(name)
        assert set(image_programs(image_ref(name))) == declared_programs(name), name
    for program in ("bc", "pactl", "pulseaudio", "timedatectl", "gsettings", "google-chrome"):
        assert program in declared_programs("desktop")
