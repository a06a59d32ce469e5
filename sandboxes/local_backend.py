"""The daemon-free backend: the toolbox in fresh Linux namespaces made by bubblewrap.

What it isolates: a new network namespace with only `lo` (offline), its own PID, IPC and UTS
namespaces, a read-only view of the host's /usr and /etc, and a private writable /home/user and /tmp
backed by a host directory that is removed on close. User `user` (uid 1000) inside.
What it does not: it shares the host kernel without seccomp filtering beyond bubblewrap's defaults,
it caps only each process's address space (no cgroup limit on total memory, CPU or process count),
and it runs the host's own programs (LibreOffice and Chromium only if the host has them). Python
inside, for the toolbox and for the agent's `python3`, is the harness's own environment (its venv
and the base install under it, mounted read-only at their real paths), so it has the harness's
packages whatever the base python lacks. Use the docker backend for untrusted work.
"""

from __future__ import annotations

import logging
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import asdict
from pathlib import Path, PurePosixPath

from . import confined
from .agent_files import COPY_LIMIT_BYTES
from .agent_stop import FrozenAgent
from .base import (
    SANDBOX_HOME,
    SANDBOX_USER,
    TOOLBOX_DIR,
    TOOLBOX_PARENT,
    SandboxConfig,
    SandboxError,
    Snapshot,
    ToolboxSandboxMixin,
    toolbox_argv,
)
from .channel import PipeChannel
from .client import ToolboxClient
from .confined import sandbox_parts
from .lifecycle import register, unregister
from .toolbox.protocol import ProcFreeze, ProcThaw
from .typed import exec_through_toolbox, run

log = logging.getLogger(__name__)

WRITABLE_ROOTS = {SANDBOX_HOME: "home", "/tmp": "tmp"}
PASSWD = "root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000:user:/home/user:/bin/bash\n"
GROUP = "root:x:0:\nuser:x:1000:\n"


def harness_python() -> Path:
    """The harness's interpreter as its environment knows it: the venv's `bin/python3` (a venv is
    found through the `pyvenv.cfg` beside that path, so the path itself must be used, not where its
    symlink points), in a folder reached by its real path."""
    executable = Path(sys.executable)
    return executable.parent.resolve() / executable.name


def python_mounts() -> list[str]:
    """The host folders the harness's python needs: its environment and the base install under
    it."""
    folders = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    folders |= {folder.resolve() for folder in folders}
    folders.add(Path(os.path.realpath(sys.executable)).parent.parent)
    # /usr is bound already; a folder inside another one comes with it.
    wanted = sorted(str(f) for f in folders if not str(f).startswith("/usr/") and str(f) != "/usr")
    return [f for f in wanted if not any(f.startswith(other + "/") for other in wanted)]


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if not path:
        raise SandboxError(
            "the local backend needs bubblewrap; install it with `apt-get install bubblewrap`."
        )
    return path


