"""Services a suite's sandboxes share (OSWorld 2.0's mock websites and GitLab): each built from the
user's own checkout (or a local image), started once on a private Docker network the sandboxes
join, under the host names the tasks use, health-checked from inside that network, and removed at
the end, on Ctrl-C and, after a crash, by the next StateAct process's reaper.

    specs = [ServiceSpec(name="web", context=Path("~/OSWorld-web"), hosts=["mail.osworld.test"])]
    with ServiceStack(specs, probe_image="stateact-base:…") as stack:
        SandboxConfig(network=True, network_mode=stack.network)   # a sandbox that reaches them

Nothing is pulled: a build uses what its Dockerfile names (a base image missing locally fails with
the engine's sentence), and its build network is `none` unless the spec says otherwise. The health
check is an HTTP GET from a probe container on the network, never a request from the host to the
network's private-range addresses.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
import uuid
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .base import SandboxError
from .docker_backend import LABEL, OWNER_LABEL, docker_client, engine_errors
from .lifecycle import owner_label, register, unregister

log = logging.getLogger(__name__)

SERVICE_LABEL = "stateact.service"
"""Names the service a container plays (the probe's value is `probe`), for `docker ps` readers."""
IMAGE_PREFIX = "stateact-service-"
"""Built service images are kept (a build may take many minutes) and reused by the next suite."""
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
"""Ready means the server answers below 500 (GitLab answers 502 while it starts)."""
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,62}$")


class ServiceSpec(BaseModel):
    """One service: where its image comes from, the host names it answers under, its probe."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str
    context: Path | None = None
    """A checkout holding the Dockerfile to build (the user's, built on this machine)."""
    dockerfile: str = "Dockerfile"
    image: str | None = None
    """A local image instead of a build (never pulled)."""
    hosts: list[str] = Field(default_factory=list)
    """The names sandboxes reach it under (network aliases); the first is probed."""
    port: int = Field(80, gt=0, lt=65536)
    health_path: str = "/"
    environment: dict[str, str] = Field(default_factory=dict)
    command: list[str] | None = None
    build_network: str = "none"
    """The build's network (`host` lets a Dockerfile fetch its dependencies while building)."""

    @model_validator(mode="after")
    def _one_source(self) -> ServiceSpec:
        if not NAME_PATTERN.match(self.name):
            raise ValueError(f"the service name {self.name!r} must be lowercase letters and digits")
        if (self.context is None) == (self.image is None):
            raise ValueError(f"the service {self.name!r} needs either a context or an image")
        return self

    def probe_url(self) -> str:
        host = self.hosts[0] if self.hosts else self.name
        return f"http://{host}:{self.port}{self.health_path}"

    def check_source(self) -> None:
        """A missing checkout or Dockerfile as one sentence, before any build."""
        if self.context is None:
            return
        if not self.context.is_dir():
            raise SandboxError(
                f"the checkout {self.context} of the service {self.name} is not a folder."
            )
        if not (self.context / self.dockerfile).is_file():
            raise SandboxError(
                f"the checkout {self.context} of the service {self.name} has no {self.dockerfile}."
            )


class ServiceStack:
    """The network, the service containers and the probe of one suite; `close` removes them all."""

    def __init__(
        self,
        specs: list[ServiceSpec],
        probe_image: str,
        health_timeout_s: float = HEALTH_TIMEOUT_S,
    ):
        self.specs = specs
        self.probe_image = probe_image
        self.health_timeout_s = health_timeout_s
        self.network = f"stateact-services-{uuid.uuid4().hex[:10]}"
        self.client = None
        self.containers: dict[str, object] = {}
        self.images: dict[str, str] = {}
        self._network_object = None

    def labels(self, service: str) -> dict[str, str]:
        return {LABEL: "1", OWNER_LABEL: owner_label(), SERVICE_LABEL: service}

    def start(self) -> ServiceStack:
        for spec in self.specs:
            spec.check_source()
        self.client = docker_client()
        register(self)
        try:
            for spec in self.specs:
                self.images[spec.name] = self._image(spec)
            with engine_errors(f"create the services' network {self.network}"):
                self._network_object = self.client.networks.create(
                    self.network, driver="bridge", internal=True, labels=self.labels("network")
                )
            for spec in self.specs:
                self._run(spec)
            self._start_probe()
            for spec in self.specs:
                self._wait_healthy(spec)
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
                pull=False,
                network_mode=spec.build_network,
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

    def _run(self, spec: ServiceSpec) -> None:
        from docker.types import EndpointConfig

        aliases = list(dict.fromkeys([spec.name, *spec.hosts]))
        with engine_errors(f"start the service {spec.name}"):
            container = self.client.containers.create(
                self.images[spec.name],
                command=spec.command,
                name=f"{self.network}-{spec.name}",
                environment=spec.environment,
                labels=self.labels(spec.name),
                network=self.network,
                networking_config={self.network: EndpointConfig("1.41", aliases=aliases)},
                detach=True,
            )
            self.containers[spec.name] = container
            container.start()

    def _start_probe(self) -> None:
        with engine_errors("start the services' probe"):
            probe = self.client.containers.create(
                self.probe_image,
                command=["sleep", "infinity"],
                name=f"{self.network}-probe",
                init=True,
                user="nobody",
                labels=self.labels("probe"),
                network=self.network,
                cap_drop=["ALL"],
                detach=True,
            )
            self.containers["probe"] = probe
            probe.start()

    def probe(self, url: str) -> bool:
        """Whether `url` answers from inside the network (as a sandbox on it would reach it)."""
        result = self.containers["probe"].exec_run(
            ["python3", "-c", PROBE_SCRIPT, url], user="nobody"
        )
        return result.exit_code == 0

    def _wait_healthy(self, spec: ServiceSpec) -> None:
        url = spec.probe_url()
        deadline = time.monotonic() + self.health_timeout_s
        container = self.containers[spec.name]
        while True:
            if self.probe(url):
                log.info("the service %s answers at %s", spec.name, url)
                return
            container.reload()
            if container.status not in ("created", "running"):
                logs = container.logs(tail=5).decode(errors="replace")
                raise SandboxError(
                    f"the service {spec.name} stopped before it answered {url} "
                    f"(exit {container.attrs['State'].get('ExitCode')}: {_last_line(logs)})."
                )
            if time.monotonic() >= deadline:
                raise SandboxError(
                    f"the service {spec.name} did not answer {url} within "
                    f"{self.health_timeout_s:.0f} s."
                )
            time.sleep(PROBE_INTERVAL_S)

    def close(self) -> None:
        """Remove the containers and the network (idempotent; the built images are kept)."""
        from docker.errors import APIError, NotFound

        unregister(self)
        for container in self.containers.values():
            try:
                container.remove(force=True)
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


def service_image_tag(spec: ServiceSpec) -> str:
    """The tag a built service is kept under: one per checkout and Dockerfile, so two suites
    building a service of the same name from different checkouts keep apart."""
    where = hashlib.sha256(f"{spec.context.resolve()}\0{spec.dockerfile}".encode()).hexdigest()
    return f"{IMAGE_PREFIX}{spec.name}:{where[:12]}"


def _last_line(text) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"
