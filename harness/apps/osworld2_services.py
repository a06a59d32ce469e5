"""The services an OSWorld 2.0 run or suite starts first (the mock websites, GitLab, a services
file's), once for all its tasks: while they run, every task's sandbox joins their network, the
benchmark builds their host names from WEBSITE_HOST_SUFFIX, and the benchmark's own process (the
bridge, on the host) reaches them through the stack's loopback proxy (HTTP_PROXY and HTTPS_PROXY).

    with osworld2_services(config) as config:    # config: a copy pointing at the services
        run_suite(…, config, …)
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from harness.apps.osworld2_options import OSWORLD2_IMAGE
from harness.kernel.core import StateActError
from harness.run.config import RunConfig
from sandboxes.base import SandboxError
from sandboxes.docker_backend import docker_client, resolve_image
from sandboxes.images.apps import definition_name
from sandboxes.services import ServiceStack
from tasks.osworld2.services import host_suffix, service_plan

log = logging.getLogger(__name__)

FRONT_IMAGE = "base"
"""The front proxy needs only python3: the smallest of StateAct's images."""


@contextmanager
def osworld2_services(
    config: RunConfig, health_timeout_s: float | None = None
) -> Iterator[RunConfig]:
    """Start the services `config.osworld2` names (none: `config` unchanged) and yield the config
    the tasks run under; the services are removed when the block ends, however it ends."""
    osworld2 = config.osworld2
    if osworld2 is None or not osworld2.starts_services:
        yield config
        return
    if config.sandbox.backend != "docker":
        raise StateActError(
            "OSWorld 2.0's services run as Docker containers: use the docker sandbox backend "
            "(leave out --sandbox local) or start them yourself and set WEBSITE_HOST_SUFFIX."
        )
    plan = service_plan(osworld2)
    for spec in plan.services:
        spec.check_source()  # a missing checkout is named before any engine is asked
    for note in plan.notes:  # what a compose file asked for and is left out: said, not hidden
        log.warning("%s", note)
    client = docker_client()
    # The probe runs in the sandboxes' own image: what it reaches, a sandbox reaches.
    probe_image = resolve_image(client, config.sandbox.image)
    front_image = resolve_image(client, FRONT_IMAGE) if plan.sites else None
    timeout = {} if health_timeout_s is None else {"health_timeout_s": health_timeout_s}
    with ServiceStack.of(plan, probe_image, front_image=front_image, **timeout) as stack:
        names = ", ".join(s.name for s in plan.services)
        log.info(
            "services %s up on the network %s (host proxy %s)",
            names,
            stack.network,
            stack.proxy_url,
        )
        started = config.model_copy(deep=True)
        started.sandbox.network = True
        started.sandbox.network_mode = stack.network
        started.osworld2.host_suffix = host_suffix(osworld2)
        started.osworld2.services_proxy = stack.proxy_url
        yield started


def require_sandbox_image(config: RunConfig) -> None:
    """Before an OSWorld 2.0 run or suite starts anything: its image is built. The `osworld2`
    image `--osworld2` takes by default is several GB that not everyone builds, so its absence is
    one sentence naming both ways on."""
    if config.sandbox.backend != "docker":
        return
    client = docker_client()  # no engine: its own sentence
    try:
        resolve_image(client, config.sandbox.image)
    except SandboxError:
        if definition_name(config.sandbox.image) != OSWORLD2_IMAGE:
            raise
        raise StateActError(
            "the osworld2 image (OSWorld 2.0's applications) is not built: build it with "
            "`stateact image build osworld2`, or pass --image desktop to run on the desktop "
            "image without them."
        ) from None
