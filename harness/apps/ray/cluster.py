"""The Ray side of `--ray`: connect, check the nodes, share one request budget, clean up.

Ray is an optional dependency (`pip install 'stateact[ray]'`) and is imported only here, lazily,
when `--ray` is given. Every node that runs sandboxes offers the custom resource
`stateact_sandbox`, one unit per sandbox it can hold (`ray start --resources
'{"stateact_sandbox": 4}'`); each task takes one unit and opens its sandbox through that node's
own Docker engine.
"""

from __future__ import annotations

import io
import logging
import os
import socket
import tarfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.kernel.core import StateActError
from harness.models.throttle import set_request_gate
from harness.run.config import RunConfig
from sandboxes import SandboxError
from sandboxes.docker_backend import docker_client, reap_orphans, resolve_image
from sandboxes.images.build import build_image

log = logging.getLogger(__name__)

RESOURCE = "stateact_sandbox"
NAMESPACE = "stateact"
INSTALL_HINT = (
    "Ray is not installed; install it with `pip install 'stateact[ray]'` (or `make setup`)."
)
LOOPBACK = "127.0.0.1"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # read once, when ray is imported
CONNECT_TIMEOUT_S = 5.0
CANCEL_GRACE_S = 60.0
# Ray's own services: no dashboard, no usage report, nothing phoned home.
QUIET_RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_DISABLE_DOCKER_CPU_WARNING": "1"}


@dataclass
class RayOptions:
    """How a suite or batch runs on a Ray cluster."""

    address: str
    """`HOST:PORT` of a running cluster's head, or `auto` (a running local cluster, else a new
    one)."""
    retries: int = 3
    """Times a task whose node was lost is started again on another node."""
    image_archive: str | None = None
    """A `docker save` tarball, at this path on every node, loaded where the image is missing;
    None builds the missing image on the node from the same definitions (same content hash)."""
    requests_per_minute: float | None = None
    """Model API requests per minute across the whole cluster; None: no shared limit."""
    local_slots: int = 1
    """Sandbox slots of the one-node cluster `auto` starts when none is running."""


def import_ray(address: str = "auto"):
    """The `ray` module, or a StateActError saying how to install it."""
    host = address.removeprefix("ray://").rpartition(":")[0]
    if address == "auto" or host in LOOPBACK_HOSTS:
        # Ray turns a loopback address into this machine's outward one before it dials; a
        # cluster on 127.0.0.1 (and the one `auto` may start) must be reached where it is.
        os.environ.setdefault(LOOPBACK_SWITCH, "0")
    try:
        import ray
    except ImportError:
        raise StateActError(INSTALL_HINT) from None
    return ray


def _check_reachable(address: str) -> None:
    """A clear sentence for a head that does not answer, before Ray spends a minute retrying."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        with socket.create_connection((host or LOOPBACK, int(port)), timeout=CONNECT_TIMEOUT_S):
            return
    except ValueError:
        raise StateActError(
            f"--ray {address!r} is not an address; give HOST:PORT of the cluster's head or `auto`."
        ) from None
    except OSError as exc:
        raise StateActError(
            f"no Ray cluster answers at {address} ({exc.strerror or exc}); start one with "
            "`ray start --head --resources '{\"stateact_sandbox\": N}'` or pass --ray auto."
        ) from None


class RayCluster:
    """A connection to a Ray cluster for one run; `close()` disconnects (and stops what it
    started)."""

    def __init__(self, options: RayOptions):
        os.environ.update(QUIET_RAY_ENV)
        self.ray = import_ray(options.address)
        self.options = options
        common = dict(
            include_dashboard=False,
            log_to_driver=False,
            namespace=NAMESPACE,
            configure_logging=False,
        )
        if options.address != "auto":
            _check_reachable(options.address)
            self.ray.init(address=options.address, **common)
        else:
            try:
                self.ray.init(address="auto", **common)
            except ConnectionError:  # no cluster on this machine: start a one-node one
                self.ray.init(
                    resources={RESOURCE: options.local_slots},
                    _node_ip_address=LOOPBACK,
                    **common,
                )
        self.limiter = None
        try:
            self._check_resource()
        except BaseException:
            self.close()
            raise

    def _check_resource(self) -> None:
        if not self.ray.cluster_resources().get(RESOURCE):
            raise StateActError(
                f"the Ray cluster at {self.options.address} offers no `{RESOURCE}` resource, so no "
                f"node may run sandboxes; start its nodes with `ray start … --resources "
                f"'{{\"{RESOURCE}\": N}}'` (N sandboxes per node)."
            )

    def sandbox_nodes(self) -> list[dict]:
        """Alive nodes that offer sandbox slots."""
        return [
            node
            for node in self.ray.nodes()
            if node.get("Alive") and node.get("Resources", {}).get(RESOURCE)
        ]

    def on_node(self, function, node_id: str):
        """`function` as a Ray task pinned to the node `node_id`, taking no slot."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        return self.ray.remote(function).options(
            num_cpus=0,
            max_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
        )

    def prepare(self, config: RunConfig) -> None:
        """Every sandbox node has a Docker engine and the image (loaded or built), or one
        sentence."""
        nodes = self.sandbox_nodes()
        refs = {
            self.on_node(prepare_node, n["NodeID"]).remote(config, self.options.image_archive): n
            for n in nodes
        }
        for ref, node in refs.items():
            error = self.ray.get(ref)
            if error:
                raise StateActError(
                    f"the Ray node {node['NodeManagerAddress']} ({node['NodeID'][:8]}) "
                    f"cannot run sandboxes: {error}"
                )
        if self.options.requests_per_minute:
            bucket = self.ray.remote(TokenBucket).options(num_cpus=0)
            self.limiter = bucket.remote(self.options.requests_per_minute / 60.0)

    def sweep(self) -> None:
        """Remove sandboxes whose worker died with its node (they cannot close themselves)."""
        refs = [self.on_node(sweep_node, n["NodeID"]).remote() for n in self.sandbox_nodes()]
        try:
            self.ray.get(refs, timeout=CANCEL_GRACE_S)
        except Exception as exc:  # noqa: BLE001 -- cleanup goes on; the next run reaps the rest
            log.warning("could not sweep every node: %s", exc)

    def remote(self, function):
        """`function` as a Ray task that takes one sandbox slot of a node; a task lost with its
        node is started again up to `retries` times (an exception of its own is not retried)."""
        return self.ray.remote(function).options(
            num_cpus=0,
            resources={RESOURCE: 1},
            max_retries=self.options.retries,
            retry_exceptions=False,
        )

    def gather(self, pending: dict, collect: Callable, on_interrupt: Callable | None = None):
        """Wait for the `pending` refs (ref -> key), calling `collect(ref, key)` as each ends; on
        an interruption cancel the rest (after `on_interrupt()`), then sweep the nodes."""
        try:
            while pending:
                done, _ = self.ray.wait(list(pending), num_returns=1, timeout=0.5)
                for ref in done:
                    collect(ref, pending.pop(ref))
        except BaseException:
            if on_interrupt is not None:
                on_interrupt()
            self.cancel(list(pending))
            raise
        self.sweep()

    def cancel(self, refs: list) -> None:
        """Cancel running tasks (their sandboxes close as they stop), then force the stragglers."""
        for ref in refs:
            self.ray.cancel(ref, force=False)
        if refs:
            _, stuck = self.ray.wait(refs, num_returns=len(refs), timeout=CANCEL_GRACE_S)
            for ref in stuck:
                self.ray.cancel(ref, force=True)
        self.sweep()

    def close(self) -> None:
        if self.ray.is_initialized():
            self.ray.shutdown()


