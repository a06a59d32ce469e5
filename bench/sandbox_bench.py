"""Sandbox figures: start, bash and Python round trips, 1 MB file write+read, snapshot.

Baselines are the plainest ways: `docker run`/`docker exec` per command, `subprocess.run`, and
`docker cp`-style archive transfers through the engine.
"""

from __future__ import annotations

import base64
import io
import os
import subprocess
import tarfile

from sandboxes import SandboxConfig, open_sandbox
from sandboxes.docker_backend import docker_client, resolve_image

from . import Row, median_time, row

RUNS = 20
START_RUNS = 7
MEGABYTE = os.urandom(1 << 20)


def rows() -> list[Row]:
    client = docker_client()
    image = resolve_image(client, "base")
    config = SandboxConfig(image="base")
    results = []

    def start_and_first_command():
        with open_sandbox(config) as sandbox:
            sandbox.call("bash.run", command="true")

    def docker_run_true():
        subprocess.run(["docker", "run", "--rm", "--network", "none", image, "true"], check=True)

    results.append(
        row(
            "sandbox start to first command ready (base image)",
            median_time(start_and_first_command, START_RUNS),
            START_RUNS,
            "docker run --rm IMAGE true",
            median_time(docker_run_true, START_RUNS),
        )
    )

    with open_sandbox(config) as sandbox:
        container = sandbox.container.id

        def docker_exec(*argv):
            return lambda: subprocess.run(
                ["docker", "exec", "-u", "user", container, *argv], check=True, capture_output=True
            )

        ours = median_time(lambda: sandbox.call("bash.run", command="true"), RUNS * 10)
        results.append(
            row(
                "bash round trip (true), persistent session",
                ours,
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
