"""Sandbox figures: start, bash and Python round trips, 1 MB file write+read, snapshot.

Baselines are the plainest ways: `docker run`/`docker exec` per command, `subprocess.run`, and
`docker cp`-style archive transfers through the engine.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import statistics
import subprocess
import tarfile
import time

from sandboxes import SandboxConfig, open_sandbox
from sandboxes.docker_backend import docker_client, resolve_image

from . import Row, median_time, row

RUNS = 20
START_RUNS = 7
MEGABYTE = os.urandom(1 << 20)


def paired_start_medians(config: SandboxConfig, runs: int) -> tuple[float, float]:
    """Medians of (open to first command answered, the same plus the removal), one sample each
    per start."""
    to_first, cycle = [], []
    for _ in range(runs + 1):  # the first is a warm-up
        started = time.perf_counter()
        with open_sandbox(config) as sandbox:
            sandbox.call("bash.run", command="true")
            to_first.append(time.perf_counter() - started)
        cycle.append(time.perf_counter() - started)
    return statistics.median(to_first[1:]), statistics.median(cycle[1:])


@contextlib.contextmanager
def pipe_floor(sandbox):
    """ENVIRONMENT.md's floor: one line into a running `docker exec -i bash` that echoes it
    back; yields the action that sends a line and reads it back."""
    floor = subprocess.Popen(
        [
            "docker",
            "exec",
            "-i",
            sandbox.container.id,
            "bash",
            "-c",
            "while read l; do echo $l; done",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )

    def pipe():
        floor.stdin.write(b"x\n")
        floor.stdin.flush()
        floor.stdout.readline()

    try:
        yield pipe
    finally:
        floor.kill()
        floor.wait()


def bash_row(sandbox) -> Row:
    """The bash round trip beside the pipe floor, sampled alternately."""
    with pipe_floor(sandbox) as pipe:
        ours, theirs = alternating_medians(
            lambda: sandbox.call("bash.run", command="true"), pipe, RUNS * 25
        )
    return row(
        "bash round trip (true), persistent session",
        ours,
        RUNS * 25,
        "pipe floor: a line in and out of docker exec -i bash",
        theirs,
        note=f"{ours / theirs:.2f}x the floor (target <= 1.2x)",
    )


# Runs inside the sandbox as its user: the toolbox's bash session alone (no engine stream, no
# JSON) beside a line through a pipe to a plain bash, sampled in turn.
IN_SANDBOX_SESSION = r"""
import json, os, statistics, subprocess, sys, tempfile, time
sys.path.insert(0, "/opt/stateact")
from toolbox.bash_session import BashSession
session = BashSession("bench", tempfile.mkdtemp())
plain = subprocess.Popen(["/bin/bash", "--noprofile", "--norc"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, bufsize=0)
def piped():
    plain.stdin.write(b"true; echo E\n")
    plain.stdout.readline()
samples = ([], [])
for n in range(RUNS + 100):
    for action, kept in ((lambda: session.run("true", 10, 1000), samples[0]), (piped, samples[1])):
        started = time.perf_counter()
        action()
        if n >= 100:
            kept.append(time.perf_counter() - started)
print(json.dumps([statistics.median(samples[0]), statistics.median(samples[1])]))
"""


def bash_breakdown_rows(sandbox) -> list[Row]:
    """Where the bash round trip's time goes: the engine stream and the toolbox's JSON lines
    (`ping`, beside the pipe floor's own stream), and the session on its pty inside the sandbox
    (beside a plain bash on a pipe there)."""
    runs = RUNS * 100
    script = IN_SANDBOX_SESSION.replace("RUNS", str(runs))
    done = subprocess.run(
        ["docker", "exec", "-u", "user", sandbox.container.id, "python3", "-c", script],
        check=True,
        capture_output=True,
        text=True,
    )
    session, piped = json.loads(done.stdout)
    with pipe_floor(sandbox) as pipe:
        ping, floor = alternating_medians(lambda: sandbox.call("ping"), pipe, RUNS * 25)
    return [
        row(
            "bash session inside the sandbox (pty, markers, exit code and folder; no stream)",
            session,
            runs,
            "a line through a pipe to a plain bash, inside the sandbox",
            piped,
            note=f"{(session - piped) * 1e6:.0f} us over the plain bash",
        ),
        row(
            "toolbox ping over the engine stream (JSON lines, no session)",
            ping,
            RUNS * 25,
            "pipe floor: a line in and out of docker exec -i bash",
            floor,
            note=f"{ping / floor:.2f}x the floor",
        ),
    ]


def alternating_medians(ours, theirs, runs: int) -> tuple[float, float]:
    """Medians of both, sampled in turn (after warm-ups) so drifting load hits both alike."""
    for _ in range(20):
        ours(), theirs()
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for action, kept in ((ours, samples[0]), (theirs, samples[1])):
            started = time.perf_counter()
            action()
            kept.append(time.perf_counter() - started)
    return statistics.median(samples[0]), statistics.median(samples[1])


def rows() -> list[Row]:
    client = docker_client()
    image = resolve_image(client, "base")
    config = SandboxConfig(image="base")
    results: list[Row] = []

    def start_and_first_command():
        with open_sandbox(config) as sandbox:
            sandbox.call("bash.run", command="true")

    def docker_run_true():
        subprocess.run(["docker", "run", "--rm", "--network", "none", image, "true"], check=True)

    to_first, cycle = paired_start_medians(config, START_RUNS)
    baseline = median_time(docker_run_true, START_RUNS)
    results += [
        row(
            "sandbox start to first command answered (base image)",
            to_first,
            START_RUNS,
            "docker run --rm IMAGE true",
            baseline,
            note=f"{to_first / baseline:.2f}x the baseline (target <= 1.2x); the sandbox is "
            "removed after the sample",
        ),
        row(
            "sandbox start, first command and removal (base image)",
            cycle,
            START_RUNS,
            "docker run --rm IMAGE true",
            baseline,
            note=f"{cycle / baseline:.2f}x the baseline, removal included on both sides",
        ),
    ]

    with open_sandbox(config) as sandbox:
        container = sandbox.container.id
        results.append(bash_row(sandbox))
        results += bash_breakdown_rows(sandbox)

        def docker_exec(*argv):
            return lambda: subprocess.run(
                ["docker", "exec", "-u", "user", container, *argv], check=True, capture_output=True
            )

        results.append(
            row(
                "bash round trip (true), persistent session, beside an exec per command",
                median_time(lambda: sandbox.call("bash.run", command="true"), RUNS * 10),
                RUNS * 10,
                "docker exec per command",
                median_time(docker_exec("true"), RUNS),
            )
        )

        ours = median_time(lambda: sandbox.call("python.run", code="1 + 1"), RUNS * 10)
        results.append(
            row(
                "python round trip (1 + 1), persistent interpreter",
                ours,
                RUNS * 10,
                "docker exec python3 -c",
                median_time(docker_exec("python3", "-c", "1 + 1"), RUNS),
            )
        )

        payload = base64.b64encode(MEGABYTE).decode()

        def write_read_ours():
            sandbox.call("file.write", path="/home/user/bench.bin", data_b64=payload)
            sandbox.call("file.read", path="/home/user/bench.bin")

        def write_read_archive():
            buffer = io.BytesIO()
            with tarfile.open(fileobj=buffer, mode="w") as tar:
                info = tarfile.TarInfo("bench2.bin")
                info.size = len(MEGABYTE)
                tar.addfile(info, io.BytesIO(MEGABYTE))
            sandbox.container.put_archive("/home/user", buffer.getvalue())
            stream, _ = sandbox.container.get_archive("/home/user/bench2.bin")
            b"".join(stream)

        results.append(
            row(
                "file write + read 1 MB (toolbox)",
                median_time(write_read_ours, RUNS),
                RUNS,
                "engine archive put + get",
                median_time(write_read_archive, RUNS),
            )
        )

        def snapshot_cycle():
            sandbox.discard_snapshot(sandbox.snapshot())

        def docker_commit():
            subprocess.run(
                ["docker", "commit", container, "stateact-bench-commit:x"],
                check=True,
                capture_output=True,
            )
            subprocess.run(
                ["docker", "rmi", "-f", "stateact-bench-commit:x"], check=True, capture_output=True
            )

        results.append(
            row(
                "snapshot (commit + discard)",
                median_time(snapshot_cycle, 5),
                5,
                "docker commit + rmi (CLI)",
                median_time(docker_commit, 5),
            )
        )

    local = SandboxConfig(backend="local")

    def local_start():
        with open_sandbox(local) as sandbox:
            sandbox.call("bash.run", command="true")

    def subprocess_true():
        subprocess.run(["true"], check=True)

    results.append(
        row(
            "local (bubblewrap) sandbox start to first command",
            median_time(local_start, START_RUNS),
            START_RUNS,
            "subprocess.run(['true'])",
            median_time(subprocess_true, RUNS),
        )
    )
    with open_sandbox(local) as sandbox:
        ours = median_time(lambda: sandbox.call("bash.run", command="true"), RUNS * 10)
        results.append(
            row(
                "local bash round trip (true)",
                ours,
                RUNS * 10,
                "subprocess.run(['true'])",
                median_time(subprocess_true, RUNS),
            )
        )
    return results
