"""The user's WebArena deployment: `--sites FILE` maps each site to its base URL, placeholders in
task URLs are resolved against it, and a dry run names what a task needs that is not there.

    # sites.yaml
    sites:
      shopping: http://shop.webarena.test:7770
      shopping_admin: http://shop.webarena.test:7780/admin
      reddit: http://forum.webarena.test:9999
      gitlab: http://gitlab.webarena.test:8023
    accounts:                       # optional: WebArena's published accounts are the default
      reddit: {username: MarvelsGrantMan136, password: test1234}
    reset_command: ./reset-sites.sh # run before a task with require_reset (optional)

A flat mapping of site names to URLs is accepted too. Site hosts in private address ranges are
refused unless `allow_private_addresses: true` says the user runs them there on purpose.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from urllib.parse import urlparse

import yaml
from pydantic import BaseModel, ConfigDict, Field

from harness.kernel.core import StateActError
from tasks.webarena.schema import SITE_NAMES, WebArenaTask, validated

PLACEHOLDERS = {
    # __SHOPPING_ADMIN__ first: __SHOPPING__ is its prefix.
    "shopping_admin": "__SHOPPING_ADMIN__",
    "shopping": "__SHOPPING__",
    "reddit": "__REDDIT__",
    "gitlab": "__GITLAB__",
    "map": "__MAP__",
    "wikipedia": "__WIKIPEDIA__",
    "homepage": "__HOMEPAGE__",
}
PRIVATE_NETWORKS = [
    ipaddress.ip_network(net) for net in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
]
LOGIN_SITES = ("shopping", "shopping_admin", "reddit", "gitlab")
"""The sites whose tasks may need a signed-in user (WebArena's `auto_login`)."""


class Account(BaseModel):
    model_config = ConfigDict(extra="forbid")

    username: str
    password: str


class SitesConfig(BaseModel):
    """Where each WebArena site runs, the accounts to sign in with, and the reset hook."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    sites: dict[str, str] = Field(default_factory=dict)
    """Site name (shopping, shopping_admin, reddit, gitlab, map, wikipedia, homepage) -> URL."""
    accounts: dict[str, Account] = Field(default_factory=dict)
    """Site name -> the account its login form is filled with."""
    default_accounts: bool = True
    """Sign in with WebArena's published accounts where `accounts` names none (off: only those)."""
    reset_command: str | None = None
    """A command of the user's that resets the sites before a `require_reset` task."""
    allow_private_addresses: bool = False
    """Sites in 10/8, 172.16/12 or 192.168/16 are refused unless this is set."""

    def model_post_init(self, __context) -> None:
        for name, url in self.sites.items():
            if name not in SITE_NAMES:
                raise StateActError(
                    f"unknown WebArena site {name!r} in the sites file; the sites are "
                    f"{', '.join(SITE_NAMES)}"
                )
            parsed = urlparse(url)
            if parsed.scheme not in ("http", "https") or not parsed.hostname:
                raise StateActError(
                    f"the URL of site {name!r} must be http(s)://HOST…, not {url!r}"
                )
            if not self.allow_private_addresses and _is_private(parsed.hostname):
                raise StateActError(
                    f"site {name!r} is at a private address ({parsed.hostname}); set "
                    "allow_private_addresses: true in the sites file if that is intended"
                )

    def account(self, site: str) -> Account | None:
        """The account for `site`'s login form: the file's, else WebArena's published one."""
        if site in self.accounts or not self.default_accounts:
            return self.accounts.get(site)
        return DEFAULT_ACCOUNTS.get(site)

    def resolve(self, url: str) -> str:
        """`url` with every configured site's placeholder replaced by its base URL."""
        for site, placeholder in PLACEHOLDERS.items():
            if placeholder in url and site in self.sites:
                url = url.replace(placeholder, self.sites[site].rstrip("/"))
        return url

    def unresolved(self, url: str) -> list[str]:
        """The placeholders `url` still holds that no configured site fills."""
        return [p for site, p in PLACEHOLDERS.items() if p in url and site not in self.sites]


def _is_private(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False  # a name: resolved where the browser runs, checked by the network there
    return any(address in network for network in PRIVATE_NETWORKS)


def load_sites(path: str | Path) -> SitesConfig:
    """Read a sites file (YAML or JSON); one sentence for what is wrong with it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, yaml.YAMLError) as exc:
        raise StateActError(f"cannot read the sites file {path}: {exc}") from None
    if (
        isinstance(data, dict)
        and "sites" not in data
        and all(isinstance(v, str) for v in data.values())
    ):
        data = {"sites": data}
    if not isinstance(data, dict):
        raise StateActError(f"the sites file {path} must map site names to base URLs")
    return validated(SitesConfig, data, f"the sites file {path}")


def task_blockers(task: WebArenaTask, sites: SitesConfig | None, parallel: int = 1) -> list[str]:
    """One sentence per thing `task` needs that the deployment does not give."""
    found = []
    configured = sites.sites if sites else {}
    for site in task.sites:
        if site not in configured:
            found.append(f"the WebArena site {site!r} is not configured (--sites FILE)")
    if task.require_reset and parallel > 1 and not (sites and sites.reset_command):
        found.append(
            "the task resets its site, which a parallel run cannot share without a reset_command"
        )
    return found


DEFAULT_ACCOUNTS = {
    "reddit": Account(username="MarvelsGrantMan136", password="test1234"),
    "gitlab": Account(username="byteblaze", password="hello1234"),
    "shopping": Account(username="emma.lopez@gmail.com", password="Password.123"),
    "shopping_admin": Account(username="admin", password="admin1234"),
}
"""The accounts WebArena publishes for its sites (its README and `env_config.py`)."""
