"""A harness running many sandboxes at once holds more than 1024 file descriptors (the density
benchmark at K = 64 did): the toolbox channels must wait on theirs with poll, which has no such
limit (select raised "filedescriptor out of range")."""

from __future__ import annotations

import os
import resource

import pytest

from sandboxes import SandboxConfig, open_sandbox
from sandboxes.docker_backend import docker_client
from tests.conftest import require_image

SPARE = 1100


@pytest.fixture
def many_fds():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < SPARE + 200:
        pytest.skip(f"this host allows only {hard} open files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, SPARE + 200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(SPARE)]
    try:
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_local_sandbox_answers_past_fd_1024(many_fds):
    with open_sandbox(SandboxConfig(backend="local")) as sandbox:
        assert sandbox.toolbox.channel.process.stdout.fileno() > 1024
        assert sandbox.call("bash.run", command="echo past")["output"].strip() == "past"


@pytest.fixture
def engine_connections_closed():
    """The engine client's pooled connections, kept from earlier tests at low descriptors, are
    closed first: closed while the fds are held, they would leave a hole below 1024 for the
    sandbox's socket to take."""
    require_image("base")
    docker_client().api.close()


@pytest.mark.docker
def test_a_docker_sandbox_answers_past_fd_1024(engine_connections_closed, many_fds):
    with open_sandbox(SandboxConfig(image="base")) as sandbox:
        assert sandbox.toolbox.channel._sock.fileno() > 1024
        assert sandbox.call("bash.run", command="echo past")["output"].strip() == "past"