class LocalSandbox(ToolboxSandboxMixin):
    """A sandbox made of bubblewrap namespaces around a host directory."""

    backend = "local"

    def __init__(self, config: SandboxConfig, snapshot: Snapshot | None = None):
        if config.agent_sudo:
            raise SandboxError(
                "--agent-sudo needs the docker backend: the local sandbox has no root to give."
            )
        self.config = config
        self.id = f"stateact-local-{uuid.uuid4().hex[:12]}"
        self.started_at = time.time()
        self._closed = False
        self.root = Path(tempfile.mkdtemp(prefix=f"{self.id}-"))
        register(self)
        try:
            self._prepare_root(snapshot)
            self.process = subprocess.Popen(
                self._bwrap_argv(
                    toolbox_argv(str(harness_python()), config.observer), cwd=TOOLBOX_PARENT
                ),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                preexec_fn=self._limit_resources,
            )
            self.toolbox = ToolboxClient(PipeChannel(self.process), self.id)
            self.toolbox.wait_ready(config.start_timeout_s)
        except Exception:
            self.close()
            raise

    def _prepare_root(self, snapshot: Snapshot | None) -> None:
        if snapshot:
            shutil.copytree(
                snapshot.ref,
                self.root,
                dirs_exist_ok=True,
                symlinks=True,
                ignore=confined.skip_special,
            )
        for name in WRITABLE_ROOTS.values():
            (self.root / name).mkdir(exist_ok=True)
        # Login shells reset PATH, so the harness's Python is put where every PATH looks: a bin
        # folder mounted over /usr/local/bin. A script, not a symlink: through a symlink python
        # would not find its venv's pyvenv.cfg and would run as the bare base install.
        bin_dir = self.root / "bin"
        bin_dir.mkdir(exist_ok=True)
        launcher = f'#!/bin/sh\nexec {shlex.quote(str(harness_python()))} "$@"\n'
        for name in ("python3", "python"):
            path = bin_dir / name
            if path.is_symlink() or path.exists():
                path.unlink()
            path.write_text(launcher)
            path.chmod(0o755)
        # An empty host folder, read-only inside, holds the toolbox's mount point: the toolbox puts
        # /opt/stateact first on its sys.path, so the agent must not be able to add modules there.
        (self.root / "opt" / "toolbox").mkdir(parents=True, exist_ok=True)
        (self.root / "passwd").write_text(PASSWD)
        (self.root / "group").write_text(GROUP)

    def _bwrap_argv(self, argv: list[str], cwd: str = SANDBOX_HOME) -> list[str]:
        env = {
            "HOME": SANDBOX_HOME,
            "USER": SANDBOX_USER,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "PYTHONDONTWRITEBYTECODE": "1",
            **self.config.env,
        }
        command = [bwrap_path(), "--die-with-parent", "--new-session", "--unshare-all"]
        if self.config.network:
            command.append("--share-net")
        command += ["--unshare-user", "--uid", "1000", "--gid", "1000", "--hostname", "stateact"]
        command += ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for link in ("lib", "lib64", "bin", "sbin"):
            if Path(f"/usr/{link}").exists():
                command += ["--symlink", f"usr/{link}", f"/{link}"]
        command += ["--ro-bind", str(self.root / "bin"), "/usr/local/bin"]
        command += ["--ro-bind", str(self.root / "passwd"), "/etc/passwd"]
        command += ["--ro-bind", str(self.root / "group"), "/etc/group"]
        command += ["--proc", "/proc", "--dev", "/dev"]
        for inside, name in WRITABLE_ROOTS.items():
            command += ["--bind", str(self.root / name), inside]
        command += ["--ro-bind", str(self.root / "opt"), TOOLBOX_PARENT]
        command += ["--ro-bind", str(TOOLBOX_DIR), f"{TOOLBOX_PARENT}/toolbox"]
        for folder in python_mounts():
            command += ["--ro-bind", folder, folder]
        command += ["--clearenv"]
        for key, value in env.items():
            command += ["--setenv", key, value]
        command += ["--chdir", cwd, "--", *argv]
        return command

    def _limit_resources(self) -> None:
        limit = self.config.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    def exec(
        self, argv: list[str], timeout: float = 120.0, user: str = SANDBOX_USER
    ) -> tuple[int, str]:
        return exec_through_toolbox(self, argv, timeout)

    def freeze_agent(self, end: bool = False) -> FrozenAgent:
        """Stop every other process in the sandbox's namespaces (the toolbox sends the stop: there
        is no root here, so the observers share the agent's uid; see docs/security.md)."""
        return FrozenAgent.from_answer(asdict(run(self, ProcFreeze(end=end), wait_s=60)))

    def thaw_agent(self, frozen: FrozenAgent) -> None:
        run(self, ProcThaw(frozen=frozen.frozen), wait_s=60)

    def interactive_argv(self) -> list[str]:
        """A shell in namespaces of its own over this sandbox's home and /tmp."""
        return self._bwrap_argv(["bash"])

    def _confined(self, sandbox_path: str) -> tuple[Path, tuple[str, ...]]:
        """The host folder backing `sandbox_path` and the path's parts below it (normalised)."""
        path = sandbox_parts(sandbox_path)
        for inside, name in WRITABLE_ROOTS.items():
            if path == PurePosixPath(inside) or PurePosixPath(inside) in path.parents:
                return self.root / name, path.relative_to(inside).parts
        roots = " or ".join(WRITABLE_ROOTS)
        raise SandboxError(
            f"the local backend can only copy files under {roots}, not {sandbox_path}."
        )

    def copy_in(self, host_path: Path, sandbox_path: str) -> None:
        host_path = Path(host_path)
        if not host_path.exists():
            raise SandboxError(f"cannot copy {host_path} into the sandbox: it does not exist.")
        root, parts = self._confined(sandbox_path)
        confined.copy_in(host_path, root, parts)

    def copy_out(self, sandbox_path: str, host_path: Path, max_bytes: int | None = None) -> None:
        root, parts = self._confined(sandbox_path)
        try:
            confined.copy_out(root, parts, Path(host_path), max_bytes or COPY_LIMIT_BYTES)
        except FileNotFoundError:
            raise FileNotFoundError(sandbox_path) from None

    def snapshot(self) -> Snapshot:
        target = Path(tempfile.mkdtemp(prefix=f"{self.id}-snapshot-"))
        for name in WRITABLE_ROOTS.values():
            # Sockets and FIFOs (a running program's) cannot be copied and hold no state: left out.
            shutil.copytree(
                self.root / name, target / name, symlinks=True, ignore=confined.skip_special
            )
        return Snapshot(backend=self.backend, ref=str(target), created_at=time.time())

    def persist(self, run_dir: Path, name: str) -> Snapshot:
        # A folder kept with the run: it lives exactly as long as the run directory.
        snapshot = self.snapshot()
        target = Path(run_dir) / "snapshots" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(snapshot.ref, target)
        return Snapshot(self.backend, str(target.resolve()), snapshot.created_at)

    def discard_snapshot(self, snapshot: Snapshot) -> None:
        discard_snapshot(snapshot.ref)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        unregister(self)
        process = getattr(self, "process", None)
        if process is not None:
            self.toolbox.channel.close()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(self.root, ignore_errors=True)


def snapshot_exists(ref: str) -> bool:
    """Whether the snapshot folder `ref` is still there."""
    return Path(ref).is_dir()


def discard_snapshot(ref: str) -> bool:
    """Remove the snapshot folder `ref`."""
    shutil.rmtree(ref, ignore_errors=True)
    return True
