"""Services a suite's sandboxes share (OSWorld 2.0's mock websites and GitLab): each built from the
user's own checkout (or a local image), started once on a private Docker network the sandboxes
join, under the host names the tasks use, health-checked from inside that network, reachable from
the host through a loopback proxy, and removed at the end, on Ctrl-C and, after a crash, by the
next StateAct process's reaper.

    specs = [ServiceSpec(name="web", context=Path("~/OSWorld-web"), hosts=["mail.osworld.test"])]
    with ServiceStack(specs, probe_image="stateact-base:…") as stack:
        SandboxConfig(network=True, network_mode=stack.network)   # a sandbox that reaches them
        stack.proxy_url                                           # HTTP_PROXY for host code

A compose stack's sites (`compose.py`) are served by StateAct's front proxy (`service_front.py`),
a container of the base image holding every site's name on the network; the stack is ready once
every site answers through it. Nothing is pulled: a build uses what its Dockerfile names (a base
image missing locally fails with the engine's sentence), and its build network is `none` unless the
spec says otherwise. Health checks are HTTP GETs from a probe container on the network, and the
host proxy's connections are relay execs in that container (`service_proxy.py`): the host never
sends a request to the network's private-range addresses.
"""

from __future__ import annotations

import io
import json
import logging
import tarfile
import time
import uuid
from pathlib import Path

from .base import SandboxError
from .docker_backend import LABEL, OWNER_LABEL, docker_client, engine_errors
from .lifecycle import owner_label, register, unregister
from .service_proxy import ServicesProxy
from .service_routes import Site, front_routes
from .service_spec import (
    FRONT_NAME,
    IMAGE_PREFIX,
    NAME_PATTERN,
    ServiceLimits,
    ServiceSpec,
    StackPlan,
    service_image_tag,
)

__all__ = ["IMAGE_PREFIX", "NAME_PATTERN", "ServiceSpec", "ServiceStack", "service_image_tag"]

log = logging.getLogger(__name__)

SERVICE_LABEL = "stateact.service"
"""Names the service a container plays (`probe` and `stateact-front` are StateAct's)."""
HEALTH_TIMEOUT_S = 600.0
PROBE_INTERVAL_S = 2.0
PROBE_SCRIPT = (
    "import sys, urllib.request, urllib.error\n"
    "try:\n"
    "    urllib.request.urlopen(sys.argv[1], timeout=5).close()\n"
    "except urllib.error.HTTPError as e:\n"
    "    sys.exit(0 if e.code < 500 else 1)\n"
    "except Exception:\n"
    "    sys.exit(1)\n"
)
"""Ready means the server answers below 500 (GitLab answers 502 while it starts, the front proxy
502 while a site's upstream is down)."""
HELPER_LIMITS = ServiceLimits(memory_mb=256, cpus=1.0, pids=512)
"""The probe (which also carries the host proxy's relays) and the front proxy."""
FRONT_DIR = "/opt/stateact-front"
FRONT_FILES = ("service_front.py", "http_framing.py")
ALIVE = ("created", "running")


