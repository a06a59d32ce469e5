"""A Docker Compose stack (OSWorld-web's) as a `StackPlan`: no compose runs; StateAct reads the
files and starts each service itself on the stack's private network.

    plan = read_compose(Path("~/OSWorld-web/docker-compose.yml"), {"HOST_SUFFIX": "osworld2.test"})

The file's `include:` list is followed (each included file's paths are its own folder's), every
value is interpolated (`${VAR}`, `${VAR:-default}`, `${VAR-default}`, … from the top folder's
`.env`, then the given variables; the shell's environment is not read, so a run does not depend on
it), and each service becomes a `ServiceSpec` whose container answers under its compose name (so
`vaultbank_web_backend:8000` resolves). The caddy-docker-proxy service is replaced by StateAct's
front proxy (`service_front.py`), which serves the sites its labels declare (`service_routes.py`).

A key that would change what a service does and that StateAct does not carry out is refused with
one sentence naming the file, the service and the key: host paths and the Docker engine's socket
as volumes, privileged containers and added capabilities, host namespaces and network modes, and
any key this reader does not know. What only concerns a host the stack is not published on is
dropped with a note: published ports (the services are reached on their network, and from the host
through StateAct's services proxy), named volumes (their paths live in the container for the
stack's life), health checks (StateAct probes the sites through the front), Swarm's deploy keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml

from .base import SandboxError
from .compose_service import ComposeService
from .compose_values import interpolate, read_env_file
from .service_routes import LabelError, front_routes
from .service_spec import StackPlan

COMPOSE_FILE = "docker-compose.yml"
MAX_INCLUDES = 200
TOP_LEVEL = {"services", "include", "networks", "volumes", "name", "version", "secrets", "configs"}
"""Top-level keys read or harmless (`secrets`/`configs` only matter when a service uses them,
which is refused there)."""


class ComposeError(SandboxError):
    """A compose stack StateAct cannot start as written: one sentence."""


class ComposeFile:
    """One file of the stack, interpolated, with the folder its relative paths start from."""

    def __init__(self, path: Path, document: dict):
        self.path = path
        self.folder = path.parent
        self.document = document


def read_compose(
    path: Path, variables: Mapping[str, str], build_network: str = "none"
) -> StackPlan:
    """The plan of the stack at `path` (its includes followed), `variables` overriding `.env`."""
    path = path.expanduser().resolve()
    known = {**_dotenv(path.parent), **variables}
    notes: list[str] = []
    files = _load(path, known, [], notes)
    readers: dict[str, ComposeService] = {}
    for compose in files:
        services = compose.document.get("services") or {}
        if not isinstance(services, dict):
            raise ComposeError(f"{compose.path}: 'services' must be a mapping.")
        for name, body in services.items():
            if name in readers:
                raise ComposeError(
                    f"{compose.path}: the service {name} is defined twice (also in "
                    f"{readers[name].file})."
                )
            readers[name] = ComposeService(name, body, compose.path, known, notes)
    services, sites = [], []
    started = [r for r in readers.values() if r.started()]
    for reader in _by_dependencies(started, readers):
        spec, declared = reader.read(build_network)
        services.append(spec)
        sites += declared
    plan = StackPlan(services=services, sites=sites, notes=notes)  # (pydantic copies the lists)
    _check_routes(plan, path)
    return plan


def _load(path: Path, variables: Mapping[str, str], chain: list[Path], notes) -> list:
    """`path` and, first, what it includes (as Compose merges them), each file once."""
    if path in chain:
        raise ComposeError(f"{path}: it includes itself (through {chain[-1]}).")
    if len(chain) > MAX_INCLUDES:
        raise ComposeError(f"{path}: the includes go deeper than {MAX_INCLUDES} files.")
    try:
        document = yaml.safe_load(path.read_text()) or {}
    except OSError as exc:
        raise ComposeError(f"cannot read the compose file {path}: {exc.strerror}.") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        raise ComposeError(f"the compose file {path} is not YAML{line}.") from None
    if not isinstance(document, dict):
        raise ComposeError(f"the compose file {path} must hold a mapping.")
    for key in document:
        if key not in TOP_LEVEL and not str(key).startswith("x-"):
            raise ComposeError(f"{path}: the top-level key {key!r} is not supported.")
    missing: set[str] = set()
    try:
        document = interpolate(document, variables, missing)
    except ValueError as exc:
        raise ComposeError(f"{path}: {exc}.") from None
    notes += [f"{path}: the variable {name} is not set (read as empty)" for name in sorted(missing)]
    files = []
    for included in _includes(path, document.get("include")):
        files += _load(included, variables, [*chain, path], notes)
    return [*files, ComposeFile(path, document)]


def _includes(path: Path, value) -> list[Path]:
    """The files `include:` names, relative to `path`'s folder (`path:` lists too)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ComposeError(f"{path}: 'include' must be a list.")
    found = []
    for entry in value:
        if isinstance(entry, dict):
            extra = set(entry) - {"path"}
            if extra:
                raise ComposeError(
                    f"{path}: the include key {sorted(extra)[0]!r} is not supported "
                    "(StateAct reads include entries by their path)."
                )
            entry = entry.get("path")
        for item in entry if isinstance(entry, list) else [entry]:
            if not isinstance(item, str) or not item:
                raise ComposeError(f"{path}: an include entry names no file.")
            target = (path.parent / item).resolve()
            if not target.is_file():
                raise ComposeError(f"{path}: the included file {item} does not exist.")
            found.append(target)
    return found


def _dotenv(folder: Path) -> dict[str, str]:
    env = folder / ".env"
    if not env.is_file():
        return {}
    try:
        return read_env_file(env)
    except ValueError as exc:
        raise ComposeError(f"{exc}.") from None


def _by_dependencies(started: list, readers: dict) -> list:
    """The services in an order that starts each after what it `depends_on` (file order else)."""
    names = {r.name for r in started}
    ordered, placed, visiting = [], set(), set()

    def place(reader) -> None:
        if reader.name in placed:
            return
        if reader.name in visiting:
            raise ComposeError(f"{reader.file}: the service {reader.name} depends on itself.")
        visiting.add(reader.name)
        for needed in reader.dependencies():
            if needed not in readers:
                raise ComposeError(
                    f"{reader.file}: the service {reader.name} depends on {needed}, "
                    "which the stack does not define."
                )
            if needed in names:
                place(readers[needed])
        visiting.discard(reader.name)
        placed.add(reader.name)
        ordered.append(reader)

    for reader in started:
        place(reader)
    return ordered


def _check_routes(plan: StackPlan, path: Path) -> None:
    """Every route's upstream is a service of the stack; no site name is also a service's."""
    answering = {name for spec in plan.services for name in (spec.name, *spec.hosts)}
    for site in plan.sites:
        for route in site.routes:
            if route.upstream not in answering:
                raise ComposeError(
                    f"{path}: the site {site.hosts[0]} routes to {route.upstream}, which no "
                    "service of the stack is."
                )
        taken = answering.intersection(site.hosts)
        if taken:
            raise ComposeError(
                f"{path}: the site name {sorted(taken)[0]} is also a service's name."
            )
    try:
        front_routes(plan.sites)
    except LabelError as exc:
        raise ComposeError(f"{path}: {exc}.") from None
