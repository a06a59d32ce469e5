"""Which services an OSWorld 2.0 suite starts, from the user's own checkouts: the mock-website
stack (`--osworld2-websites PATH`, Task-Web/OSWorld-web), GitLab (`--osworld2-gitlab PATH`,
Task-Web/gitlab) and any others a services file lists (`--osworld2-services FILE`).

A services file is JSON:

    {"host_suffix": "osworld2.test",
     "services": [{"name": "front", "context": "my-sites",
                   "hosts": ["mailhub", "teamchat"], "port": 80, "health_path": "/",
                   "build_network": "host", "limits": {"memory_mb": 2048}},
                  {"name": "gitlab", "image": "gitlab/gitlab-ce:18.7.0-ce.0",
                   "hosts": ["gitlab"], "limits": {"memory_mb": 8192, "cpus": 4}}]}

A host name not ending in `.<host_suffix>` gets it (what the benchmark's `build_website_url` builds
from WEBSITE_HOST_SUFFIX); a relative context is the file's folder's. `--osworld2-websites PATH`
reads `PATH/docker-compose.yml` when there is one (OSWorld-web's form: `sandboxes/compose.py`,
HOST_SUFFIX set to the suffix, its sites behind StateAct's front proxy), else it is one service
built from `PATH/Dockerfile` under every site's host name; GitLab's checkout is one service
under `gitlab.<suffix>`.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from harness.kernel.core import StateActError
from sandboxes.base import SandboxError
from sandboxes.compose import COMPOSE_FILE, read_compose
from sandboxes.service_spec import ServiceLimits, ServiceSpec, StackPlan
from tasks.osworld2.bridge import Osworld2Config

DEFAULT_HOST_SUFFIX = "osworld2.test"
"""`.test` is reserved (RFC 2606): no real host is ever reached under it."""
WEBSITE_SITES = (
    "awsconsole budgetwise calendar careerlink cloudcrm dinogame eventix expenseflow formcraft "
    "glbviewer insurance-claim mailhub overleaf-collab reviewsphere slidepuzzle streamview "
    "studio.streamview teamchat travelhubpro trippza vaultbank visaapplication wandb"
).split()
"""The mock sites with a state API (docs/osworld2.md's reference); each is `<site>.<suffix>`."""
GITLAB_HEALTH = "/users/sign_in"
"""Answers 200 once GitLab's application is up (its nginx gives 502 before)."""
GITLAB_LIMITS = ServiceLimits(memory_mb=8192, cpus=4.0, pids=4096)
"""GitLab's own minimum is 4 GB (with its runner, Pages and Puma workers it wants more)."""
WEBSITES_LIMITS = ServiceLimits(memory_mb=4096, cpus=2.0, pids=4096)
"""All the sites in one container (the single-Dockerfile form)."""


def host_suffix(config: Osworld2Config) -> str:
    """The suffix the services answer under: the option's, else the services file's, else ours."""
    if config.host_suffix:
        return config.host_suffix
    if config.services_file is not None and config.services_file.is_file():
        suffix = _read_file(config.services_file).get("host_suffix")
        if isinstance(suffix, str) and suffix:
            return suffix
    return DEFAULT_HOST_SUFFIX


def service_plan(config: Osworld2Config) -> StackPlan:
    """Every service the options name (host names completed with the suffix) and the sites a
    compose stack's front proxy serves."""
    suffix = host_suffix(config)
    entries: list[dict] = []
    stack = StackPlan()
    if config.websites is not None:
        compose = config.websites / COMPOSE_FILE
        if compose.is_file():  # OSWorld-web as it is: a compose stack behind Caddy
            stack = read_compose(compose, {"HOST_SUFFIX": suffix}, config.build_network)
        else:
            entries.append(
                {
                    "name": "websites",
                    "context": config.websites,
                    "hosts": WEBSITE_SITES,
                    "limits": WEBSITES_LIMITS,
                    "build_network": config.build_network,
                }
            )
    if config.gitlab is not None:
        entries.append(
            {
                "name": "gitlab",
                "context": config.gitlab,
                "hosts": ["gitlab"],
                "health_path": GITLAB_HEALTH,
                "limits": GITLAB_LIMITS,
                "build_network": config.build_network,
            }
        )
    if config.services_file is not None:
        entries += _file_entries(config.services_file)
    specs = [*stack.services, *(_spec(entry, suffix) for entry in entries)]
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise StateActError(f"the OSWorld 2.0 services repeat a name: {', '.join(names)}.")
    return StackPlan(services=specs, sites=stack.sites, notes=stack.notes)


def _file_entries(path: Path) -> list[dict]:
    document = _read_file(path)
    listed = document.get("services")
    if not isinstance(listed, list) or not listed:
        raise StateActError(f"{path} lists no services (a 'services' list).")
    return [
        {**entry, "context": path.parent / entry["context"]}
        if isinstance(entry, dict) and entry.get("context")
        else entry
        for entry in listed
    ]


def _spec(entry: dict, suffix: str) -> ServiceSpec:
    try:
        spec = ServiceSpec.model_validate(entry)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        detail = f"{where}: {message}" if where else message
        raise StateActError(f"a service entry is not valid ({detail}).") from None
    spec.hosts = [h if h.endswith(f".{suffix}") else f"{h}.{suffix}" for h in spec.hosts]
    return spec


def service_blockers(config: Osworld2Config) -> list[str]:
    """The dry run's sentences for services that cannot start (a missing checkout or file)."""
    try:
        for spec in service_plan(config).services:
            spec.check_source()
    except (StateActError, SandboxError) as exc:
        return [str(exc).rstrip(".")]
    return []


def _read_file(path: Path) -> dict:
    try:
        document = json.loads(path.read_text())
    except OSError as exc:
        raise StateActError(f"cannot read the services file {path}: {exc.strerror}.") from None
    except json.JSONDecodeError as exc:
        raise StateActError(
            f"the services file {path} is not JSON: {exc.msg} (line {exc.lineno})."
        ) from None
    if not isinstance(document, dict):
        raise StateActError(f"the services file {path} must hold a JSON object.")
    return document
