"""OSWorld getters for desktop state outside the browser: GIMP and VLC config, terminal text,
wallpaper, default applications, a command's error output.

Commands run with the desktop session's environment (`tasks.setup.DESKTOP_ENV`), so that
gsettings and xdg-mime see the same session as the apps the agent used.
"""

from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath
from urllib.parse import unquote, urlparse

from lxml import etree
from pptx import Presentation
from pptx.exc import PackageNotFoundError

from harness.kernel.core import StateActError
from sandboxes.base import SANDBOX_HOME
from tasks.getters.registry import GetterContext, get_accessibility_tree, getter, work_path
from tasks.setup import SOURCE_DESKTOP

GIMP_CONFIG_DIR = f"{SANDBOX_HOME}/.config/GIMP/2.10"
TERMINAL_ROLES = ("terminal",)
WALLPAPER_KEYS = ("picture-uri", "picture-uri-dark")


def desktop_command(ctx: GetterContext, command: str) -> dict:
    return ctx.source.run_command(f"{SOURCE_DESKTOP}{command}", True)


@getter("gimp_config_file")
def get_gimp_config_file(spec: dict, ctx: GetterContext) -> str | None:
    """A file of GIMP's config folder (`gimprc`, `sessionrc`); None when GIMP never wrote it."""
    name = spec.get("file_name")
    if not isinstance(name, str) or "/" in name or not name:
        raise StateActError("gimp_config_file getter needs a plain 'file_name' such as gimprc")
    fetched = ctx.source.fetch_file(
        f"{GIMP_CONFIG_DIR}/{name}", work_path(ctx, spec.get("dest") or name)
    )
    return str(fetched) if fetched else None


def terminal_text(tree_xml: str) -> str:
    """The text of every terminal widget in an accessibility-tree dump, one block per terminal."""
    try:
        root = etree.fromstring(
            tree_xml.encode("utf-8"), etree.XMLParser(recover=True, huge_tree=True)
        )
    except etree.XMLSyntaxError as exc:
        raise StateActError(f"the accessibility tree is not readable XML ({exc})") from None
    if root is None:
        raise StateActError("the accessibility tree is empty")
    blocks = ["".join(node.itertext()) for role in TERMINAL_ROLES for node in root.iter(role)]
    return "\n".join(blocks)


@getter("vm_terminal_output")
def get_vm_terminal_output(spec: dict, ctx: GetterContext) -> str:
    """What the open terminal windows show, read through the accessibility tree."""
    text = terminal_text(get_accessibility_tree(spec, ctx))
    if not text:
        raise StateActError(
            "no terminal window is open in the machine, so its output cannot be read"
        )
    return text


def wallpaper_path(output: str) -> str | None:
    """A file path from gsettings' `'file:///path/pic.png'` answer."""
    value = output.strip().strip("'\"")
    if not value:
        return None
    return unquote(urlparse(value).path) if value.startswith("file://") else value


@getter("vm_wallpaper")
def get_vm_wallpaper(spec: dict, ctx: GetterContext) -> str | None:
    """A copy of the desktop's wallpaper image (GNOME's picture-uri); None when it is unset or
    absent."""
    for key in WALLPAPER_KEYS:
        reply = desktop_command(ctx, f"gsettings get org.gnome.desktop.background {key}")
        if reply.get("returncode", 0) != 0:
            raise StateActError(
                f"the wallpaper cannot be read with gsettings: {reply.get('output', '')[-200:]}"
            )
        path = wallpaper_path(reply.get("output", ""))
        if path:
            dest = spec.get("dest") or PurePosixPath(path).name
            fetched = ctx.source.fetch_file(path, work_path(ctx, dest))
            return str(fetched) if fetched else None
    return None


@getter("default_video_player")
def get_default_video_player(spec: dict, ctx: GetterContext) -> str:
    """The .desktop file that opens MP4 videos, per xdg-mime."""
    reply = desktop_command(ctx, "xdg-mime query default video/mp4")
    if reply.get("returncode", 0) != 0:
        raise StateActError(f"xdg-mime cannot tell the default video player: {reply.get('output')}")
    return reply.get("output", "").strip()


