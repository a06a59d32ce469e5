"""A compose stack's sites as StateAct's front proxy serves them, read from the Caddy labels
caddy-docker-proxy would read (OSWorld-web's stack routes its sites this way):

    caddy: "http://vaultbank.osworld2.test"            # the site's address(es)
    caddy.0_reverse_proxy: "/api* vaultbank_web_backend:8000"
    caddy.1_reverse_proxy: "vaultbank_web_frontend:80"
    caddy.reverse_proxy: "{{upstreams 3000}}"           # this service's own name, port 3000

`caddy_N` labels are further sites of the same service. Routes are ordered as Caddy orders
directives of one kind: path matchers most specific first (the longest path without its trailing
`*`; the same path exact before wildcard; equal lengths in lexical order), no matcher last; the
`N_` prefixes only name the labels apart. The sites are served over plain HTTP on port 80 (an
`https://` address is noted and served over HTTP). Any other directive, a named matcher or several
upstreams in one route changes what the stack does and is refused with a sentence; directives
that only change how bytes travel (`encode`, `log`, `tls`, `request_body`, `flush_interval`) are
dropped with a note.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

SITE_KEY = re.compile(r"^(caddy(?:_\d+)?)(?:\.(.+))?$")
DIRECTIVE = re.compile(r"^(?:\d+_)?([a-z_]+)(?:\.(.+))?$")
UPSTREAMS = re.compile(r"\{\{\s*upstreams\b([^}]*)\}\}")
HOST_NAME = re.compile(
    r"^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$"
)
UPSTREAM_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,252}$")
"""A compose service's name or alias (underscores allowed, unlike in a site's host name)."""
DROPPED = {
    "encode": "StateAct's front proxy passes bodies as the site sends them",
    "log": "the front proxy keeps no access log",
    "tls": "the sites are served over plain HTTP",
    "request_body": "the front proxy streams bodies and sets no size limit",
}
DROPPED_PROXY_OPTIONS = {"flush_interval": "the front proxy streams every answer as it comes"}
SITE_PORT = 80


class LabelError(ValueError):
    """A Caddy label the front proxy cannot honour (the caller names the file and service)."""


class Route(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    matcher: str | None
    """A Caddy path matcher (`/api*`), or None for every path."""
    upstream: str
    port: int


class Site(BaseModel):
    """One site block: the host names it answers under and its routes, in Caddy's order."""

    model_config = ConfigDict(extra="forbid")

    hosts: list[str]
    routes: list[Route]
    service: str
    """The compose service whose labels declared it."""


def caddy_sites(service: str, labels: dict[str, str], port: int, notes: list[str]) -> list[Site]:
    """The sites `service`'s labels declare (none without Caddy labels); `port` is the service's
    own, for `{{upstreams}}` without one. What is dropped is added to `notes`."""
    blocks: dict[str, dict[str, str]] = {}
    for key, value in labels.items():
        found = SITE_KEY.match(key)
        if found:
            blocks.setdefault(found.group(1), {})[found.group(2) or ""] = str(value)
    sites = []
    for prefix, block in sorted(blocks.items()):
        if "" not in block:
            raise LabelError(f"the Caddy labels {prefix}.* have no site address ({prefix})")
        hosts = site_hosts(block.pop(""), notes)
        routes = []
        for key, value in sorted(block.items()):
            route = directive(f"{prefix}.{key}", key, value, service, notes)
            if route is not None:
                routes.append(route)
        if not routes:
            raise LabelError(f"the site {hosts[0]} ({prefix}) has no reverse_proxy label")
        sites.append(Site(hosts=hosts, routes=caddy_order(routes), service=service))
    return sites


