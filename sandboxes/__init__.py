"""Sandboxes: isolated machines with a toolbox inside (persistent bash and Python, an editor,
files)."""

from __future__ import annotations

from harness.kernel.core import require_one_of

from .base import SANDBOX_HOME, SANDBOX_USER, Sandbox, SandboxConfig, SandboxError, Snapshot

BACKENDS = ("docker", "local")

__all__ = [
    "BACKENDS",
    "SANDBOX_HOME",
    "SANDBOX_USER",
    "Sandbox",
    "SandboxConfig",
    "SandboxError",
    "Snapshot",
    "discard_snapshot",
    "open_sandbox",
    "snapshot_exists",
]


def open_sandbox(config: SandboxConfig | None = None, snapshot: Snapshot | None = None) -> Sandbox:
    """Start a sandbox (from `snapshot` when given) and return it once its toolbox answers.

    Use it as a context manager or call `close()`; it is also removed at exit and on SIGINT/SIGTERM.
    """
    config = config or SandboxConfig()
    backend = snapshot.backend if snapshot else config.backend
    require_one_of("sandbox backend", backend, BACKENDS, SandboxError)
    if backend == "docker":
        from .docker_backend import DockerSandbox

        return DockerSandbox(config, snapshot)
    from .local_backend import LocalSandbox

    return LocalSandbox(config, snapshot)


def snapshot_exists(snapshot: Snapshot) -> bool:
    """Whether a sandbox can still start from `snapshot` (asked before any sandbox runs)."""
    return _backend_module(snapshot.backend).snapshot_exists(snapshot.ref)


def discard_snapshot(snapshot: Snapshot) -> bool:
    """Remove `snapshot`; False when it must wait (a docker image a newer one was built on)."""
    return _backend_module(snapshot.backend).discard_snapshot(snapshot.ref)


def _backend_module(backend: str):
    """The backend's module, imported on first use (the docker SDK loads only for docker)."""
    require_one_of("sandbox backend", backend, BACKENDS, SandboxError)
    if backend == "docker":
        from . import docker_backend

        return docker_backend
    from . import local_backend

    return local_backend
