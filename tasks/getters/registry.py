"""OSWorld getters: turn an evaluator's `result`/`expected` spec into the value a metric compares.

A getter reads the machine state through a `StateSource`: `RootDirSource` is a folder holding a
copy of the machine's files (offline checking), `SandboxSource` a live sandbox. File getters copy
into the evaluation work dir under their `dest` name (metrics such as `sheet_print` look for
sibling files by name) and return host paths as strings, or None for an absent file.
"""

from __future__ import annotations

import posixpath
import shlex
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from harness.kernel.core import StateActError
from sandboxes.agent_files import check_zip
from sandboxes.base import SANDBOX_HOME, Sandbox
from sandboxes.toolbox.observer import SAFE_DESKTOP_ENV
from tasks.cache import find_cached, inside, is_file, is_url, local_reference, resolve_source
from tasks.eval_failure import check_evaluation_command
from tasks.relative_time import rule_relative_time
from tasks.schema import Task


class StateSource(Protocol):
    """Read access to a machine's final state."""

    def fetch_file(self, path: str, dest: Path) -> Path | None:
        """Copy the machine file `path` to `dest`; None when it does not exist."""
        ...

    def run_command(self, command: str | list[str], shell: bool) -> dict:
        """Run a command in the machine; returns `{"output": str, "returncode": int}`."""
        ...