def site_hosts(address: str, notes: list[str]) -> list[str]:
    """`http://a.test, b.test` -> the host names (a port other than 80 is refused)."""
    hosts = []
    for item in filter(None, re.split(r"[,\s]+", address.strip())):
        scheme, sep, rest = item.partition("://")
        if not sep:
            scheme, rest = "http", item
        if scheme not in ("http", "https"):
            raise LabelError(f"the site address {item!r} has the scheme {scheme!r}")
        host, _, port = rest.rstrip("/").partition(":")
        host = host.lower().rstrip(".")
        if port not in ("", str(SITE_PORT), "443" if scheme == "https" else ""):
            raise LabelError(f"the site address {item!r} asks for port {port}; sites answer on 80")
        if not HOST_NAME.match(host):
            raise LabelError(f"the site address {item!r} is not a host name the front can hold")
        if scheme == "https":
            notes.append(f"the site {host} is served over plain HTTP (no HTTPS here)")
        hosts.append(host)
    if not hosts:
        raise LabelError("a Caddy site address is empty")
    return list(dict.fromkeys(hosts))


def directive(label: str, key: str, value: str, service: str, notes: list[str]) -> Route | None:
    """One `caddy.*` label: a route, or None for a dropped one."""
    found = DIRECTIVE.match(key)
    name, option = (found.group(1), found.group(2)) if found else (key, None)
    if name == "reverse_proxy" and option is None:
        return reverse_proxy(label, value, service)
    if name == "reverse_proxy" and option in DROPPED_PROXY_OPTIONS:
        notes.append(f"{label} dropped: {DROPPED_PROXY_OPTIONS[option]}")
        return None
    if name in DROPPED:
        notes.append(f"{label} dropped: {DROPPED[name]}")
        return None
    raise LabelError(
        f"the Caddy label {label}: {value!r} is not supported (StateAct's front proxy routes by "
        "reverse_proxy with path matchers only)"
    )


def reverse_proxy(label: str, value: str, service: str) -> Route:
    """`[path matcher] upstream` (`{{upstreams [http] [PORT]}}` standing for `service`)."""
    text = UPSTREAMS.sub(lambda m: upstreams_of(label, m.group(1), service), value)
    tokens = text.split()
    matcher = None
    if tokens and (tokens[0].startswith("/") or tokens[0] == "*"):
        matcher = tokens.pop(0)
        matcher = None if matcher == "*" else matcher
    elif tokens and tokens[0].startswith("@"):
        raise LabelError(f"the Caddy label {label} uses the named matcher {tokens[0]}")
    if len(tokens) != 1:
        raise LabelError(f"the Caddy label {label}: {value!r} must name exactly one upstream")
    upstream = tokens[0]
    if upstream.startswith("https://"):
        raise LabelError(f"the Caddy label {label} proxies to HTTPS ({upstream})")
    host, _, port = upstream.removeprefix("http://").rstrip("/").partition(":")
    if not UPSTREAM_NAME.match(host.lower()) or (port and not port.isdigit()):
        raise LabelError(f"the Caddy label {label} names the upstream {upstream!r}")
    return Route(matcher=matcher, upstream=host.lower(), port=int(port or SITE_PORT))


def upstreams_of(label: str, arguments: str, service: str) -> str:
    """caddy-docker-proxy's `{{upstreams [http|https] [PORT]}}`: this service's own address."""
    parts = arguments.split()
    if parts and parts[0] in ("http", "https"):
        if parts.pop(0) == "https":
            raise LabelError(f"the Caddy label {label} proxies to HTTPS upstreams")
    if len(parts) > 1 or (parts and not parts[0].isdigit()):
        raise LabelError(f"the Caddy label {label} has upstreams arguments {arguments.strip()!r}")
    return f"{service}:{parts[0] if parts else SITE_PORT}"


def caddy_order(routes: list[Route]) -> list[Route]:
    """Caddy's order of one directive's routes: most specific path first, no matcher last."""

    def specificity(route: Route) -> tuple:
        if route.matcher is None:
            return (1,)
        trimmed = route.matcher.removesuffix("*")
        return (0, -len(trimmed), trimmed, len(route.matcher))

    return sorted(routes, key=specificity)


def front_routes(sites: list[Site]) -> dict[str, list[list]]:
    """The front proxy's table (`service_front.py`): host -> [[matcher, upstream, port], …]."""
    table: dict[str, list[list]] = {}
    for site in sites:
        for host in site.hosts:
            if host in table:
                raise LabelError(f"the site {host} is declared twice (by {site.service} too)")
            table[host] = [[r.matcher, r.upstream, r.port] for r in site.routes]
    return table
