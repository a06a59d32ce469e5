"""The compose reader (`sandboxes/compose.py`): OSWorld-web's layout (a top-level file that only
includes a main file and one file per site) becomes one ServiceSpec per service and the sites of
its Caddy labels; values are interpolated as Compose does; a key that would change what a service
does and that StateAct does not carry out is one sentence naming the file, service and key, while
what concerns only a host the stack is not published on is dropped with a note. Each refusal has
its honest twin: the same stack without the key reads."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sandboxes.base import SandboxError
from sandboxes.compose import read_compose
from sandboxes.compose_values import interpolate
from tests.service_helpers import compose_stack, write

SUFFIX = {"HOST_SUFFIX": "svc.test"}


def test_the_test_stack_reads_as_osworld_webs_would(tmp_path):
    plan = read_compose(compose_stack(tmp_path), SUFFIX)
    specs = {spec.name: spec for spec in plan.services}
    # depends_on: the frontend after both backends; the caddy service is not among them
    assert list(specs) == ["shop_backend", "shop_admin", "shop_frontend", "news_web"]
    backend = specs["shop_backend"]
    assert backend.context == tmp_path / "shop_web" / "backend"  # relative to its own file
    assert backend.build_args == {"GREETING": "hello from svc.test"}  # .env, then HOST_SUFFIX
    assert backend.environment == {"API_PREFIX": "/api"}
    assert (backend.port, backend.health_path, backend.hosts) == (8000, None, [])
    assert backend.limits.model_dump() == {"memory_mb": 300, "cpus": 0.5, "pids": 200}
    assert specs["shop_frontend"].limits.model_dump() == {
        "memory_mb": 200,
        "cpus": 1.0,
        "pids": 100,
    }
    assert specs["shop_admin"].command == ["python3", "/srv/service_site.py", "8001", "shop-admin"]
    assert specs["news_web"].context == tmp_path / "news_web"
    routes = {
        site.hosts[0]: [(r.matcher, r.upstream, r.port) for r in site.routes] for site in plan.sites
    }
    assert routes == {
        "shop.svc.test": [
            ("/api/admin*", "shop_admin", 8001),
            ("/api*", "shop_backend", 8000),
            (None, "shop_frontend", 8080),
        ],
        "news.svc.test": [(None, "news_web", 3000)],
    }
    assert any("the service caddy: replaced by StateAct's front proxy" in n for n in plan.notes)
    assert plan.host_names() >= {"shop.svc.test", "news.svc.test", "shop_backend", "news_web"}


def test_values_are_interpolated_as_compose_does():
    variables = {"SET": "x", "EMPTY": ""}
    missing: set[str] = set()
    cases = {
        "${SET}": "x",
        "$SET/a": "x/a",
        "${UNSET:-d}": "d",
        "${EMPTY:-d}": "d",
        "${EMPTY-d}": "",
        "${UNSET-d}": "d",
        "${SET:+alt}": "alt",
        "${UNSET:+alt}": "",
        "${UNSET:-${SET}.b}": "x.b",
        "$${SET}": "${SET}",
        "${CADDY_SCHEME-http://}shop.${SET:-localhost}": "http://shop.x",
        "${UNSET}": "",
    }
    for text, expected in cases.items():
        assert interpolate(text, variables, missing) == expected, text
    assert missing == {"UNSET"}
    assert interpolate({"k": ["${SET}", 3]}, variables, set()) == {"k": ["x", 3]}
    with pytest.raises(ValueError, match="the variable UNSET must be set: say so"):
        interpolate("${UNSET:?say so}", variables, set())


def site_file(tmp_path: Path, **extra) -> Path:
    """A one-service stack whose service has the keys in `extra`."""
    (tmp_path / "site").mkdir(exist_ok=True)
    (tmp_path / "site" / "Dockerfile").write_text("FROM scratch\n")
    body = {"build": "./site", "expose": ["3000"], **extra}
    write(tmp_path / "docker-compose.yml", yaml.safe_dump({"services": {"site": body}}))
    return tmp_path / "docker-compose.yml"


def key(name: str, why: str) -> str:
    return f"the key {name!r} of the service site is not supported: {why}."


REFUSED = [
    ({"privileged": True}, key("privileged", "StateAct starts no privileged container")),
    (
        {"network_mode": "host"},
        key("network_mode", "every service joins the stack's private network"),
    ),
    ({"volumes": ["./data:/data"]}, key("volumes", "it mounts the host path ./data")),
    (
        {"volumes": ["/var/run/docker.sock:/var/run/docker.sock"]},
        key("volumes", "StateAct never mounts the Docker engine's socket"),
    ),
    ({"cap_add": ["NET_ADMIN"]}, key("cap_add", "StateAct adds no capability to a service")),
    ({"frobnicate": 1}, key("frobnicate", "StateAct's compose reader does not know it")),
    (
        {"build": {"context": "https://example.test/repo.git"}},
        key("build.context", "StateAct builds only from folders of your checkout"),
    ),
    (
        {"labels": {"caddy": "site.test", "caddy.handle_path": "/x/*"}},
        "the service site: the Caddy label caddy.handle_path: '/x/*' is not supported "
        "(StateAct's front proxy routes by reverse_proxy with path matchers only).",
    ),
    (
        {"labels": {"caddy": "site.test", "caddy.reverse_proxy": "@ws {{upstreams 3000}}"}},
        "the service site: the Caddy label caddy.reverse_proxy uses the named matcher @ws.",
    ),
    (
        {"labels": {"caddy": "site.test", "caddy.reverse_proxy": "other:80"}},
        "the site site.test routes to other, which no service of the stack is.",
    ),
]


@pytest.mark.parametrize(
    "extra, sentence", REFUSED, ids=[next(iter(e)) + str(i) for i, (e, _) in enumerate(REFUSED)]
)
def test_what_would_change_a_service_and_is_not_carried_out_is_one_sentence(
    tmp_path, extra, sentence
):
    path = site_file(tmp_path, **extra)
    with pytest.raises(SandboxError) as caught:
        read_compose(path, SUFFIX)
    message = str(caught.value)
    assert message.startswith(f"{path}: "), message
    assert message.endswith(sentence), message
    assert "\n" not in message
    # the honest twin: the same stack without the key reads
    assert [s.name for s in read_compose(site_file(tmp_path), SUFFIX).services] == ["site"]


def test_what_concerns_only_an_unpublished_host_is_dropped_with_a_note(tmp_path):
    path = site_file(
        tmp_path,
        ports=["3000:3000"],
        volumes=["cache:/var/cache/site", "/tmp/anonymous"],
        healthcheck={"test": ["CMD", "true"]},
        stop_grace_period="3s",
        tmpfs=["/run/site:size=8m"],
        labels={
            "caddy": "https://site.${HOST_SUFFIX}",
            "caddy.encode": "gzip",
            "caddy.reverse_proxy": "{{upstreams 3000}}",
        },
    )
    plan = read_compose(path, SUFFIX)
    notes = "\n".join(plan.notes)
    for words in (
        "its published ports are not published",
        "the named volume cache is dropped (/var/cache/site lives in the container)",
        "healthcheck not run",
        "stop_grace_period dropped",
        "caddy.encode dropped",
        "the site site.svc.test is served over plain HTTP (no HTTPS here)",
    ):
        assert words in notes, words
    assert plan.services[0].runtime.tmpfs == {"/run/site": "size=8m"}  # read, not dropped
    (site,) = plan.sites
    assert (site.hosts, site.routes[0].upstream, site.routes[0].port) == (
        ["site.svc.test"],
        "site",
        3000,
    )


def test_bad_files_are_one_sentence(tmp_path):
    write(tmp_path / "docker-compose.yml", "include:\n  - ./missing.yml\n")
    with pytest.raises(SandboxError, match=r"the included file ./missing.yml does not exist\.$"):
        read_compose(tmp_path / "docker-compose.yml", SUFFIX)
    write(tmp_path / "docker-compose.yml", "include:\n  - ./docker-compose.yml\n")
    with pytest.raises(SandboxError, match="it includes itself"):
        read_compose(tmp_path / "docker-compose.yml", SUFFIX)
    write(tmp_path / "docker-compose.yml", "services: [\n")
    with pytest.raises(SandboxError, match=r"is not YAML \(line \d+\)\.$"):
        read_compose(tmp_path / "docker-compose.yml", SUFFIX)
    write(tmp_path / "docker-compose.yml", "services: {}\nsecrets_of_mine: 1\n")
    with pytest.raises(SandboxError, match="the top-level key 'secrets_of_mine' is not supported"):
        read_compose(tmp_path / "docker-compose.yml", SUFFIX)
