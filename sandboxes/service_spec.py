"""What one service of a stack is (`ServiceSpec`): where its image comes from, the names it answers
under on the stack's network, how it is probed, how it runs and within which limits; and a whole
stack's plan (`StackPlan`: its services and the sites StateAct's front proxy serves for them)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .base import SandboxError
from .service_routes import Site

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,62}$")
IMAGE_PREFIX = "stateact-service-"
"""Built service images are kept (a build may take many minutes) and reused by the next suite."""
FRONT_NAME = "stateact-front"
RESERVED_NAMES = frozenset({"probe", FRONT_NAME})
"""StateAct's own containers of a stack (`probe` as ever; the front's name is unlikely to be a
site's)."""


class ServiceLimits(BaseModel):
    """A service container's share of the machine: memory (no swap beyond it), CPUs, processes
    (threads count). The defaults suit a web site's server; GitLab needs several GB."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    memory_mb: int = Field(1024, ge=6)
    cpus: float = Field(1.0, gt=0)
    """At most the engine's CPU count (a larger value is lowered to it, with a log line)."""
    pids: int = Field(1024, gt=0)


class ServiceRuntime(BaseModel):
    """How the container runs beyond its image's defaults (compose's keys of the same names)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    entrypoint: list[str] | None = None
    user: str | None = None
    working_dir: str | None = None
    tmpfs: dict[str, str] = Field(default_factory=dict)
    """Container path -> mount options (`size=64m`); empty options for the defaults."""
    restart: dict | None = None
    """The engine's restart policy (`{"Name": "on-failure", "MaximumRetryCount": 3}`)."""
    init: bool | None = None
    shm_size: str | None = None


class ServiceSpec(BaseModel):
    """One service: where its image comes from, the host names it answers under, its probe."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str
    context: Path | None = None
    """A checkout holding the Dockerfile to build (the user's, built on this machine)."""
    dockerfile: str = "Dockerfile"
    build_args: dict[str, str] = Field(default_factory=dict)
    target: str | None = None
    """A multi-stage Dockerfile's stage to build."""
    image: str | None = None
    """A local image instead of a build (never pulled)."""
    hosts: list[str] = Field(default_factory=list)
    """The names sandboxes reach it under (network aliases); the first is probed."""
    port: int = Field(80, gt=0, lt=65536)
    health_path: str | None = "/"
    """Probed over HTTP until it answers below 500; None: only checked to be running (a compose
    service is probed through the sites that route to it)."""
    environment: dict[str, str] = Field(default_factory=dict)
    command: list[str] | None = None
    build_network: str = "none"
    """The build's network (`host` lets a Dockerfile fetch its dependencies while building)."""
    limits: ServiceLimits = Field(default_factory=ServiceLimits)
    runtime: ServiceRuntime = Field(default_factory=ServiceRuntime)

    @model_validator(mode="after")
    def _one_source(self) -> ServiceSpec:
        if not NAME_PATTERN.match(self.name):
            raise ValueError(f"the service name {self.name!r} must be lowercase letters and digits")
        if self.name in RESERVED_NAMES:
            raise ValueError(f"the service name {self.name!r} is StateAct's own; choose another")
        if (self.context is None) == (self.image is None):
            raise ValueError(f"the service {self.name!r} needs either a context or an image")
        return self

    def probe_url(self) -> str:
        host = self.hosts[0] if self.hosts else self.name
        return f"http://{host}:{self.port}{self.health_path or '/'}"

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


class StackPlan(BaseModel):
    """The services to start and the sites the front proxy serves for them (none: no front)."""

    model_config = ConfigDict(extra="forbid")

    services: list[ServiceSpec] = Field(default_factory=list)
    sites: list[Site] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    """What a compose file asked for that is left out, each with why (logged at the start)."""

    def host_names(self) -> set[str]:
        """Every name the stack answers under on its network (the host proxy allows these)."""
        names = {site_host for site in self.sites for site_host in site.hosts}
        for spec in self.services:
            names.update([spec.name, *spec.hosts])
        return names


def service_image_tag(spec: ServiceSpec) -> str:
    """The tag a built service is kept under: one per checkout, Dockerfile, stage and build
    arguments, so two suites building a service of the same name differently keep apart."""
    source = f"{spec.context.resolve()}\0{spec.dockerfile}"
    if spec.target or spec.build_args:  # (so a plain build keeps the tag earlier versions gave)
        args = "\0".join(f"{k}={v}" for k, v in sorted(spec.build_args.items()))
        source += f"\0{spec.target or ''}\0{args}"
    return f"{IMAGE_PREFIX}{spec.name}:{hashlib.sha256(source.encode()).hexdigest()[:12]}"
