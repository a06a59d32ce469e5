"""The program inside the persistent Python interpreter (run with `python3 -u -c <this source>`).

It reads cell requests as JSON lines from the fd given in argv[1] and writes one JSON result line
per cell to the fd in argv[2]; the cell's own stdout and stderr are the interpreter's, which the
toolbox reads through a pipe. It must stay importable on its own: nothing from the toolbox
package.
"""

import ast
import json
import linecache
import os
import signal
import sys
import traceback

_state = {"running": False}


def _interrupt_only_while_running(signum, frame):
    # A late Ctrl-C (after the cell finished) must not kill the interpreter between cells.
    if _state["running"]:
        raise KeyboardInterrupt


def _run_cell(code, number, namespace):
    """Execute one cell like a REPL would; returns the formatted traceback or None."""
    filename = f"<cell {number}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    try:
        tree = ast.parse(code, filename, "exec")
    except (SyntaxError, ValueError) as exc:
        return "".join(traceback.format_exception_only(type(exc), exc))
    trailing = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        trailing = ast.Expression(tree.body.pop().value)
    try:
        exec(compile(tree, filename, "exec"), namespace)
        if trailing is not None:
            value = eval(compile(trailing, filename, "eval"), namespace)
            sys.displayhook(value)
    except BaseException as exc:  # noqa: BLE001 - the cell's failure is reported, never fatal
        user_frames = exc.__traceback__.tb_next if exc.__traceback__ else None
        return "".join(traceback.format_exception(type(exc), exc, user_frames))
    return None


def main():
    requests = os.fdopen(int(sys.argv[1]), "rb")
    results = os.fdopen(int(sys.argv[2]), "wb", buffering=0)
    sys.argv = [""]  # as in a REPL; the fd numbers are no business of the user's code
    signal.signal(signal.SIGINT, _interrupt_only_while_running)
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    number = 0
    for line in requests:
        request = json.loads(line)
        number += 1
        try:
            os.chdir(request.get("cwd") or ".")
        except OSError:
            pass
        _state["running"] = True
        try:
            error = _run_cell(request["code"], number, namespace)
        finally:
            _state["running"] = False
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a user-replaced stream may not flush
                pass
        results.write((json.dumps({"error": error}) + "\n").encode())


main()
