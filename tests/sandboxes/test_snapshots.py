"""Snapshots in the sandbox protocol: `persist` on every backend, and
`snapshot_exists`/`discard_snapshot` that work without a running sandbox, so milestones (and
best-of-N) need no backend-specific code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sandboxes import (
    SandboxConfig,
    SandboxError,
    Snapshot,
    discard_snapshot,
    open_sandbox,
    snapshot_exists,
)
from tests.conftest import require_image

BACKENDS = [
    pytest.param("local", id="local"),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
]


def start(backend: str):
    if backend == "docker":
        require_image("base")
    elif not shutil.which("bwrap"):
        pytest.skip("bubblewrap is not installed")
    return open_sandbox(SandboxConfig(backend=backend, image="base"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_persisted_snapshot_outlives_its_sandbox_until_discarded(backend, tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with start(backend) as sandbox:
        sandbox.call("bash.run", command="echo kept > /home/user/state.txt")
        snapshot = sandbox.persist(run_dir, "milestone-1")
        sandbox.call("bash.run", command="echo later > /home/user/state.txt")
    try:
        assert snapshot.backend == backend and snapshot_exists(snapshot)
        if backend == "docker":  # owned by the live run directory: the orphan reaper keeps it
            from sandboxes.docker_backend import docker_client, reap_orphans

            reap_orphans(docker_client())
            assert snapshot_exists(snapshot)
        else:  # a folder kept with the run
            assert run_dir in Path(snapshot.ref).parents
        with open_sandbox(SandboxConfig(backend=backend, image="base"), snapshot) as view:
            assert view.call("bash.run", command="cat state.txt")["output"].strip() == "kept"
    finally:
        assert discard_snapshot(snapshot)
    assert not snapshot_exists(snapshot)
    assert discard_snapshot(snapshot)  # discarding twice is harmless


def test_a_snapshot_of_an_unknown_backend_is_one_clear_error():
    with pytest.raises(SandboxError, match="unknown sandbox backend"):
        snapshot_exists(Snapshot(backend="vm", ref="x", created_at=0.0))
