"""A compose stack as StateAct starts it (real Docker, nothing mocked): the test stack of
`tests/service_helpers.py` (two sites built from the base image, one with path-routed backends,
an `include:`, interpolation, a caddy service replaced) is built, started on its private network
with StateAct's front proxy, reached from a sandbox through the front and from the host through
the loopback proxy (the host never sends to the network's addresses itself), with its limits in
the containers' HostConfig; the host proxy refuses a host outside the stack, an HTTPS attempt fails
fast, and the proxy and every container are gone after the stack closes."""

from __future__ import annotations

import hashlib
import json
import socket
import time
import urllib.error
import urllib.request

import pytest

from tests.conftest import require_image
from tests.service_helpers import (
    STACK_SERVICES,
    SUFFIX,
    MiB,
    compose_stack,
    managed,
    remove_built_images,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow]
STATE = bytes(range(256)) * 6055  # 1.55 MB, as OSWorld-web's largest states
FETCH = """
import json, sys, urllib.request
out = {}
for url in sys.argv[1:]:
    request = urllib.request.Request(url, headers={"X-Forwarded-For": "6.6.6.6"})
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            out[url] = [answer.status, answer.read().decode()]
    except urllib.error.HTTPError as e:
        out[url] = [e.code, e.read().decode()]
    except OSError as e:
        out[url] = [0, type(e).__name__]
print(json.dumps(out))
"""
POST = """
import sys, urllib.request
data = bytes(range(256)) * 6055
request = urllib.request.Request(sys.argv[1], data=data, method="POST")
print(urllib.request.urlopen(request, timeout=60).read().decode())
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    require_image("base")
    from sandboxes.compose import read_compose
    from sandboxes.images.build import image_ref
    from sandboxes.services import ServiceStack

    plan = read_compose(compose_stack(tmp_path_factory.mktemp("stack")), {"HOST_SUFFIX": SUFFIX})
    try:
        with ServiceStack.of(plan, image_ref("base"), health_timeout_s=120) as started:
            yield started
        assert managed(started.network) == ([], [])
    finally:
        remove_built_images(STACK_SERVICES)


@pytest.fixture(scope="module")
def sandbox(stack):
    from sandboxes import SandboxConfig, open_sandbox

    config = SandboxConfig(image="base", network=True, network_mode=stack.network, memory_mb=512)
    with open_sandbox(config) as sandbox:
        yield sandbox


def through_proxy(stack):
    handler = urllib.request.ProxyHandler({"http": stack.proxy_url, "https": stack.proxy_url})
    return urllib.request.build_opener(handler)


def test_the_sites_answer_through_the_front_from_a_sandbox(stack, sandbox):
    urls = [
        f"http://shop.{SUFFIX}/index.html",
        f"http://shop.{SUFFIX}/api/items",
        f"http://shop.{SUFFIX}/api/admin/users",  # the longer path wins over /api*
        f"http://news.{SUFFIX}/hello.txt",  # {{upstreams 3000}}: the site's own container
        "http://shop_backend:8000/greeting.txt",  # a compose name resolves; the build arg
        f"http://nowhere.{SUFFIX}/",  # no such name on the network
        f"https://shop.{SUFFIX}/",  # no HTTPS: refused at once
    ]
    code, output = sandbox.exec(["python3", "-c", FETCH, *urls])
    assert code == 0, output
    seen = json.loads(output)
    site = {url: json.loads(body)["site"] for url, (status, body) in seen.items() if "/api/" in url}
    assert site == {urls[1]: "shop-backend", urls[2]: "shop-admin"}
    front = json.loads(seen[urls[0]][1])
    assert (front["site"], front["host"], front["x_forwarded_proto"]) == (
        "shop-frontend",
        f"shop.{SUFFIX}",
        "http",
    )
    assert front["x_forwarded_for"] != ["6.6.6.6"] and len(front["x_forwarded_for"]) == 1
    assert seen[urls[3]] == [200, "news is up\n"]
    assert seen[urls[4]] == [200, f"hello from {SUFFIX}\n"]
    assert seen[urls[5]] == [0, "URLError"] and seen[urls[6]] == [0, "URLError"]


def test_a_large_state_posted_from_the_sandbox_reads_back_from_the_host(stack, sandbox):
    code, output = sandbox.exec(
        ["python3", "-c", POST, f"http://shop.{SUFFIX}/api/state?cookie=sandbox"]
    )
    assert code == 0, output
    assert json.loads(output)["sha256"] == hashlib.sha256(STATE).hexdigest()
    opener = through_proxy(stack)
    with opener.open(f"http://shop.{SUFFIX}/api/state?cookie=sandbox", timeout=60) as answer:
        assert answer.read() == STATE
    # and the other way: the host posts, the sandbox reads it through the front
    request = urllib.request.Request(
        f"http://shop.{SUFFIX}/api/state?cookie=host", data=STATE[::-1], method="POST"
    )
    with opener.open(request, timeout=60) as answer:
        assert json.loads(answer.read())["stored"] == len(STATE)
    read = "import urllib.request as u, sys; sys.stdout.buffer.write(u.urlopen(sys.argv[1]).read())"
    url = f"http://shop.{SUFFIX}/api/state?cookie=host"
    code, output = sandbox.exec(["sh", "-c", f"python3 -c '{read}' {url} | sha256sum"])
    assert (code, output.split()[0]) == (0, hashlib.sha256(STATE[::-1]).hexdigest())


def test_the_host_proxy_reaches_only_the_stacks_hosts_and_https_fails_fast(stack):
    assert stack.proxy_url.startswith("http://127.0.0.1:")
    opener = through_proxy(stack)
    with opener.open(f"http://news.{SUFFIX}/hello.txt", timeout=20) as answer:
        assert answer.read() == b"news is up\n"
    with pytest.raises(urllib.error.HTTPError) as refused:
        opener.open("http://example.com/", timeout=20)
    assert refused.value.code == 403
    assert refused.value.read() == (
        b"example.com is not a service of this stack: StateAct's services proxy reaches only "
        b"the host names of the services it started.\n"
    )
    started = time.monotonic()
    with pytest.raises(urllib.error.URLError, match="Tunnel connection failed: 502"):
        opener.open(f"https://shop.{SUFFIX}/", timeout=20)
    assert time.monotonic() - started < 5  # refused at once, not a timeout


def test_limits_are_in_the_containers_hostconfig(stack):
    expected = {
        "shop_backend": (300 * MiB, 500_000_000, 200),  # mem_limit, cpus, pids_limit
        "shop_frontend": (200 * MiB, 1_000_000_000, 100),  # deploy.resources.limits
        "news_web": (1024 * MiB, 1_000_000_000, 1024),  # the defaults
        "stateact-front": (256 * MiB, 1_000_000_000, 512),
        "probe": (256 * MiB, 1_000_000_000, 512),
    }
    for name, (memory, cpus, pids) in expected.items():
        container = stack.containers[name]
        container.reload()
        host = container.attrs["HostConfig"]
        assert (host["Memory"], host["MemorySwap"], host["NanoCpus"], host["PidsLimit"]) == (
            memory,
            memory,
            cpus,
            pids,
        ), name


def test_the_host_proxy_and_every_container_are_gone_once_a_stack_closes():
    """Its own small stack (a local image, no build): the proxy answers while it runs and its
    port is closed after; nothing of the stack is left on the engine."""
    require_image("base")
    from sandboxes.images.build import image_ref
    from sandboxes.services import ServiceSpec, ServiceStack

    spec = ServiceSpec(
        name="plain",
        image=image_ref("base"),
        command=["python3", "-m", "http.server", "8000", "--directory", "/etc"],
        hosts=[f"plain.{SUFFIX}"],
        port=8000,
        health_path="/hostname",
    )
    with ServiceStack([spec], image_ref("base"), health_timeout_s=60) as stack:
        port = int(stack.proxy_url.rsplit(":", 1)[1])
        with through_proxy(stack).open(f"http://plain.{SUFFIX}:8000/hostname", timeout=20) as a:
            assert a.status == 200
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5)
    assert stack.proxy_url is None
    assert managed(stack.network) == ([], [])
