"""Shared fixtures: real sandboxes (no mocks) and the path to the shared OSWorld task files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# A worktree outside the lead's checkout names the shared folder with $STATEACT_SHARED.
SHARED = Path(os.environ.get("STATEACT_SHARED") or REPO.parent / "shared")
OSWORLD_EXAMPLES = SHARED / "osworld-tasks" / "examples"


def stateact(
    *args: str, env: dict | None = None, timeout: float = 900, cwd: Path = REPO
) -> subprocess.CompletedProcess:
    """`stateact ARGS…` as a user runs it (this interpreter's harness), without the machine's
    provider keys (tests never reach a model API), plus `env`."""
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))
    }
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**environment, **(env or {})},
    )


def docker_ready() -> str | None:
    """None when the engine answers, else why not."""
    try:
        from sandboxes.docker_backend import docker_client

        docker_client()
    except Exception as exc:
        return str(exc)
    return None


def require_docker() -> None:
    """In CI a missing engine is a failure, not a skip: CI must have started it."""
    problem = docker_ready()
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the Docker engine: {problem}")
        pytest.skip(f"no Docker engine: {problem}")


def require_image(name: str) -> None:
    require_docker()
    from sandboxes.docker_backend import docker_client
    from sandboxes.images.build import image_exists

    if not image_exists(docker_client(), name):
        if os.environ.get("CI"):
            pytest.fail(f"CI must build the {name} image first (`stateact image build {name}`)")
        pytest.skip(f"the {name} image is not built")


@pytest.fixture(scope="module")
def base_sandbox():
    """One docker sandbox from the base image, shared by a test module."""
    require_image("base")
    from sandboxes import SandboxConfig, open_sandbox

    with open_sandbox(SandboxConfig(image="base", memory_mb=1024, pids_limit=256)) as sandbox:
        yield sandbox


@pytest.fixture
def local_sandbox():
    if not shutil.which("bwrap"):
        if os.environ.get("CI"):
            pytest.fail("CI must install bubblewrap")
        pytest.skip("bubblewrap is not installed")
    from sandboxes import SandboxConfig, open_sandbox

    with open_sandbox(SandboxConfig(backend="local", memory_mb=2048)) as sandbox:
        yield sandbox


@dataclass(frozen=True)
class Listed:
    """One container as the engine's listing showed it."""

    id: str
    name: str
    labels: dict


def listed_containers(label: str = "stateact.managed", running_only: bool = False) -> list[Listed]:
    """Containers carrying `label`, from one listing call. docker-py's `containers.list` inspects
    each container afterwards and fails with a 404 on a sandbox removed in between."""
    from sandboxes.docker_backend import docker_client

    infos = docker_client().api.containers(all=not running_only, filters={"label": label})
    return [
        Listed(info["Id"], info["Names"][0].lstrip("/"), info.get("Labels") or {}) for info in infos
    ]
