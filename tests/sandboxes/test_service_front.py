"""StateAct's front proxy (`sandboxes/service_front.py`) on the host's loopback, in front of mock
sites run here as processes (the program the test service images run), its routes compiled from
Caddy labels as a compose stack's are: routing by Host and path in Caddy's order, bodies streamed
both ways, keep-alive, X-Forwarded-* set afresh, and the hostile cases (an oversized head, a
request both chunked and with a length, an unknown host, a down upstream), each beside its honest
twin. `test_service_stack.py` runs the same proxy in its container on a stack's network."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from sandboxes.service_front import Front, FrontHandler, FrontServer, path_matches
from sandboxes.service_routes import Route, caddy_order, caddy_sites, front_routes
from tests.service_helpers import SITE_SERVER

STATE = os.urandom(1_550_000)
"""About the size of OSWorld-web's largest site states."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def sites():
    """Three mock sites on the loopback: name -> port."""
    ports = {name: free_port() for name in ("shop-backend", "shop-admin", "shop-frontend")}
    processes = [
        subprocess.Popen([sys.executable, str(SITE_SERVER), str(port), name, "127.0.0.1"])
        for name, port in ports.items()
    ]
    try:
        for port in ports.values():
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
        yield ports
    finally:
        for process in processes:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def upgrading():
    """An upstream that switches every connection to an echo in capitals (as a WebSocket would
    switch protocols): its port."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve(connection: socket.socket) -> None:
        with connection:
            head = b""
            while b"\r\n\r\n" not in head:
                head += connection.recv(4096)
            connection.sendall(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n"
            )
            while data := connection.recv(4096):
                connection.sendall(data.upper())

    def accept() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()


@pytest.fixture(scope="module")
def front(sites, upgrading):
    """The front on an ephemeral loopback port; `shop.test`'s routes from its Caddy labels (the
    admin's `/api/admin*` numbered after `/api*`, as a label author may), `down.test` to a port
    nothing listens on."""
    labels = {
        "caddy": "http://shop.test",
        "caddy.0_reverse_proxy": f"/api* 127.0.0.1:{sites['shop-backend']}",
        "caddy.1_reverse_proxy": f"/api/admin* 127.0.0.1:{sites['shop-admin']}",
        "caddy.2_reverse_proxy": f"127.0.0.1:{sites['shop-frontend']}",
    }
    shop = caddy_sites("shop_frontend", labels, 80, [])
    down = caddy_sites(
        "down", {"caddy": "down.test", "caddy.reverse_proxy": f"127.0.0.1:{free_port()}"}, 80, []
    )
    echo = caddy_sites(
        "echo", {"caddy": "echo.test", "caddy.reverse_proxy": f"127.0.0.1:{upgrading}"}, 80, []
    )
    server = FrontServer(("127.0.0.1", 0), FrontHandler)
    server.front = Front(front_routes([*shop, *down, *echo]))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def ask(port: int, path: str, host: str = "shop.test", **headers) -> tuple[int, dict, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", path, headers={"Host": host, **headers})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, dict(response.getheaders()), body


def raw(port: int, data: bytes) -> bytes:
    """What the front answers to `data` sent as is, up to its closing the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        client.sendall(data)
        answer = b""
        while piece := client.recv(65536):
            answer += piece
    return answer


def test_routes_are_ordered_as_caddy_orders_them_and_paths_match_as_caddys():
    shuffled = ["/b*", "/api*", None, "/api/admin*", "/a*", "/static/*", "/api/admin"]
    routes = [Route(matcher=m, upstream="u", port=80) for m in shuffled]
    assert [r.matcher for r in caddy_order(routes)] == [
        "/api/admin",  # the same path exact before wildcard
        "/api/admin*",
        "/static/*",  # then the longer path first
        "/api*",
        "/a*",  # equal lengths in lexical order
        "/b*",
        None,  # no matcher last
    ]
    cases = [
        ("/api*", "/api/state", True),
        ("/api*", "/apix", True),
        ("/API*", "/api/x", True),
        ("/api/*", "/api", False),
        ("*.js", "/a/b.js", True),
        ("/a/*/c", "/a/b/c", True),
        ("/a/*/c", "/a/b/x/c", False),
        ("/exact", "/exact", True),
        ("/exact", "/exact/", False),
        ("*", "/anything", True),
    ]
    for pattern, path, expected in cases:
        assert path_matches(pattern, path) is expected, (pattern, path)


def test_sites_are_routed_by_host_and_path(front):
    expected = {
        "/api/admin/users": "shop-admin",  # its label comes after /api*, its path is longer
        "/api/items": "shop-backend",
        "/API/ADMIN": "shop-admin",  # Caddy's path matching ignores case
        "/api/../index.html": "shop-frontend",  # matched on the cleaned path
        "/index.html": "shop-frontend",
    }
    for path, site in expected.items():
        status, _, body = ask(front, path)
        assert (status, json.loads(body)["site"]) == (200, site), path
    status, _, body = ask(front, "/x", host="SHOP.test:80")
    assert (status, json.loads(body)["host"]) == (200, "SHOP.test:80")  # the Host is kept