class ServiceStack:
    """The network, the service containers, the front, the probe and the host proxy of one suite;
    `close` removes them all."""

    def __init__(
        self,
        specs: list[ServiceSpec],
        probe_image: str,
        health_timeout_s: float = HEALTH_TIMEOUT_S,
        sites: list[Site] = (),
        front_image: str | None = None,
    ):
        """`sites` (a compose stack's) are served by a front proxy of `front_image` (default the
        probe's image)."""
        self.specs = specs
        self.sites = list(sites)
        self.probe_image = probe_image
        self.front_image = front_image or probe_image
        self.health_timeout_s = health_timeout_s
        self.network = f"stateact-services-{uuid.uuid4().hex[:10]}"
        self.client = None
        self.containers: dict[str, object] = {}
        self.images: dict[str, str] = {}
        self.proxy: ServicesProxy | None = None
        self._network_object = None
        self._cpus = 1

    @classmethod
    def of(cls, plan: StackPlan, probe_image: str, **options) -> ServiceStack:
        return cls(plan.services, probe_image, sites=plan.sites, **options)

    @property
    def proxy_url(self) -> str | None:
        """The host proxy (`http://127.0.0.1:PORT`) while the stack runs."""
        return self.proxy.url if self.proxy is not None and self.proxy.listener else None

    def host_names(self) -> set[str]:
        return StackPlan(services=self.specs, sites=self.sites).host_names()

    def labels(self, service: str) -> dict[str, str]:
        return {LABEL: "1", OWNER_LABEL: owner_label(), SERVICE_LABEL: service}

    def start(self) -> ServiceStack:
        for spec in self.specs:
            spec.check_source()
        self.client = docker_client()
        register(self)
        try:
            self._cpus = int(self.client.info().get("NCPU") or 1)
            for spec in self.specs:
                self.images[spec.name] = self._image(spec)
            with engine_errors(f"create the services' network {self.network}"):
                self._network_object = self.client.networks.create(
                    self.network, driver="bridge", internal=True, labels=self.labels("network")
                )
            for spec in self.specs:
                self._run(spec)
            if self.sites:
                self._start_front()
            self._start_probe()
            self._wait_ready()
            self.proxy = ServicesProxy(self.containers["probe"], self.host_names()).start()
        except BaseException:
            self.close()
            raise
        return self

    def _image(self, spec: ServiceSpec) -> str:
        from docker.errors import APIError, BuildError, ImageNotFound

        if spec.image is not None:
            try:
                self.client.images.get(spec.image)
            except ImageNotFound:
                raise SandboxError(
                    f"the image {spec.image} of the service {spec.name} is not on this machine "
                    "(StateAct pulls nothing; build or load it first)."
                ) from None
            return spec.image
        tag = service_image_tag(spec)
        log.info("building the service %s from %s", spec.name, spec.context)
        try:
            self.client.images.build(
                path=str(spec.context),
                dockerfile=spec.dockerfile,
                tag=tag,
                rm=True,
                forcerm=True,  # a failed step's container goes too
                pull=False,
                network_mode=spec.build_network,
                buildargs=spec.build_args or None,
                target=spec.target,
            )
        except BuildError as exc:
            raise SandboxError(
                f"the service {spec.name} did not build from {spec.context}: {_last_line(exc.msg)}"
            ) from None
        except APIError as exc:
            raise SandboxError(
                f"the service {spec.name} did not build from {spec.context}: "
                f"{exc.explanation or exc}"
            ) from None
        return tag

    def _create(self, image: str, name: str, aliases: list[str], limits: ServiceLimits, **extra):
        """A container on the stack's network under `aliases`, within `limits`."""
        from docker.types import EndpointConfig

        cpus = limits.cpus
        if cpus > self._cpus:
            log.info("the service %s asks for %s CPUs; the engine has %d", name, cpus, self._cpus)
            cpus = self._cpus
        with engine_errors(f"start the service {name}"):
            container = self.client.containers.create(
                image,
                name=f"{self.network}-{name}",
                labels=self.labels(name),
                network=self.network,
                networking_config={self.network: EndpointConfig("1.41", aliases=aliases)},
                mem_limit=f"{limits.memory_mb}m",
                memswap_limit=f"{limits.memory_mb}m",
                nano_cpus=int(cpus * 1e9),
                pids_limit=limits.pids,
                detach=True,
                **extra,
            )
            self.containers[name] = container
        return container

    def _run(self, spec: ServiceSpec) -> None:
        runtime = spec.runtime
        optional = {
            "entrypoint": runtime.entrypoint,
            "user": runtime.user,
            "working_dir": runtime.working_dir,
            "tmpfs": runtime.tmpfs or None,
            "restart_policy": runtime.restart,
            "init": runtime.init,
            "shm_size": runtime.shm_size,
        }
        container = self._create(
            self.images[spec.name],
            spec.name,
            list(dict.fromkeys([spec.name, *spec.hosts])),
            spec.limits,
            command=spec.command,
            environment=spec.environment,
            **{key: value for key, value in optional.items() if value is not None},
        )
        with engine_errors(f"start the service {spec.name}"):
            container.start()

    def _start_front(self) -> None:
        """The front proxy: its program and routes copied in, every site's name its alias; as
        `nobody`, without capabilities (port 80 is opened through the unprivileged-port sysctl)."""
        table = front_routes(self.sites)
        front = self._create(
            self.front_image,
            FRONT_NAME,
            list(table),
            HELPER_LIMITS,
            command=[
                "python3",
                "-B",
                "-E",
                "-s",
                f"{FRONT_DIR}/service_front.py",
                f"{FRONT_DIR}/routes.json",
            ],
            user="nobody",
            init=True,
            cap_drop=["ALL"],
            sysctls={"net.ipv4.ip_unprivileged_port_start": "0"},
        )
        files = {name: (Path(__file__).with_name(name)).read_bytes() for name in FRONT_FILES}
        files["routes.json"] = json.dumps({"port": 80, "sites": table}).encode()
        with engine_errors("start the front proxy"):
            front.put_archive("/", _archive(FRONT_DIR, files))
            front.start()

    def _start_probe(self) -> None:
        probe = self._create(
            self.probe_image,
            "probe",
            ["probe"],
            HELPER_LIMITS,
            command=["sleep", "infinity"],
            init=True,
            user="nobody",
            cap_drop=["ALL"],
        )
        with engine_errors("start the services' probe"):
            probe.start()

    def probe(self, url: str) -> bool:
        """Whether `url` answers from inside the network (as a sandbox on it would reach it)."""
        result = self.containers["probe"].exec_run(
            ["python3", "-c", PROBE_SCRIPT, url], user="nobody"
        )
        return result.exit_code == 0

    def _wait_ready(self) -> None:
        """Each probed service, then each site through the front (its upstreams watched), then
        every other service still running."""
        for spec in self.specs:
            if spec.health_path is not None:
                self._wait_answering(spec.probe_url(), spec.name, [spec.name])
        for site in self.sites:
            upstreams = [self._service_of(route.upstream) for route in site.routes]
            self._wait_answering(
                f"http://{site.hosts[0]}/", site.hosts[0], [FRONT_NAME, *upstreams]
            )
        for spec in self.specs:
            self._check_running(spec.name, f"the service {spec.name}")

    def _service_of(self, name: str) -> str:
        return next(s.name for s in self.specs if name in (s.name, *s.hosts))

    def _wait_answering(self, url: str, what: str, watched: list[str]) -> None:
        deadline = time.monotonic() + self.health_timeout_s
        while True:
            if self.probe(url):
                log.info("%s answers at %s", what, url)
                return
            for name in dict.fromkeys(watched):
                self._check_running(name, f"the service {name}", url)
            if time.monotonic() >= deadline:
                raise SandboxError(
                    f"the service {what} did not answer {url} within {self.health_timeout_s:.0f} s."
                )
            time.sleep(PROBE_INTERVAL_S)

    def _check_running(self, name: str, what: str, url: str | None = None) -> None:
        container = self.containers[name]
        container.reload()
        restarting = container.attrs["HostConfig"].get("RestartPolicy", {}).get("Name")
        if container.status in ALIVE or (restarting and container.status == "restarting"):
            return
        logs = container.logs(tail=5).decode(errors="replace")
        before = f" before it answered {url}" if url else ""
        raise SandboxError(
            f"{what} stopped{before} "
            f"(exit {container.attrs['State'].get('ExitCode')}: {_last_line(logs)})."
        )

    def close(self) -> None:
        """Remove the proxy, the containers and the network (idempotent; images are kept)."""
        from docker.errors import APIError, NotFound

        unregister(self)
        if self.proxy is not None:
            self.proxy.close()
            self.proxy = None
        for container in self.containers.values():
            try:  # with its anonymous volumes (an image's VOLUME paths)
                container.remove(force=True, v=True)
            except (NotFound, APIError) as exc:
                log.debug("service container already gone: %s", exc)
        self.containers = {}
        if self._network_object is not None:
            try:
                self._network_object.remove()
            except (NotFound, APIError) as exc:
                log.warning("could not remove the network %s: %s", self.network, exc)
            self._network_object = None

    def __enter__(self) -> ServiceStack:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.close()


def _archive(folder: str, files: dict[str, bytes]) -> bytes:
    """A tar of `files` under `folder`, owned by root and readable by all."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(folder.lstrip("/"))
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(info)
        for name, data in files.items():
            info = tarfile.TarInfo(f"{folder.lstrip('/')}/{name}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _last_line(text) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"