class RootDirSource:
    """A machine's files copied under `root` (sandbox `/home/user/x` is `root/home/user/x`)."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def host_path(self, path: str) -> Path:
        """The file under `root` standing for the machine's `path` (normalised: `..` stays
        inside)."""
        text = path if path.startswith("/") else f"{SANDBOX_HOME}/{path}"
        posix = PurePosixPath(posixpath.normpath("/" + text.lstrip("/")))
        return self.root.joinpath(*posix.parts[1:])

    def fetch_file(self, path: str, dest: Path) -> Path | None:
        if "\x00" in path:
            raise StateActError(f"the machine path {path!r} contains a NUL character")
        source = self.host_path(path)
        if not source.is_file():
            return None
        if not inside(source, self.root):  # a link in the copied state that points out of it
            raise StateActError(f"{path} is a link that leads out of the --root folder")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)
        check_zip(dest, path)
        return dest

    def run_command(self, command: str | list[str], shell: bool) -> dict:
        raise StateActError(
            "this evaluator runs a command in the machine (vm_command_line), which needs a live "
            "sandbox, not a --root folder"
        )


class SandboxSource:
    """A live sandbox, read through its protocol (`exec`, `copy_out`)."""

    def __init__(self, sandbox: Sandbox, timeout: float = 120.0):
        self.sandbox = sandbox
        self.timeout = timeout

    def fetch_file(self, path: str, dest: Path) -> Path | None:
        code, output = self.sandbox.exec(["test", "-f", path], timeout=self.timeout)
        check_evaluation_command(f"`test -f {path}`", code, output)
        if code != 0:
            return None
        dest.parent.mkdir(parents=True, exist_ok=True)
        self.sandbox.copy_out(path, dest)  # streamed under a byte cap; a link read as `user`
        check_zip(dest, path)  # a package whose members unpack past the limits is not parsed
        return dest

    def run_command(self, command: str | list[str], shell: bool) -> dict:
        # OSWorld's getter returns the command's stdout only: stderr is dropped inside the machine,
        # since `exec` gives the two streams combined.
        if shell or isinstance(command, str):
            text = command if isinstance(command, str) else shlex.join(command)
            argv = ["bash", "-c", "{ " + text + "\n} 2>/dev/null"]
        else:
            argv = ["bash", "-c", 'exec "$@" 2>/dev/null', "bash", *command]
        started = time.monotonic()
        code, output = self.sandbox.exec(argv, timeout=self.timeout)
        shown = command if isinstance(command, str) else shlex.join(command)
        elapsed = time.monotonic() - started
        check_evaluation_command(f"`{shown[:200]}`", code, output, elapsed, self.timeout)
        return {"output": output, "returncode": code}


@dataclass
class GetterContext:
    """What a getter may use: the task, the state, the cache dir and a folder for fetched files."""

    task: Task
    """The task being scored (its id and folder locate cached and local files)."""
    source: StateSource
    """The machine state."""
    cache_dir: Path | None
    """OSWorld-style cache of downloaded task files, if any."""
    work_dir: Path
    """Folder the getter copies files into (made on demand)."""
    outputs_dir: Path | None = None
    """Folder where setup/postconfig steps left host-side outputs (an execute step's `stdout`)."""


GetterFn = Callable[[dict, GetterContext], Any]
GETTERS: dict[str, GetterFn] = {}


def getter(name: str) -> Callable[[GetterFn], GetterFn]:
    """Register `fn` under the OSWorld getter type `name`."""

    def register(fn: GetterFn) -> GetterFn:
        if name in GETTERS:
            raise ValueError(f"getter {name!r} is registered twice")
        GETTERS[name] = fn
        return fn

    return register


def run_getter(spec: dict | None, ctx: GetterContext) -> Any:
    """The value `spec` describes; None for no spec. Raises StateActError for unknown or broken
    specs."""
    if spec is None:
        return None
    if not isinstance(spec, dict) or "type" not in spec:
        raise StateActError(f"getter spec {spec!r} has no 'type'")
    fn = GETTERS.get(spec["type"])
    if fn is None:
        raise StateActError(f"getter type {spec['type']!r} is not implemented")
    return fn(spec, ctx)


def as_list(value: Any) -> list:
    return value if isinstance(value, list) else [value]


def file_pairs(spec: dict) -> list[tuple[str, str]]:
    """(path, dest) for each file a file getter names; dest defaults to the path's basename."""
    paths = as_list(spec.get("path"))
    if not paths or any(not isinstance(p, str) for p in paths):
        raise StateActError(f"{spec.get('type')} getter needs a 'path' string or list of strings")
    dests = as_list(spec.get("dest")) if spec.get("dest") is not None else [None] * len(paths)
    dests += [None] * (len(paths) - len(dests))
    return [
        (p, d or PurePosixPath(p.split("?")[0]).name) for p, d in zip(paths, dests, strict=False)
    ]


def pick_given(spec: dict, files: list[str | None]) -> Any:
    """OSWorld's `multi`/`gives`: one file for a single path, else the files listed in `gives`."""
    if not spec.get("multi"):
        return files[0]
    gives = spec.get("gives", [0])
    try:
        chosen = [files[i] for i in gives]
    except (IndexError, TypeError):
        raise StateActError(
            f"'gives' {gives!r} does not match the {len(files)} files named"
        ) from None
    return chosen[0] if len(chosen) == 1 else chosen


def work_path(ctx: GetterContext, dest: str) -> Path:
    target = (ctx.work_dir / dest).resolve()
    if not target.is_relative_to(ctx.work_dir.resolve()):
        raise StateActError(f"getter dest {dest!r} leaves the work dir")
    return target


@getter("vm_file")
def get_vm_file(spec: dict, ctx: GetterContext) -> Any:
    files = []
    for path, dest in file_pairs(spec):
        got = ctx.source.fetch_file(path, work_path(ctx, dest))
        files.append(str(got) if got else None)
    return pick_given(spec, files)


def copy_local(source: Path, ctx: GetterContext, dest: str) -> str:
    target = work_path(ctx, dest)
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.resolve() != target:
        shutil.copyfile(source, target)
    return str(target)


@getter("cloud_file")
def get_cloud_file(spec: dict, ctx: GetterContext) -> Any:
    files = [
        copy_local(resolve_source(path, ctx.task, ctx.cache_dir), ctx, dest)
        for path, dest in file_pairs(spec)
    ]
    return pick_given(spec, files)


@getter("local_file")
def get_local_file(spec: dict, ctx: GetterContext) -> Any:
    files = []
    for path, dest in file_pairs(spec):
        source = local_reference(path, ctx.task, ctx.cache_dir)
        files.append(copy_local(source, ctx, dest) if source.is_file() else None)
    return pick_given(spec, files)


@getter("cache_file")
def get_cache_file(spec: dict, ctx: GetterContext) -> str | None:
    """A file the setup or postconfig steps wrote on the host (an execute step's `stdout`)."""
    path = spec.get("path")
    if not isinstance(path, str):
        raise StateActError("cache_file getter needs a 'path' string")
    if is_url(path):
        found = find_cached(path, ctx.task.id, ctx.cache_dir)
        return str(found) if found else None
    places = [(ctx.outputs_dir, ctx.outputs_dir / path)] if ctx.outputs_dir is not None else []
    if ctx.cache_dir is not None:
        cache = Path(ctx.cache_dir)
        places += [(cache, cache / ctx.task.id / path), (cache, cache / path)]
    if "\x00" in path:
        raise StateActError("cache_file getter path contains a NUL character")
    return next((str(p) for root, p in places if is_file(p) and inside(p, root)), None)


@getter("vm_command_line")
def get_vm_command_line(spec: dict, ctx: GetterContext) -> str:
    command = spec.get("command")
    if not isinstance(command, str | list):
        raise StateActError("vm_command_line getter needs a 'command'")
    shell = spec.get("shell", False) in (True, "true", "True")
    return ctx.source.run_command(command, shell)["output"]


@getter("rule")
def get_rule(spec: dict, ctx: GetterContext) -> Any:
    return spec.get("rules")


@getter("rule_relativeTime")
def get_rule_relative_time(spec: dict, ctx: GetterContext) -> dict:
    rules = spec.get("rules")
    if not isinstance(rules, dict):
        raise StateActError("rule_relativeTime getter needs a 'rules' object")
    return rule_relative_time(rules)


# Prints the desktop's AT-SPI tree as XML in OSWorld's format (namespaced states and attributes).
ATSPI_DUMP = (Path(__file__).parents[1] / "sandbox_scripts" / "atspi_tree.py").read_text()


@getter("accessibility_tree")
def get_accessibility_tree(spec: dict, ctx: GetterContext) -> str:
    command = f"{SAFE_DESKTOP_ENV}python3 -c {shlex.quote(ATSPI_DUMP)}"
    result = ctx.source.run_command(command, True)
    if result.get("returncode", 0) != 0:
        raise StateActError(
            "the accessibility tree is unavailable in this machine: "
            f"{result.get('output', '')[-300:]}"
        )
    return result["output"]
