"""Which services an OSWorld 2.0 suite starts, from the user's own checkouts: the mock-website
stack (`--osworld2-websites PATH`, Task-Web/OSWorld-web), GitLab (`--osworld2-gitlab PATH`,
Task-Web/gitlab) and any others a services file lists (`--osworld2-services FILE`).

A services file is JSON:

    {"host_suffix": "osworld2.test",
     "services": [{"name": "front", "context": "OSWorld-web/caddy",
                   "hosts": ["mailhub", "teamchat"], "port": 80, "health_path": "/",
                   "build_network": "host"},
                  {"name": "gitlab", "image": "gitlab/gitlab-ce:18.7.0-ce.0",
                   "hosts": ["gitlab"]}]}

A host name not ending in `.<host_suffix>` gets it (what the benchmark's `build_website_url` builds
from WEBSITE_HOST_SUFFIX); a relative context is the file's folder's. The two checkout options
stand for one service each, built from the checkout's own Dockerfile: the websites' under every
site's host name, GitLab's under `gitlab.<suffix>`.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from harness.kernel.core import StateActError
from sandboxes.base import SandboxError
from sandboxes.services import ServiceSpec
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


def host_suffix(config: Osworld2Config) -> str:
    """The suffix the services answer under: the option's, else the services file's, else ours."""
    if config.host_suffix:
        return config.host_suffix
    if config.services_file is not None and config.services_file.is_file():
        suffix = _read_file(config.services_file).get("host_suffix")
        if isinstance(suffix, str) and suffix:
            return suffix
    return DEFAULT_HOST_SUFFIX


def service_specs(config: Osworld2Config) -> list[ServiceSpec]:
    """Every service the options name, host names completed with the suffix."""
    suffix = host_suffix(config)
    specs: list[dict] = []
    if config.websites is not None:
        specs.append({"name": "websites", "context": config.websites, "hosts": WEBSITE_SITES})
    if config.gitlab is not None:
        specs.append(
            {
                "name": "gitlab",
                "context": config.gitlab,
                "hosts": ["gitlab"],
                "health_path": GITLAB_HEALTH,
            }
        )
    if config.services_file is not None:
        document = _read_file(config.services_file)
        listed = document.get("services")
        if not isinstance(listed, list) or not listed:
            raise StateActError(f"{config.services_file} lists no services (a 'services' list).")
        for entry in listed:
            if isinstance(entry, dict) and entry.get("context"):
                entry = {**entry, "context": config.services_file.parent / entry["context"]}
            specs.append(entry)
    found = []
    for entry in specs:
        try:
            spec = ServiceSpec.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            message = first["msg"].removeprefix("Value error, ")
            detail = f"{where}: {message}" if where else message
            raise StateActError(f"a service entry is not valid ({detail}).") from None
        spec.hosts = [h if h.endswith(f".{suffix}") else f"{h}.{suffix}" for h in spec.hosts]
        found.append(spec)
    names = [spec.name for spec in found]
    if len(set(names)) != len(names):
        raise StateActError(f"the OSWorld 2.0 services repeat a name: {', '.join(names)}.")
    return found


def service_blockers(config: Osworld2Config) -> list[str]:
    """The dry run's sentences for services that cannot start (a missing checkout or file)."""
    try:
        specs = service_specs(config)
        for spec in specs:
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
