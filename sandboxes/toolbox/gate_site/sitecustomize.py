"""Loaded by pythons the gate model starts from its shell (its PYTHONPATH names this root-owned
folder; nothing else is in it): the current folder and the script's folder join the END of the
import path. So `cd repo && python3 -c 'from calc import add'` imports the repository's module, as
in any shell, while a planted `openpyxl.py` or `json.py` there never shadows the real library."""

import os
import sys


def _append_local_folders() -> None:
    folders = [os.getcwd()]
    script = sys.argv[0] if sys.argv else ""
    if script and script not in ("-c", "-m") and os.path.isfile(script):
        folders.append(os.path.dirname(os.path.abspath(script)))
    for folder in folders:
        if folder not in sys.path:
            sys.path.append(folder)


try:
    _append_local_folders()
except OSError:  # a deleted current folder: nothing to add
    pass
