"""OSWorld getters over files and folders of the machine: list_directory (info.py),
audio_in_slide (impress.py) and content_from_vm_file (file.py)."""

from __future__ import annotations

import posixpath
import shlex
import zipfile
from pathlib import Path
from typing import Any

from lxml import etree

from harness.kernel.core import StateActError
from sandboxes.base import SANDBOX_HOME
from tasks.getters.registry import GetterContext, RootDirSource, getter, work_path

RELS_NS = "http://schemas.openxmlformats.org/package/2006/relationships"


def tree_of_host_folder(folder: Path) -> dict:
    """OSWorld's directory tree: {"type": "directory", "name", "children"}, files as {"type",
    "name"}. Symbolic links are listed as files, never followed (a link may point out of the
    state)."""
    tree: dict[str, Any] = {"type": "directory", "name": folder.name, "children": []}
    try:
        for entry in sorted(folder.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                tree["children"].append(tree_of_host_folder(entry))
            else:
                tree["children"].append({"type": "file", "name": entry.name})
    except OSError as exc:
        return {"error": str(exc)}
    return tree


def tree_from_find(root_name: str, lines: list[str]) -> dict:
    """The tree from `find -printf '%y %P'` lines ("d sub/dir", "f sub/dir/file")."""
    root: dict[str, Any] = {"type": "directory", "name": root_name, "children": []}
    folders = {"": root}
    for line in sorted(lines, key=lambda item: item[2:]):
        kind, relative = line[:1], line[2:]
        parent = folders.get(posixpath.dirname(relative))
        if parent is None or not relative:
            continue
        name = posixpath.basename(relative)
        if kind == "d":
            node = {"type": "directory", "name": name, "children": []}
            folders[relative] = node
        else:
            node = {"type": "file", "name": name}
        parent["children"].append(node)
    return root


@getter("list_directory")
def get_list_directory(spec: dict, ctx: GetterContext) -> dict:
    """The folder `path` of the machine as a tree of names."""
    path = spec.get("path")
    if not isinstance(path, str):
        raise StateActError("list_directory getter needs a 'path'")
    name = posixpath.basename(path.rstrip("/"))
    if isinstance(ctx.source, RootDirSource):
        folder = ctx.source.host_path(path)
        if not folder.is_dir():
            raise StateActError(f"{path} is not a folder")
        return tree_of_host_folder(folder)
    command = (
        f"test -d {shlex.quote(path)} && find {shlex.quote(path)} -mindepth 1 -printf '%y %P\\n'"
    )
    done = ctx.source.run_command(command, True)
    if done.get("returncode", 0) != 0:
        raise StateActError(f"{path} is not a folder")
    return tree_from_find(name, [line for line in done["output"].splitlines() if line])


@getter("audio_in_slide")
def get_audio_in_slide(spec: dict, ctx: GetterContext) -> str | None:
    """The audio of slide `slide_index` (0-based) of the deck `ppt_file_path`: the embedded file
    extracted, or the linked file:// target fetched into `dest`; None when the slide has none."""
    deck_path, dest = spec["ppt_file_path"], spec["dest"]
    slide = int(spec["slide_index"]) + 1
    deck = ctx.source.fetch_file(deck_path, work_path(ctx, posixpath.basename(deck_path)))
    if deck is None:
        return None
    with zipfile.ZipFile(deck) as archive:
        rels_name = f"ppt/slides/_rels/slide{slide}.xml.rels"
        if rels_name not in archive.namelist():
            return None
        for rel in etree.fromstring(archive.read(rels_name)).findall(f"{{{RELS_NS}}}Relationship"):
            if "audio" not in rel.get("Type", ""):
                continue
            target = rel.get("Target", "")
            if target.startswith(".."):
                member = posixpath.normpath(posixpath.join("ppt/slides", target))
                extracted = work_path(ctx, posixpath.basename(member))
                extracted.parent.mkdir(parents=True, exist_ok=True)
                extracted.write_bytes(archive.read(member))
                return str(extracted)
            if not target.startswith("file://"):
                raise StateActError(
                    f"slide {slide}'s audio target {target!r} is not a file:// link"
                )
            got = ctx.source.fetch_file(target[7:], work_path(ctx, dest))
            return str(got) if got else None
    return None


DESKTOP_FOLDER = f"{SANDBOX_HOME}/Desktop"


def desktop_entry_names(ctx: GetterContext) -> list[str]:
    """The names of the `.desktop` files on the machine's desktop (files only, links skipped)."""
    if isinstance(ctx.source, RootDirSource):
        folder = ctx.source.host_path(DESKTOP_FOLDER)
        if not folder.is_dir():
            return []
        entries = sorted(folder.iterdir())
        return [
            e.name for e in entries if e.suffix == ".desktop" and e.is_file() and not e.is_symlink()
        ]
    command = (
        f"find {DESKTOP_FOLDER} -mindepth 1 -maxdepth 1 -type f -name '*.desktop' -printf '%f\\0'"
    )
    done = ctx.source.run_command(command, True)
    return sorted(name for name in done.get("output", "").split("\0") if name.strip("\n"))


@getter("shortcuts_on_desktop")
def get_shortcuts_on_desktop(spec: dict, ctx: GetterContext) -> dict[str, str]:
    """{path: text} of every `.desktop` shortcut on the machine's desktop, as OSWorld's getter."""
    shortcuts = {}
    for index, name in enumerate(desktop_entry_names(ctx)):
        path = f"{DESKTOP_FOLDER}/{name}"
        fetched = ctx.source.fetch_file(path, work_path(ctx, f"shortcuts/{index}.desktop"))
        if fetched is not None:
            shortcuts[path] = fetched.read_text(encoding="utf-8", errors="replace")
    return shortcuts


@getter("content_from_vm_file")
def get_content_from_vm_file(spec: dict, ctx: GetterContext) -> list[str] | None:
    """A part of a machine file's content; OSWorld has one: an xlsx sheet's `last_row`, each cell
    as pandas prints it (the first row is the header; an empty cell reads "nan")."""
    path = spec.get("path")
    if not isinstance(path, str):
        raise StateActError("content_from_vm_file getter needs a 'path' string")
    kind = (spec.get("file_type"), spec.get("file_content"))
    if kind != ("xlsx", "last_row"):
        raise StateActError(
            f"content_from_vm_file reads an xlsx file's last_row only, not {kind[1]!r} of "
            f"{kind[0]!r}"
        )
    fetched = ctx.source.fetch_file(path, work_path(ctx, posixpath.basename(path)))
    if fetched is None:
        return None
    import pandas  # here: pandas costs half a second at every CLI start, for this one getter

    try:
        sheet = pandas.read_excel(fetched)
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise StateActError(f"{path} is not a readable xlsx workbook ({exc})") from None
    if sheet.empty:
        return None
    return sheet.iloc[-1].astype(str).tolist()
