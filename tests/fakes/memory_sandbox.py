"""An in-memory sandbox for tests of the tool loop and the tools that need no real machine.

    sandbox = MemorySandbox({"/home/user/a.txt": "alpha\n"})
    BashTool(sandbox)(command="cat a.txt")

Files live in a dict. `bash.run` understands a tiny shell — `echo TEXT`, `echo TEXT > FILE`,
`cat FILE`, `ls`, `pwd`, `exit N` — and answers anything else with exit code 127, in the toolbox's
result shape (`output`, `exit_code`, `cwd`, `timed_out`). `editor.run` supports `view`, `create` and
`str_replace`; `file.read`/`file.write`/`file.stat` and `fs.changed` work on the dict. Snapshots are
copies of the dict, so it satisfies the whole `Sandbox` protocol. Unknown methods raise `ToolError`
as the real toolbox does; `calls` logs every call.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path

from harness.kernel.core import ToolError
from sandboxes import SANDBOX_HOME, Snapshot


class MemorySandbox:
    backend = "memory"

    def __init__(self, files: dict[str, str] | None = None):
        self.id = "memory-sandbox"
        self.files: dict[str, str] = dict(files or {})
        self.mtimes = {path: 0.0 for path in self.files}
        self.calls: list[tuple[str, dict]] = []
        self.snapshots: dict[str, dict[str, str]] = {}

    def call(self, method: str, *, wait_s: float | None = None, **params) -> dict:
        self.calls.append((method, params))
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        if handler is None:
            raise ToolError(f"unknown toolbox method {method!r}")
        return handler(**params)

    # -- the toolbox methods the main agent's tools use
    # ---------------------------------------------

    def _bash_run(self, command: str, session: str = "default", timeout: float = 120.0) -> dict:
        output, code = self._shell(command)
        return {"output": output, "exit_code": code, "cwd": SANDBOX_HOME, "timed_out": False}

    def _bash_restart(self, session: str = "default") -> dict:
        return {}

    def _editor_run(self, command: str, path: str, **params) -> dict:
        if command == "view":
            if path not in self.files:
                raise ToolError(f"The path {path} does not exist.")
            lines = self.files[path].splitlines()
            return {"output": "\n".join(f"{n:6}\t{line}" for n, line in enumerate(lines, 1))}
        if command == "create":
            self._write(path, params.get("file_text") or "")
            return {"output": f"File created successfully at: {path}"}
        if command == "str_replace":
            text, old = self.files.get(path, ""), params.get("old_str") or ""
            if text.count(old) != 1:
                raise ToolError(f"old_str must occur exactly once in {path}.")
            self._write(path, text.replace(old, params.get("new_str") or ""))
            return {"output": f"The file {path} has been edited."}
        raise ToolError(f"the memory sandbox's editor has no {command!r} command")

    def _file_read(self, path: str, **params) -> dict:
        if path not in self.files:
            raise ToolError(f"{path} does not exist")
        return {"content": self.files[path], "encoding": "text"}

    def _file_write(self, path: str, content: str, **params) -> dict:
        self._write(path, content)
        return {}

    def _file_stat(self, path: str) -> dict:
        return {"exists": path in self.files, "size": len(self.files.get(path, ""))}

    def _fs_changed(self, since: float = 0.0, limit: int = 500, **params) -> dict:
        changed = [p for p, mtime in self.mtimes.items() if mtime >= since][:limit]
        return {
            "paths": [
                {"path": p, "mtime": self.mtimes[p], "size": len(self.files[p])} for p in changed
            ]
        }

    def _shell(self, command: str) -> tuple[str, int]:
        words = shlex.split(command)
        if not words:
            return "", 0
        if words[0] == "echo":
            if ">" in words:
                at = words.index(">")
                self._write(self._absolute(words[at + 1]), " ".join(words[1:at]) + "\n")
                return "", 0
            return " ".join(words[1:]) + "\n", 0
        if words[0] == "cat" and len(words) == 2:
            path = self._absolute(words[1])
            if path not in self.files:
                return f"cat: {words[1]}: No such file or directory\n", 1
            return self.files[path], 0
        if words[0] == "ls":
            names = sorted(Path(p).name for p in self.files if str(Path(p).parent) == SANDBOX_HOME)
            return "".join(f"{name}\n" for name in names), 0
        if words[0] == "pwd":
            return SANDBOX_HOME + "\n", 0
        if words[0] == "exit" and len(words) == 2 and words[1].isdigit():
            return "", int(words[1])
        return f"bash: {words[0]}: command not found\n", 127

    def _absolute(self, path: str) -> str:
        return path if path.startswith("/") else f"{SANDBOX_HOME}/{path}"

    def _write(self, path: str, text: str) -> None:
        self.files[path] = text
        self.mtimes[path] = time.time()

    # -- the rest of the Sandbox protocol
    # ------------------------------------------------------------

    def exec(self, argv: list[str], timeout: float = 120.0, user: str = "user") -> tuple[int, str]:
        output, code = self._shell(shlex.join(argv))
        return code, output

    def copy_in(self, host_path: Path, sandbox_path: str) -> None:
        self._write(sandbox_path, Path(host_path).read_text())

    def copy_out(self, sandbox_path: str, host_path: Path) -> None:
        if sandbox_path not in self.files:
            raise FileNotFoundError(sandbox_path)
        Path(host_path).write_text(self.files[sandbox_path])

    def snapshot(self) -> Snapshot:
        ref = f"memory-{len(self.snapshots) + 1}"
        self.snapshots[ref] = dict(self.files)
        return Snapshot(backend=self.backend, ref=ref, created_at=time.time())

    def persist(self, run_dir: Path, name: str) -> Snapshot:
        return self.snapshot()

    def discard_snapshot(self, snapshot: Snapshot) -> None:
        self.snapshots.pop(snapshot.ref, None)

    def interactive_argv(self) -> list[str]:
        return ["true"]

    def close(self) -> None:
        self.files.clear()

    def __enter__(self) -> MemorySandbox:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
