"""Ask running applications which documents they hold open and whether those have unsaved changes.

LibreOffice answers over UNO: the desktop image makes every office accept connections on a
user-private pipe (sandboxes/images/desktop/stateact-uno.xcd), and an observer lists the office's
components with their URL and `isModified()`. The observer is the system Python in isolated mode
(`-I`: no user site, no PYTHON* variables, no script folder on the path), with an empty
environment and `/` as its folder, so nothing the agent wrote into its home or /tmp steers it.
It runs as the office's user because the pipe's name is per user, and only talks to the pipe when
the program holding it is LibreOffice's own binary. It runs in the live sandbox before the gate's
snapshot: a snapshot holds files, not running programs.

Applications that do not expose their modified state leave only markers beside the document (a
LibreOffice lock file when the office cannot be asked, a vim swap file); a
marker says a document is open, not that it has unsaved changes, so it is a finding for the
model layer and never a definite gap on its own.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from harness.kernel.core import StateActError

log = logging.getLogger(__name__)

UNO_PIPE = "stateact-uno"
OFFICE_BINARY = "/usr/lib/libreoffice/program/soffice.bin"
OBSERVER_TIMEOUT_S = 20.0
# A save started just before `finish` (ctrl+s, then finish at once) may still be writing when the
# gate looks; a loaded machine takes seconds for a large workbook. Modified documents are asked
# again for this long before their unsaved state counts.
SAVE_SETTLE_S = 8.0
SAVE_POLL_S = 0.5

UNO_OBSERVER = f"""
import json, os

def pipe_holder():
    # The program listening on the office's pipe: the agent could put its own listener there.
    pipe = "/tmp/OSL_PIPE_%d_{UNO_PIPE}" % os.getuid()
    with open("/proc/net/unix") as table:
        inodes = {{row.split()[6] for row in table.readlines()[1:]
                  if len(row.split()) >= 8 and row.split()[7] == pipe}}
    if not inodes:
        return None
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{{pid}}/fd")
            links = [os.readlink(f"/proc/{{pid}}/fd/{{fd}}") for fd in fds]
            if any(link[8:-1] in inodes for link in links if link.startswith("socket:[")):
                return os.readlink(f"/proc/{{pid}}/exe")
        except OSError:
            continue
    return ""

holder = pipe_holder()
if holder is None:
    print(json.dumps({{"asked": False, "reason": "no LibreOffice is running"}}))
    raise SystemExit(0)
if holder != "{OFFICE_BINARY}":
    reason = f"the office's UNO pipe is held by {{holder or 'an unknown program'}}, not LibreOffice"
    print(json.dumps({{"asked": False, "reason": reason}}))
    raise SystemExit(0)
try:
    import uno
    from com.sun.star.connection import NoConnectException
except ImportError:
    print(json.dumps({{"asked": False, "reason": "python3-uno is not installed"}}))
    raise SystemExit(0)
local = uno.getComponentContext()
resolver = local.ServiceManager.createInstanceWithContext(
    "com.sun.star.bridge.UnoUrlResolver", local)
try:
    remote = resolver.resolve("uno:pipe,name={UNO_PIPE};urp;StarOffice.ComponentContext")
except NoConnectException:
    print(json.dumps({{"asked": False, "reason": "no LibreOffice is running"}}))
    raise SystemExit(0)
desktop = remote.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", remote)
documents = []
components = desktop.getComponents().createEnumeration()
while components.hasMoreElements():
    component = components.nextElement()
    try:
        url = component.getURL()
        modified = bool(component.isModified())
    except Exception:
        continue  # not a document model (a Basic IDE, a start centre)
    path = uno.fileUrlToSystemPath(url) if url.startswith("file://") else ""
    documents.append({{"path": path, "url": url, "modified": modified}})
print(json.dumps({{"asked": True, "documents": documents}}), flush=True)
# Tearing the UNO bridge down at interpreter exit sometimes crashes (SIGSEGV); nothing is left.
import os
os._exit(0)
"""

OBSERVER_ARGV = [
    "env",
    "-i",
    "-C",
    "/",
    "PATH=/usr/bin:/bin",
    "HOME=/nonexistent",
    "/usr/bin/python3",
    "-I",
    "-c",
    UNO_OBSERVER,
]


@dataclass
class OpenDocument:
    """A document an application holds open."""

    path: str
    """Sandbox path ('' for a document never saved anywhere)."""
    modified: bool
    """It has changes the application has not written to disk."""
    app: str = "libreoffice"


@dataclass
class AppState:
    """What the applications in the live sandbox said about their open documents."""

    asked: bool = False
    """An application answered (so an absent document is not open there)."""
    reason: str = ""
    """Why no application could be asked."""
    documents: list[OpenDocument] = field(default_factory=list)

    def open_document(self, path: str) -> OpenDocument | None:
        return next((d for d in self.documents if d.path == path), None)

    def to_json(self) -> dict:
        return {
            "asked": self.asked,
            "reason": self.reason,
            "documents": [vars(document) for document in self.documents],
        }


def observe_open_documents(sandbox) -> AppState:
    """Ask the sandbox's running office about its documents; never raises for a missing office."""
    try:
        code, output = sandbox.exec(OBSERVER_ARGV, timeout=OBSERVER_TIMEOUT_S)
    except (StateActError, OSError) as exc:
        return AppState(reason=f"the office could not be asked: {exc}")
    last = output.strip().splitlines()[-1] if output.strip() else ""
    try:
        answer = json.loads(last)
    except json.JSONDecodeError:
        answer = None
    if not isinstance(answer, dict) or not isinstance(answer.get("documents", []), list):
        reason = f"the office observer failed (exit {code}): {output.strip()[-300:]}"
        log.info(reason)
        return AppState(reason=reason)
    if not answer.get("asked"):
        return AppState(reason=str(answer.get("reason", "")))
    documents = [
        OpenDocument(str(d.get("path", "")), bool(d.get("modified")))
        for d in answer.get("documents", [])
        if isinstance(d, dict)
    ]
    return AppState(asked=True, documents=documents)


def settled_open_documents(
    sandbox, settle_s: float = SAVE_SETTLE_S, poll_s: float = SAVE_POLL_S
) -> AppState:
    """The office's answer once no save is in flight: while a document still reports unsaved
    changes, ask again until none does or `settle_s` has passed (a save in progress clears the
    flag when its file is written; a document nobody saves keeps it, and costs the wait once)."""
    deadline = time.monotonic() + settle_s
    state = observe_open_documents(sandbox)
    while any(d.modified for d in state.documents) and time.monotonic() < deadline:
        time.sleep(poll_s)
        state = observe_open_documents(sandbox)
    return state


def open_markers(path: str) -> list[tuple[str, str]]:
    """Files whose presence says `path` is open in some application: (marker path, application)."""
    pure = PurePosixPath(path)
    return [
        (str(pure.parent / f".~lock.{pure.name}#"), "LibreOffice"),
        (str(pure.parent / f".{pure.name}.swp"), "vim"),
    ]
