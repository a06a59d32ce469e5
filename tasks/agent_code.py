"""Where agent-written code is executed: only in a throwaway sandbox, never with a view of the host.

A metric that must run the agent's code (OSWorld's check_python_file_by_test_suite imports it)
starts a fresh container of the image the agent's sandbox ran (the stock base image when the state
comes from a folder, as in `stateact check`), offline and with its own CPU, memory, process and
time limits, copies the code in and removes the container afterwards. It is a fresh one rather
than a snapshot of the agent's: the checker's own tools there (python, the runner) are then the
image's, not anything the agent could have changed with --agent-sudo, and OSWorld runs these tests
in its evaluator's environment, not in the task's machine either.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from contextvars import ContextVar

from sandboxes import Sandbox, SandboxConfig, open_sandbox

THROWAWAY = SandboxConfig(
    backend="docker", image="stateact-base", memory_mb=1024, cpus=1.0, pids_limit=128
)
"""The limits of a sandbox that runs agent code (the image follows the agent's sandbox)."""

_agent_config: ContextVar[SandboxConfig | None] = ContextVar("agent_config", default=None)


@contextlib.contextmanager
def agent_sandbox_is(config: SandboxConfig | None) -> Iterator[None]:
    """While scoring a state that lives in a sandbox of `config`: throwaways use its image."""
    token = _agent_config.set(config)
    try:
        yield
    finally:
        _agent_config.reset(token)


def throwaway_config() -> SandboxConfig:
    """THROWAWAY, on the image of the agent's docker sandbox when there is one."""
    agent = _agent_config.get()
    if agent is not None and agent.backend == "docker":
        return dataclasses.replace(THROWAWAY, image=agent.image)
    return THROWAWAY


@contextlib.contextmanager
def throwaway_sandbox() -> Iterator[Sandbox]:
    """A fresh, offline, limited sandbox for agent code, removed when the block ends."""
    with open_sandbox(throwaway_config()) as sandbox:
        yield sandbox
