"""The sandbox seam: where the toolbox lives (a backend) apart from what runs commands (the
toolbox).

A backend starts an isolated machine, starts the toolbox process inside it as user `user` and
hands back a `Channel` to that process's stdio. Everything the agent does to the machine goes
through the toolbox RPC (see `sandboxes/toolbox/server.py` for the methods), so the same client
code serves every backend.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from harness.kernel.core import StateActError
from harness.kernel.sandbox import Sandbox as Sandbox  # the protocol lives in the kernel
from harness.kernel.sandbox import Snapshot as Snapshot

SANDBOX_USER = "user"
SANDBOX_HOME = "/home/user"
TOOLBOX_DIR = Path(__file__).parent / "toolbox"
TOOLBOX_PARENT = "/opt/stateact"
"""Where the toolbox package lives inside a sandbox: root-owned and read-only for user `user`."""


def toolbox_argv(python: str, observer: bool) -> list[str]:
    """How a backend starts the toolbox: an isolated python (`-I`: no cwd, user site or PYTHON*
    variables) that imports the package from its root-owned folder, so nothing the agent wrote
    (a `~/toolbox/`, `~/.local`, PYTHONPATH in an rc file) can stand in for it."""
    launcher = (
        f"import sys; sys.path.insert(0, {TOOLBOX_PARENT!r}); from toolbox.server import main; "
        f"main(observer={bool(observer)})"
    )
    return [python, "-I", "-c", launcher]


class SandboxError(StateActError):
    """The sandbox could not be started, reached or used."""


class Channel(Protocol):
    """A bidirectional line channel to the toolbox process's stdin/stdout."""

    def send_line(self, line: bytes) -> None: ...

    def read_line(self, timeout: float | None) -> bytes: ...

    def close(self) -> None: ...


OSWORLD_SCREEN = (1920, 1080)
"""OSWorld's VM screen: task setups size windows for it (`13584542`'s 132x43 terminal) and
agents and grounders tuned on OSWorld expect it."""
HOST_NETWORK = "host"
"""Docker's host network mode: the only one a dockerd started with --bridge=none offers."""


def shares_host_network(config: SandboxConfig) -> bool:
    """Whether sandboxes of `config` share the host's network namespace (and so one another's)."""
    return config.network and config.backend == "docker" and config.network_mode == HOST_NETWORK


def check_parallel_network(config: SandboxConfig, parallel: int) -> None:
    """Refuse running sandboxes side by side in the host's network namespace.

    They would share loopback ports (OSWorld's Chrome debugging port 9222) and X's abstract
    sockets (every desktop is display :1), so one task could drive another's browser or screen.
    """
    if parallel > 1 and shares_host_network(config):
        raise StateActError(
            "--network in the host's network mode runs one task at a time (sandboxes would share "
            "ports and displays); drop --parallel, or give --network-mode the name of a Docker "
            "bridge network."
        )


@dataclass
class SandboxConfig:
    """How to start a sandbox."""

    backend: str = "docker"
    """`docker` (default, a container) or `local` (bubblewrap namespaces, no daemon)."""
    image: str = "stateact-desktop"
    """Image name (docker backend); the tag is resolved from the image definitions' content hash."""
    memory_mb: int = 4096
    """Memory limit for everything in the sandbox."""
    cpus: float = 2.0
    """CPU limit (docker backend)."""
    pids_limit: int = 512
    """Maximum number of processes and threads inside the sandbox."""
    network: bool = False
    """Give the sandbox a network; off by default (only `lo` inside)."""
    network_mode: str = HOST_NETWORK
    """With `network` (docker backend): `host` (the host's own network namespace; see
    docs/network.md for its risks) or the name of a user-defined Docker bridge network."""
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment variables for processes in the sandbox."""
    display_size: tuple[int, int] = OSWORLD_SCREEN
    """Virtual screen size for the desktop (setup steps, GUI specialist, screenshots); OSWorld's
    1920x1080 by default, `--screen WxH` for another."""
    agent_sudo: bool = False
    """Give the agent's user OSWorld's sudo (password `password`); docker backend only. With it
    the agent can be root in its sandbox: see sandboxes/agent_sudo.py for what that costs."""
    start_timeout_s: float = 60.0
    """How long to wait for the toolbox to answer after the sandbox starts."""
    disk_limit_mb: int = 2048
    """Most the sandbox's files may grow to (docker backend; sparse files count at their length,
    as a commit or a copy-out writes them): past it the sandbox is ended and the run's status is
    `sandbox_limit`."""
    observer: bool = False
    """Every session in this sandbox only observes (a gate's snapshot): see toolbox/observer.py."""


class ToolboxSandboxMixin:
    """What every backend shares once it has a toolbox client: calls and context-manager closing."""

    @property
    def toolbox(self):
        return self._toolbox  # AttributeError until the backend has started it

    @toolbox.setter
    def toolbox(self, client) -> None:
        self._toolbox = client

    def call(self, method: str, *, wait_s: float | None = None, **params) -> dict:
        """One toolbox method through this sandbox's client (`sandboxes/client.py`); typed
        callers use `sandboxes.typed.run`."""
        client = getattr(self, "_toolbox", None)
        if client is None:
            raise SandboxError(f"sandbox {getattr(self, 'id', '?')} has no toolbox yet ({method}).")
        return client.call(method, wait_s=wait_s, **params)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