@getter("vm_command_error")
def get_vm_command_error(spec: dict, ctx: GetterContext) -> str:
    """What a command writes on stderr, as OSWorld's getter returns (its `error` field), whatever
    the exit code: a missing module's traceback ends in `ModuleNotFoundError: …`."""
    command = spec.get("command")
    if not isinstance(command, str | list):
        raise StateActError("vm_command_error getter needs a 'command'")
    text = command if isinstance(command, str) else shlex.join(command)
    # stderr onto the captured stream, stdout dropped (the source itself drops the outer stderr).
    return desktop_command(ctx, "{ " + text + "\n} 2>&1 >/dev/null").get("output", "")


@getter("background_image_in_slide")
def get_background_image_in_slide(spec: dict, ctx: GetterContext) -> str | None:
    """The picture a slide uses as its background fill, saved as `dest`; None when it has none."""
    path, index = spec.get("ppt_file_path"), spec.get("slide_index", 0)
    if not isinstance(path, str) or not isinstance(index, int):
        raise StateActError(
            "background_image_in_slide needs 'ppt_file_path' and an integer 'slide_index'"
        )
    deck_file = ctx.source.fetch_file(path, work_path(ctx, "deck/" + PurePosixPath(path).name))
    if deck_file is None:
        return None
    try:
        slides = Presentation(str(deck_file)).slides
    except (PackageNotFoundError, KeyError, ValueError) as exc:
        raise StateActError(
            f"{PurePosixPath(path).name} is not a readable presentation ({exc})"
        ) from None
    if not 0 <= index < len(slides):
        return None
    slide = slides[index]
    blips = slide._element.xpath("./p:cSld/p:bg/p:bgPr/a:blipFill/a:blip/@r:embed")
    if not blips:
        return None
    target = work_path(ctx, spec.get("dest") or "background.png")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(slide.part.related_part(blips[0]).blob)
    return str(target)


VLC_CONFIG = f"{SANDBOX_HOME}/.config/vlc/vlcrc"


@getter("vlc_config")
def get_vlc_config(spec: dict, ctx: GetterContext) -> str | None:
    """VLC's preferences file (~/.config/vlc/vlcrc); None when VLC never wrote one."""
    fetched = ctx.source.fetch_file(VLC_CONFIG, work_path(ctx, spec.get("dest") or "vlcrc"))
    return str(fetched) if fetched else None


def size_of(width: str, height: str) -> dict | None:
    return (
        {"width": int(width), "height": int(height)}
        if width.isdigit() and height.isdigit()
        else None
    )


@getter("vm_screen_size")
def get_vm_screen_size(spec: dict, ctx: GetterContext) -> dict | None:
    """The display's {"width", "height"}; None when no display answers."""
    reply = desktop_command(ctx, "xdotool getdisplaygeometry")
    parts = reply.get("output", "").split()
    if reply.get("returncode", 0) != 0 or len(parts) != 2:
        return None
    return size_of(*parts)


@getter("vm_window_size")
def get_vm_window_size(spec: dict, ctx: GetterContext) -> dict | None:
    """{"width", "height"} of the first window whose WM_CLASS (instance or class) is
    `app_class_name`, ignoring case, as OSWorld's; None when there is none."""
    name = spec.get("app_class_name")
    if not isinstance(name, str) or not name:
        raise StateActError("vm_window_size getter needs an 'app_class_name'")
    pattern = shlex.quote(f"^{re.escape(name)}$")
    script = (
        f"for id in $(xdotool search --class {pattern}; xdotool search --classname {pattern}); do "
        'xdotool getwindowgeometry --shell "$id" && break; done'
    )
    reply = desktop_command(ctx, script)
    values = dict(
        line.split("=", 1) for line in reply.get("output", "").splitlines() if "=" in line
    )
    return size_of(values.get("WIDTH", ""), values.get("HEIGHT", ""))
