"""The list_directory and audio_in_slide getters, over a --root folder and a machine running
commands."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pptx
import pytest

from harness.cli import main
from harness.kernel.core import StateActError
from tasks.getters import GetterContext, RootDirSource, SandboxSource, run_getter
from tasks.schema import Task


class HostShell:
    """Runs the getters' commands with this host's bash (stdout and stderr combined, as `exec`)."""

    def __init__(self, root: Path):
        self.root = root

    def exec(self, argv, timeout=120.0, user="user"):
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return done.returncode, done.stdout

    def copy_out(self, sandbox_path, host_path):
        host_path.write_bytes(Path(sandbox_path).read_bytes())


def context(tmp_path: Path, source) -> GetterContext:
    task = Task.model_validate(
        {"id": "t", "instruction": "-", "evaluator": {"func": "exact_match"}, "base_dir": tmp_path}
    )
    return GetterContext(task, source, None, tmp_path / "work")


def make_tree(base: Path) -> Path:
    folder = base / "home/user/Pictures"
    (folder / "old").mkdir(parents=True)
    (folder / "a.jpg").write_bytes(b"a")
    (folder / "old/b.jpg").write_bytes(b"b")
    (folder / "link").symlink_to("/etc")
    return folder


def sort_tree(tree: dict) -> dict:
    children = tree.get("children")
    if children is None:
        return tree
    return {**tree, "children": sorted((sort_tree(c) for c in children), key=json.dumps)}


def test_list_directory_from_a_root_folder_and_from_a_machine_agree(tmp_path):
    folder = make_tree(tmp_path / "root")
    spec = {"type": "list_directory", "path": "/home/user/Pictures"}
    from_root = run_getter(spec, context(tmp_path, RootDirSource(tmp_path / "root")))
    assert sort_tree(from_root) == {
        "type": "directory",
        "name": "Pictures",
        "children": [
            {"type": "directory", "name": "old", "children": [{"type": "file", "name": "b.jpg"}]},
            {"type": "file", "name": "a.jpg"},
            {"type": "file", "name": "link"},  # a link is listed, never followed
        ],
    }
    machine = SandboxSource(HostShell(tmp_path))
    from_machine = run_getter({**spec, "path": str(folder)}, context(tmp_path, machine))
    assert sort_tree(from_machine) == sort_tree(from_root)
    with pytest.raises(StateActError, match="is not a folder"):
        run_getter({**spec, "path": "/home/user/none"}, context(tmp_path, RootDirSource(tmp_path)))
    with pytest.raises(StateActError, match="is not a folder"):
        run_getter({**spec, "path": str(tmp_path / "none")}, context(tmp_path, machine))


def deck_with_audio(path: Path, target: str, member: bytes | None = None) -> None:
    deck = pptx.Presentation()
    deck.slides.add_slide(deck.slide_layouts[6])
    deck.save(path)
    with zipfile.ZipFile(path) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    rels = parts["ppt/slides/_rels/slide1.xml.rels"].decode()
    link = ' TargetMode="External"' if target.startswith("file://") else ""
    audio = (
        '<Relationship Id="rId99" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        f'relationships/audio" Target="{target}"{link}/>'
    )
    parts["ppt/slides/_rels/slide1.xml.rels"] = rels.replace(
        "</Relationships>", audio + "</Relationships>"
    ).encode()
    if member is not None:
        parts["ppt/media/sound.wav"] = member
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)


def test_audio_in_slide_extracts_embedded_and_fetches_linked_audio(tmp_path):
    root = tmp_path / "root"
    (root / "home/user").mkdir(parents=True)
    deck_with_audio(root / "home/user/talk.pptx", "../media/sound.wav", b"RIFF-embedded")
    (root / "home/user/linked.wav").write_bytes(b"RIFF-linked")
    deck_with_audio(root / "home/user/linked.pptx", "file:///home/user/linked.wav")
    ctx = context(tmp_path, RootDirSource(root))
    spec = {"type": "audio_in_slide", "slide_index": 0, "dest": "planet.wav"}
    embedded = run_getter({**spec, "ppt_file_path": "/home/user/talk.pptx"}, ctx)
    assert Path(embedded).read_bytes() == b"RIFF-embedded"
    linked = run_getter({**spec, "ppt_file_path": "/home/user/linked.pptx"}, ctx)
    assert Path(linked).name == "planet.wav" and Path(linked).read_bytes() == b"RIFF-linked"
    assert (
        run_getter({**spec, "ppt_file_path": "/home/user/talk.pptx", "slide_index": 4}, ctx) is None
    )
    assert run_getter({**spec, "ppt_file_path": "/home/user/absent.pptx"}, ctx) is None


def test_check_moved_jpgs_scores_a_listed_folder_through_stateact_check(tmp_path, capsys):
    make_tree(tmp_path / "root")
    task = {
        "id": "jpgs",
        "instruction": "-",
        "evaluator": {
            "func": "check_moved_jpgs",
            "result": {"type": "list_directory", "path": "/home/user/Pictures"},
            "expected": {"type": "rule", "rules": {"expected": ["a.jpg", "old", "link"]}},
        },
    }
    (tmp_path / "task.json").write_text(json.dumps(task))
    assert main(["check", str(tmp_path / "task.json"), "--root", str(tmp_path / "root")]) == 0
    assert json.loads(capsys.readouterr().out)["score"] == 1.0
