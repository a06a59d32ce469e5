"""Desktop getters (GIMP config, terminal text, wallpaper, default player, command errors) on a
folder of machine files plus canned command answers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image
from pptx import Presentation
from pptx.oxml import parse_xml
from pptx.oxml.ns import nsdecls

from harness.kernel.core import StateActError
from tasks.getters import GetterContext, RootDirSource, SandboxSource, run_getter
from tasks.metrics.general import check_include_exclude
from tasks.metrics.image_similarity import compare_images
from tasks.metrics.images import check_config_status
from tasks.schema import load_task


class CannedSource(RootDirSource):
    """Machine files under a folder; commands answered from a table keyed by a command fragment."""

    def __init__(self, root: Path, answers: dict[str, dict]):
        super().__init__(root)
        self.answers = answers
        self.commands: list[str] = []

    def run_command(self, command, shell):
        self.commands.append(command)
        for fragment, answer in self.answers.items():
            if fragment in command:
                return answer
        return {"output": f"bash: unknown command: {command}", "returncode": 127}


def context(tmp_path: Path, answers: dict | None = None) -> GetterContext:
    path = tmp_path / "task.json"
    path.write_text(
        json.dumps({"id": "d-1", "instruction": "x", "evaluator": {"func": "infeasible"}})
    )
    source = CannedSource(tmp_path / "root", answers or {})
    return GetterContext(
        task=load_task(path), source=source, cache_dir=None, work_dir=tmp_path / "work"
    )


def test_gimp_config_file_feeds_check_config_status(tmp_path):
    config = tmp_path / "root/home/user/.config/GIMP/2.10/gimprc"
    config.parent.mkdir(parents=True)
    config.write_text('(theme "Light")\n(undo-levels 100)\n')
    got = run_getter(
        {"type": "gimp_config_file", "file_name": "gimprc", "dest": "gimprc"}, context(tmp_path)
    )
    assert (
        check_config_status(got, {"type:": "key-value", "key": "undo-levels", "value": "100"})
        == 1.0
    )
    assert (
        run_getter({"type": "gimp_config_file", "file_name": "sessionrc"}, context(tmp_path))
        is None
    )
    with pytest.raises(StateActError, match="file_name"):
        run_getter({"type": "gimp_config_file", "file_name": "../x"}, context(tmp_path))


def test_terminal_output_comes_from_the_accessibility_tree(tmp_path):
    tree = (
        '<desktop-frame name="main"><application name="gnome-terminal-server">'
        '<frame name="user@host: ~"><terminal name="Terminal" '
        'states="focused">user@host:~$ stty size\n43 132\n'
        '</terminal></frame></application><application name="gimp"><label '
        'name="x">54</label></application>'
        "</desktop-frame>"
    )
    ctx = context(tmp_path, {"python3 -c": {"output": tree, "returncode": 0}})
    output = run_getter({"type": "vm_terminal_output"}, ctx)
    assert check_include_exclude(output, {"include": ["43 132"], "exclude": []}) == 1.0
    assert check_include_exclude(output, {"include": ["54"], "exclude": []}) == 0.0
    no_terminal = context(tmp_path, {"python3 -c": {"output": "<desktop-frame/>", "returncode": 0}})
    with pytest.raises(StateActError, match="no terminal window"):
        run_getter({"type": "vm_terminal_output"}, no_terminal)


def test_wallpaper_is_fetched_from_the_gsettings_uri(tmp_path):
    picture = tmp_path / "root/home/user/Pictures/my wall.png"
    picture.parent.mkdir(parents=True)
    Image.new("RGB", (4, 4), (1, 2, 3)).save(picture)
    uri = "'file:///home/user/Pictures/my%20wall.png'\n"
    ctx = context(tmp_path, {"picture-uri": {"output": uri, "returncode": 0}})
    got = run_getter({"type": "vm_wallpaper", "dest": "background.png"}, ctx)
    assert Path(got).name == "background.png" and Path(got).read_bytes() == picture.read_bytes()
    unset = context(tmp_path, {"picture-uri": {"output": "''\n", "returncode": 0}})
    assert run_getter({"type": "vm_wallpaper", "dest": "b.png"}, unset) is None
    with pytest.raises(StateActError, match="gsettings"):
        run_getter({"type": "vm_wallpaper"}, context(tmp_path))


def test_default_video_player_and_command_error(tmp_path):
    ctx = context(
        tmp_path,
        {
            "xdg-mime": {"output": "vlc.desktop\n", "returncode": 0},
            "InstructorEmbedding": {"output": "ModuleNotFoundError: No module", "returncode": 1},
            "import os": {"output": "", "returncode": 0},
        },
    )
    assert run_getter({"type": "default_video_player"}, ctx) == "vlc.desktop"
    failing = {
        "type": "vm_command_error",
        "command": ["python", "-c", "from InstructorEmbedding import X"],
    }
    assert "ModuleNotFoundError" in run_getter(failing, ctx)
    assert run_getter({"type": "vm_command_error", "command": "python -c 'import os'"}, ctx) == ""


def deck_with_background(path: Path, picture: Path) -> None:
    deck = Presentation()
    blank = deck.slide_layouts[6]
    deck.slides.add_slide(blank)
    slide = deck.slides.add_slide(blank)
    _, rel_id = slide.part.get_or_add_image_part(str(picture))
    background = parse_xml(
        f'<p:bg {nsdecls("p", "a", "r")}><p:bgPr><a:blipFill><a:blip r:embed="{rel_id}"/>'
        "<a:stretch><a:fillRect/></a:stretch></a:blipFill><a:effectLst/></p:bgPr></p:bg>"
    )
    slide._element.cSld.insert(0, background)
    deck.save(path)


def test_background_image_in_slide(tmp_path):
    picture = tmp_path / "landscape.png"
    # At least SSIM's 7-pixel window on each side: compare_images scores smaller pictures 0.
    Image.new("RGB", (16, 12), (10, 200, 30)).save(picture)
    deck = tmp_path / "root/home/user/Desktop/deck.pptx"
    deck.parent.mkdir(parents=True)
    deck_with_background(deck, picture)
    spec = {
        "type": "background_image_in_slide",
        "ppt_file_path": "/home/user/Desktop/deck.pptx",
        "dest": "bg.png",
    }
    got = run_getter({**spec, "slide_index": 1}, context(tmp_path))
    assert compare_images(got, str(picture)) == 1.0
    assert run_getter({**spec, "slide_index": 0}, context(tmp_path)) is None
    assert run_getter({**spec, "slide_index": 5}, context(tmp_path)) is None


class HostShell:
    """Runs the harness's exec argv with this machine's bash: real redirections, no sandbox."""

    def exec(self, argv, timeout=120.0, user="user"):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return done.returncode, done.stdout + done.stderr


def test_command_error_is_the_commands_stderr_as_in_osworld(tmp_path):
    """OSWorld's getter returns the command's stderr: a missing module's traceback, which a
    `check_include_exclude` rule excluding "Error:" must see (stdout alone is empty)."""
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"instruction": "x", "evaluator": {"func": "infeasible"}}))
    ctx = GetterContext(load_task(task), SandboxSource(HostShell()), None, tmp_path / "work")
    missing = [sys.executable, "-c", "import no_such_module_here"]
    error = run_getter({"type": "vm_command_error", "command": missing}, ctx)
    assert "ModuleNotFoundError: No module named 'no_such_module_here'" in error
    assert check_include_exclude(error, {"include": [], "exclude": ["Error:"]}) == 0.0
    spoken = "echo out; echo err >&2"
    assert run_getter({"type": "vm_command_error", "command": spoken}, ctx).strip() == "err"