def test_an_unknown_host_is_404_and_a_down_upstream_502_each_with_a_sentence(front):
    status, headers, body = ask(front, "/", host="elsewhere.test")
    assert (status, body) == (404, b"no site answers as elsewhere.test here.\n")
    assert headers["Connection"] == "close"
    status, _, body = ask(front, "/", host="down.test")
    assert status == 502
    assert body.startswith(b"the site down.test is down (127.0.0.1:") and b"refused" in body
    assert ask(front, "/hello.txt")[:1] == (200,)  # a known host with its upstream up: served


def test_large_bodies_stream_both_ways_on_one_kept_alive_connection(front):
    connection = http.client.HTTPConnection("127.0.0.1", front, timeout=60)
    digest = hashlib.sha256(STATE).hexdigest()
    connection.request("POST", "/api/state?cookie=a", body=STATE, headers={"Host": "shop.test"})
    first = connection.getresponse()
    assert (first.status, json.loads(first.read())["sha256"]) == (200, digest)
    assert first.getheader("Connection") == "keep-alive"
    kept = connection.sock
    pieces = (STATE[i : i + 100_000] for i in range(0, len(STATE), 100_000))
    connection.request(
        "POST",
        "/api/state?cookie=b",
        body=pieces,
        headers={"Host": "shop.test"},
        encode_chunked=True,
    )
    chunked = connection.getresponse()
    assert json.loads(chunked.read()) == {
        "site": "shop-backend",
        "stored": len(STATE),
        "sha256": digest,
    }
    connection.request("GET", "/api/state?cookie=b", headers={"Host": "shop.test"})
    back = connection.getresponse()
    assert back.read() == STATE
    assert connection.sock is kept  # three requests, one client connection
    connection.close()


def test_forwarded_headers_are_the_fronts_own_not_the_clients(front):
    _, _, body = ask(front, "/x", **{"X-Forwarded-For": "6.6.6.6", "X-Forwarded-Host": "bank.test"})
    seen = json.loads(body)
    assert seen["x_forwarded_for"] == ["127.0.0.1"]
    assert (seen["x_forwarded_host"], seen["x_forwarded_proto"]) == ("shop.test", "http")


def test_an_oversized_head_is_refused_and_a_large_one_served(front):
    big = b"X-Filler: " + b"a" * 70_000 + b"\r\n"
    answer = raw(front, b"GET / HTTP/1.1\r\nHost: shop.test\r\n" + big + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 431 ")
    assert answer.endswith(b"the message's head is too large.\n")
    status, _, _ = ask(front, "/", **{"X-Filler": "a" * 8000})
    assert status == 200


def test_a_request_both_chunked_and_with_a_length_is_refused(front):
    head = b"POST /api/state HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n"
    chunked = b"5\r\nhello\r\n0\r\n\r\n"
    both = raw(front, head + b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n" + chunked)
    assert both.startswith(b"HTTP/1.1 400 ")
    assert both.endswith(b"the request has both Transfer-Encoding and Content-Length.\n")
    alone = raw(front, head + b"Transfer-Encoding: chunked\r\n\r\n" + chunked)
    assert alone.startswith(b"HTTP/1.1 200 ") and b'"stored": 5' in alone
    malformed = raw(front, head + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")
    assert malformed.startswith(b"HTTP/1.1 400 ")


def test_a_client_holding_many_stalled_connections_does_not_starve_others(front):
    """An agent that opens connections and sends nothing reaches its own limit (64), not the
    front's: another client address (the host proxy's relays come from the probe's) is served."""
    from sandboxes.service_front import MAX_PER_CLIENT

    stalled = [socket.create_connection(("127.0.0.1", front)) for _ in range(MAX_PER_CLIENT)]
    try:
        time.sleep(0.5)  # each is taken by its handler thread
        refused = raw(front, b"GET / HTTP/1.1\r\nHost: shop.test\r\n\r\n")
        assert refused.startswith(b"HTTP/1.1 503 ")
        with socket.create_connection(
            ("127.0.0.1", front), source_address=("127.0.0.2", 0)
        ) as other:
            other.sendall(
                b"GET /hello.txt HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n\r\n"
            )
            answer = b""
            while piece := other.recv(65536):
                answer += piece
        assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"shop-frontend is up\n")
    finally:
        for connection in stalled:
            connection.close()
    time.sleep(0.5)  # their slots are given back
    assert ask(front, "/hello.txt")[0] == 200


def test_an_upgraded_connection_becomes_a_tunnel(front):
    with socket.create_connection(("127.0.0.1", front), timeout=10) as client:
        head = b"GET /socket HTTP/1.1\r\nHost: echo.test\r\n"
        client.sendall(head + b"Connection: Upgrade\r\nUpgrade: echo\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            head += client.recv(4096)
        assert head.startswith(b"HTTP/1.1 101 ")
        for word in (b"hello", b"again"):
            client.sendall(word)
            assert client.recv(4096) == word.upper()