class TokenBucket:
    """A cluster-wide request budget (run as one Ray actor): `rate` requests per second, burst
    1+."""

    def __init__(self, rate: float, burst: float = 1.0):
        self.rate = rate
        self.capacity = max(1.0, burst)
        self.tokens = self.capacity
        self.updated = time.monotonic()

    def reserve(self) -> float:
        """Take one token (borrowing from the future); returns how long the caller must wait."""
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        self.tokens -= 1.0
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate


class BucketGate:
    """The request gate a worker installs: wait for the cluster's token bucket."""

    def __init__(self, bucket):
        self.bucket = bucket

    def __call__(self) -> None:
        import ray

        time.sleep(ray.get(self.bucket.reserve.remote()))


def lost_task(ray, exc: Exception, retries: int) -> tuple[str, str]:
    """(status, reason) of a Ray task that gave no result: its node lost, or its code failed."""
    if isinstance(exc, ray.exceptions.RayTaskError):
        return "error", f"the task failed on its node: {exc.cause!r}"[:2000]
    reason = f"its Ray node or worker was lost {retries + 1} time(s): {type(exc).__name__}"
    return "node_lost", reason


def ready_node(config: RunConfig, limiter, image_archive: str | None) -> None:
    """On a node, before a task runs: the cluster's request limit and the sandbox image."""
    use_limiter(limiter)
    ensure_image(config, image_archive)


def use_limiter(limiter) -> None:
    """Install (or, with None, remove) the cluster's request budget in this worker process."""
    set_request_gate(BucketGate(limiter) if limiter is not None else None)


def node_identity() -> dict:
    """The node running this Ray task: its id, address and host name."""
    import ray

    context = ray.get_runtime_context()
    return {
        "node": context.get_node_id(),
        "node_ip": ray.util.get_node_ip_address(),
        "node_host": socket.gethostname(),
    }


_ready_lock = threading.Lock()
_ready_images: set[str] = set()


def prepare_node(config: RunConfig, image_archive: str | None) -> str | None:
    """On a node: None when sandboxes can start here (loading or building the image if needed),
    else the reason in one sentence."""
    try:
        ensure_image(config, image_archive)
    except (StateActError, SandboxError) as exc:
        return str(exc)
    return None


def ensure_image(config: RunConfig, image_archive: str | None) -> None:
    """The sandbox image on this node's engine: there already, loaded from the archive, or built."""
    if config.sandbox.backend != "docker":
        return
    with _ready_lock:
        if config.sandbox.image in _ready_images:
            return
        client = docker_client()
        try:
            resolve_image(client, config.sandbox.image)
        except SandboxError:
            name = config.sandbox.image.removeprefix("stateact-")
            if image_archive:
                _load_archive(client, image_archive)
            elif ":" not in name:
                log.warning("building the %s image on this node", name)
                build_image(name, log=log.info, client=None)
            resolve_image(client, config.sandbox.image)  # still missing: its sentence
        _ready_images.add(config.sandbox.image)


def _load_archive(client, path: str) -> None:
    if not Path(path).is_file():
        raise StateActError(f"the image archive {path} is not a file on this node.")
    with open(path, "rb") as handle:
        client.images.load(handle)


def sweep_node() -> list[str]:
    """On a node: remove the sandboxes and snapshots whose owning process is gone."""
    try:
        return reap_orphans(docker_client())
    except SandboxError:
        return []


def pack_folder(folder: Path) -> bytes:
    """A folder as tar bytes (to send a run folder back to the driver)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        if folder.exists():
            tar.add(folder, arcname=".")
    return buffer.getvalue()


def unpack_folder(data: bytes, folder: Path) -> None:
    """Unpack `pack_folder` bytes into `folder`; the data filter refuses links and paths outside."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(folder, filter="data")
