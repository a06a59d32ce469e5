"""Ray's own multi-node test cluster on 127.0.0.1, and checks that nothing else is touched."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
from collections.abc import Iterator

import docker
import pytest

from harness.apps.ray.cluster import RESOURCE
from sandboxes.docker_backend import LABEL, docker_client

# No usage report, and Ray's "localhost means this machine's outward address" rule switched off,
# so every address Ray uses stays 127.0.0.1.
LOOPBACK_ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}


def require_ray():
    """The ray module; CI (which installs the extra with `make install`) fails without it."""
    try:
        import ray
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI must install the Ray extra (`make install` does)")
        pytest.skip(
            "the Ray extra is not installed (make install adds it)", allow_module_level=True
        )
    return ray


# Ray reads these when it is imported: set them before any test module imports ray.
os.environ.update(LOOPBACK_ENV)
RAY_PROCESS = re.compile(r"^(raylet|gcs_server|ray::.*|.*default_worker\.py.*|.*dashboard.*)$")


@contextlib.contextmanager
def loopback_cluster(slots_per_node: tuple[int, ...]) -> Iterator[tuple[object, list]]:
    """A Ray test cluster with one node per entry (the first is the head), each with that many
    sandbox slots and one CPU, all on 127.0.0.1; removed on exit."""
    from ray.cluster_utils import Cluster

    def node_args(slots: int) -> dict:
        return dict(
            num_cpus=1,
            resources={RESOURCE: slots} if slots else {},
            node_ip_address="127.0.0.1",
        )

    cluster = Cluster(
        initialize_head=True,
        head_node_args={**node_args(slots_per_node[0]), "include_dashboard": False},
        shutdown_at_exit=True,
    )
    try:
        nodes = [cluster.head_node]
        nodes += [cluster.add_node(**node_args(slots)) for slots in slots_per_node[1:]]
        cluster.wait_for_nodes()
        yield cluster, nodes
    finally:
        cluster.shutdown()


def ray_pids() -> list[int]:
    """Processes of Ray's (raylet, GCS, workers, agents) on this machine."""
    listing = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    pids = []
    for line in listing.splitlines():
        pid, _, args = line.strip().partition(" ")
        if RAY_PROCESS.match(args.strip()) or "ray/_private" in args or "ray/dashboard" in args:
            pids.append(int(pid))
    return pids


def non_loopback_sockets(pids: list[int]) -> list[str]:
    """TCP/UDP sockets of `pids` whose local or peer address is not 127.0.0.1 (nor a wildcard
    peer of a listening socket)."""
    wanted = {str(pid) for pid in pids}
    table = subprocess.run(["ss", "-tunapH"], capture_output=True, text=True).stdout
    foreign = []
    for line in table.splitlines():
        owners = set(re.findall(r"pid=(\d+)", line))
        if not owners & wanted:
            continue
        fields = line.split()
        local, peer = fields[4], fields[5]
        for address in (local, peer):
            host = address.rsplit(":", 1)[0].strip("[]").removeprefix("::ffff:")
            if host not in ("127.0.0.1", "*", "0.0.0.0", "::") or (
                address is local and host in ("*", "0.0.0.0", "::")
            ):
                foreign.append(line)
                break
    return foreign


def marked_containers(marker: str) -> list[str]:
    """StateAct containers (any state) whose environment carries `STATEACT_RAY_TEST=marker`."""
    found = []
    client = docker_client()
    for info in client.api.containers(all=True, filters={"label": LABEL}):
        try:  # a sandbox removed since the listing is not left behind
            env = client.api.inspect_container(info["Id"])["Config"]["Env"] or []
        except (docker.errors.NotFound, KeyError):
            continue
        if f"STATEACT_RAY_TEST={marker}" in env:
            found.append(info["Names"][0].lstrip("/"))
    return found


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def descendants(root: int) -> set[int]:
    """`root` and every process under it, now."""
    listing = subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True).stdout
    children: dict[int, list[int]] = {}
    for line in listing.splitlines():
        pid, ppid = map(int, line.split())
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo += children.get(pid, [])
    return found


def containers_of(pids: set[int]) -> list[str]:
    """StateAct containers (any state) started by one of `pids` (their owner label's pid)."""
    found = []
    # The low-level listing: the high-level one inspects each container afterwards, which races
    # with a sandbox being removed at that moment (a 404).
    for info in docker_client().api.containers(all=True, filters={"label": LABEL}):
        owner = (info.get("Labels") or {}).get("stateact.owner", "")
        parts = owner.rsplit(":", 2)
        if len(parts) == 3 and parts[1].isdigit() and int(parts[1]) in pids:
            found.append(info["Names"][0].lstrip("/"))
    return found
