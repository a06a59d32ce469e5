"""Commands that act in a running LibreOffice the way a person at the keyboard would: open a
document, change it, and save it or leave the change unsaved. They run inside the sandbox as its
user (`stateact gate --then`), through the office's UNO pipe, so the benchmark needs no screen."""

from __future__ import annotations

import shlex

START_OFFICE = (
    'pgrep -u "$(id -u)" -x soffice.bin >/dev/null || '
    "(setsid soffice --headless --norestore --nologo </dev/null >/tmp/soffice.log 2>&1 &)"
)

EDIT_SCRIPT = """
import sys, time, uno
from com.sun.star.beans import PropertyValue
from com.sun.star.connection import NoConnectException
path, kind, target, text, save = sys.argv[1:6]
local = uno.getComponentContext()
resolver = local.ServiceManager.createInstanceWithContext(
    "com.sun.star.bridge.UnoUrlResolver", local
)
for _ in range(240):
    try:
        remote = resolver.resolve("uno:pipe,name=stateact-uno;urp;StarOffice.ComponentContext")
        break
    except NoConnectException:
        time.sleep(0.25)
else:
    sys.exit("no office answered on the UNO pipe")
desktop = remote.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", remote)
hidden = PropertyValue()
hidden.Name, hidden.Value = "Hidden", True
document = desktop.loadComponentFromURL(uno.systemPathToFileUrl(path), "_blank", 0, (hidden,))
if kind == "cell":
    document.Sheets.getByIndex(0).getCellRangeByName(target).setFormula(text)
elif kind == "text":
    document.Text.getEnd().setString(text)
elif kind == "slide":
    from com.sun.star.awt import Size
    page = document.DrawPages.insertNewByIndex(0)
    shape = document.createInstance("com.sun.star.drawing.TextShape")
    shape.setSize(Size(20000, 3000))
    page.add(shape)
    shape.setString(text)
if save == "save":
    document.store()
print("modified" if document.isModified() else "saved", flush=True)
import os
os._exit(0)  # tearing the UNO bridge down at interpreter exit sometimes crashes; nothing is left
"""


def office_edit(path: str, kind: str, target: str, text: str, save: bool) -> str:
    """Shell text: open `path` in the running office (starting one), put `text` into `target` (a
    cell of the first sheet for kind `cell`; appended to a text document for kind `text`), and
    store it when `save`, leaving the document open either way."""
    args = [path, kind, target, text, "save" if save else "keep"]
    script = shlex.quote(EDIT_SCRIPT)
    return f"{START_OFFICE}; python3 -c {script} {shlex.join(args)}"
