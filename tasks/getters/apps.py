"""OSWorld getters that ask a running application: VLC's playing state through its web interface
(`vlc_playing_info`) and a VS Code extension command's output file (`vscode_config`).

The desktop image's vlcrc turns VLC's web interface on, on the sandbox's loopback, with OSWorld's
password; the status is fetched inside the sandbox, so no port is opened into it.
"""

from __future__ import annotations

import shlex
import time
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from harness.kernel.core import StateActError
from tasks.getters.registry import GetterContext, getter, work_path
from tasks.setup import SOURCE_DESKTOP

VLC_STATUS_URL = "http://127.0.0.1:8080/requests/status.xml"
VLC_PASSWORD = "password"
"""OSWorld's VM serves VLC's web interface on port 8080 with this password (no user name)."""
PALETTE_SETTLE_S = 1.0
"""OSWorld's wait between running the command and reading its file."""


VLC_BINARY = "/usr/bin/vlc"
# The program listening on VLC's port, found through /proc: an agent that stopped VLC could serve
# a status.xml of its choosing there, so the getter reads the port only while VLC itself holds it.
PORT_HOLDER = """
import os, sys
port = "%04X" % int(sys.argv[1])
inodes = set()
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    try:
        rows = open(table).read().splitlines()[1:]
    except OSError:
        continue
    for row in rows:
        cells = row.split()
        if len(cells) > 9 and cells[1].endswith(":" + port) and cells[3] == "0A":
            inodes.add("socket:[%s]" % cells[9])
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        fds = os.listdir("/proc/%s/fd" % pid)
        if inodes & {os.readlink("/proc/%s/fd/%s" % (pid, fd)) for fd in fds}:
            print(os.readlink("/proc/%s/exe" % pid))
            break
    except OSError:
        continue
"""


@getter("vlc_playing_info")
def get_vlc_playing_info(spec: dict, ctx: GetterContext) -> str | None:
    """VLC's status.xml copied to `dest`; None when VLC does not answer (it is not running),
    refuses the request, or another program holds its port."""
    port = urlsplit(VLC_STATUS_URL).port
    holder = f"/usr/bin/python3 -I -c {shlex.quote(PORT_HOLDER)} {port}"
    command = (
        f'[ "$({holder})" = {VLC_BINARY} ] || exit 3; '
        f"curl -sS --max-time 10 -u :{VLC_PASSWORD} -w '\\n%{{http_code}}' {VLC_STATUS_URL}"
    )
    result = ctx.source.run_command(command, True)
    body, _, status = str(result.get("output", "")).rpartition("\n")
    if result.get("returncode", 0) != 0 or status.strip() != "200":
        return None
    target = work_path(ctx, spec.get("dest") or "status.xml")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body, encoding="utf-8")
    return str(target)


def pyautogui_line(call: str) -> str:
    """One pyautogui call run as OSWorld's controller runs it, on the desktop's display."""
    code = f"import pyautogui; import time; pyautogui.FAILSAFE = False; {call}"
    return f"{SOURCE_DESKTOP}python3 -c {shlex.quote(code)}"


@getter("vscode_config")
def get_vscode_config(spec: dict, ctx: GetterContext) -> str | None:
    """Runs `vscode_extension_command` from VS Code's command palette (ctrl+shift+p, typed, Enter,
    as OSWorld replays it into the focused window), then copies the file the command writes."""
    command, path = spec.get("vscode_extension_command"), spec.get("path")
    if not isinstance(command, str) or not command or not isinstance(path, str):
        raise StateActError("vscode_config getter needs 'vscode_extension_command' and 'path'")
    for call in (
        "pyautogui.hotkey('ctrl', 'shift', 'p')",
        f"pyautogui.typewrite({command!r})",
        "pyautogui.press('enter')",
    ):
        result = ctx.source.run_command(pyautogui_line(call), True)
        if result.get("returncode", 0) != 0:
            raise StateActError(f"vscode_config could not type into VS Code: {call}")
    time.sleep(PALETTE_SETTLE_S)
    dest = spec.get("dest") or PurePosixPath(path).name
    fetched = ctx.source.fetch_file(path, work_path(ctx, dest))
    return str(fetched) if fetched else None
