"""StateAct's front proxy for a compose stack's sites: what caddy-docker-proxy is in OSWorld-web's
stack, without the Docker engine's socket. It runs in a container of the base image on the
services' network, holds every site's host name as a network alias, listens on port 80 and sends
each request to the upstream its site's routes choose (`service_routes.py` compiles them from the
compose file's Caddy labels, in Caddy's order; the first route whose path matcher matches wins).

    python3 -E -s service_front.py routes.json      # {"port": 80, "sites": {host: [[matcher,
                                                    #   upstream host, port], …]}}

Standard library alone: this file and `http_framing.py` are copied into the container. Requests
and answers stream both ways; the Host field is kept and X-Forwarded-For/-Proto/-Host are set
afresh (the client's own are dropped: the agent's browser is a client); an unknown host answers
404, an upstream that is down 502, both with a short text. The client's connection is kept alive
between requests when the answer's length is known; each request gets its own upstream
connection. A WebSocket upgrade becomes a tunnel.
"""

from __future__ import annotations

import json
import posixpath
import re
import socket
import socketserver
import sys
import threading
import urllib.parse

try:
    from . import http_framing as framing
except ImportError:  # in the front's container, run as a script beside http_framing.py
    import http_framing as framing  # type: ignore[no-redef]

CONNECT_TIMEOUT_S = 10.0
UPSTREAM_TIMEOUT_S = 600.0
"""A site may take long over one request (a large state); an upstream silent this long is down."""
IDLE_TIMEOUT_S = 75.0
"""How long a kept-alive client connection may wait for its next request."""
MAX_CONNECTIONS = 256
MAX_PER_CLIENT = 64
"""One client address (a sandbox; the host proxy's relays come from the probe's) may hold at most
this many connections: an agent that opens and stalls connections cannot starve the benchmark's
own requests of the front."""
FORWARDED = ("x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "expect")
"""Set afresh by the front (a client's own would be believed by the site), or answered by it."""


def clean_path(target: str) -> str:
    """The path a matcher sees: without the query, unescaped, `//` and `..` resolved, as Caddy
    cleans it (a trailing slash kept)."""
    path = urllib.parse.unquote(target.split("?", 1)[0].split("#", 1)[0]) or "/"
    cleaned = posixpath.normpath("/" + re.sub("/+", "/", path).lstrip("/"))
    return cleaned + "/" if path.endswith("/") and cleaned != "/" else cleaned


def path_matches(pattern: str, path: str) -> bool:
    """Caddy's path matcher, case-insensitive: `*` all, `/api*` a prefix, `*.js` a suffix, `*x*`
    a substring, another `*` a glob within one segment, else the exact path."""
    pattern, path = pattern.lower(), path.lower()
    if pattern == "*":
        return True
    inner = pattern.strip("*")
    if "*" not in inner:
        if pattern.startswith("*") and pattern.endswith("*"):
            return inner in path
        if pattern.endswith("*"):
            return path.startswith(inner)
        if pattern.startswith("*"):
            return path.endswith(inner)
        return path == pattern
    glob = "[^/]*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(glob, path) is not None


class Front:
    """The routing table: site host name -> its routes in order."""

    def __init__(self, sites: dict[str, list[tuple[str | None, str, int]]]):
        self.sites = {host.lower(): [tuple(r) for r in routes] for host, routes in sites.items()}
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.per_client: dict[str, int] = {}
        self.lock = threading.Lock()

    def take(self, client_ip: str) -> bool:
        """A connection slot for `client_ip`, if it and the front have one left."""
        with self.lock:
            if self.per_client.get(client_ip, 0) >= MAX_PER_CLIENT:
                return False
            if not self.slots.acquire(blocking=False):
                return False
            self.per_client[client_ip] = self.per_client.get(client_ip, 0) + 1
            return True

    def give_back(self, client_ip: str) -> None:
        with self.lock:
            self.per_client[client_ip] -= 1
            if not self.per_client[client_ip]:
                del self.per_client[client_ip]
            self.slots.release()

    def upstream(self, host: str, target: str) -> tuple[str, int]:
        routes = self.sites.get(host)
        if routes is None:
            raise framing.HttpError(404, f"no site answers as {host or 'an empty host'} here")
        path = clean_path(target)
        for matcher, upstream, port in routes:
            if matcher is None or path_matches(matcher, path):
                return upstream, int(port)
        raise framing.HttpError(404, f"no route of {host} takes {path}")


def host_of(head: framing.Head, target: str) -> str:
    """The site asked for: the Host field (or an absolute target's host), without its port."""
    if "://" in target:
        return (urllib.parse.urlsplit(target).hostname or "").rstrip(".")
    value = (head.get("host") or "").strip().lower()
    if value.startswith("["):
        return value
    return value.rsplit(":", 1)[0].rstrip(".") if ":" in value else value.rstrip(".")


def origin_form(target: str) -> str:
    if "://" not in target:
        return target
    parts = urllib.parse.urlsplit(target)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def upstream_request(head: framing.Head, method: str, target: str, client_ip: str) -> bytes:
    """The request as the upstream gets it: its own connection (closed after the answer, or
    upgraded), the Host kept, X-Forwarded-* set from what the front saw."""
    host = head.get("host") or urllib.parse.urlsplit(target).netloc
    headers = [(k, v) for k, v in head.passed_on(FORWARDED) if k.lower() != "host"]
    upgrade = head.get("upgrade") if "upgrade" in head.tokens("connection") else None
    headers = [("Host", host), *headers]
    headers += [("Connection", "Upgrade"), ("Upgrade", upgrade)] if upgrade else []
    headers += [("Connection", "close")] if not upgrade else []
    headers += [
        ("X-Forwarded-For", client_ip),
        ("X-Forwarded-Proto", "http"),
        ("X-Forwarded-Host", host),
    ]
    return framing.encode_head(f"{method} {origin_form(target)} HTTP/1.1", headers)


class Exchange:
    """One request on a client connection, from its head to the end of its answer."""

    def __init__(self, front: Front, client: socket.socket, reader, client_ip: str):
        self.front = front
        self.client = client
        self.reader = reader
        self.client_ip = client_ip
        self.answering = False
        """Set once the answer's head went out: a failure after it can only end the connection."""

    def serve(self, head: framing.Head) -> bool:
        """Answer the request; whether the client connection stays open for another."""
        self.answering = False
        method, target, version = framing.request_line(head)
        host = host_of(head, target)
        upstream = self.front.upstream(host, target)
        request_body = framing.body_framing(head, request=True)
        try:
            conn = socket.create_connection(upstream, timeout=CONNECT_TIMEOUT_S)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            where = f"{upstream[0]}:{upstream[1]}"
            raise framing.HttpError(502, f"the site {host} is down ({where}: {reason})") from None
        with conn:
            conn.settimeout(UPSTREAM_TIMEOUT_S)
            if "100-continue" in head.tokens("expect"):
                self.client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            conn.sendall(upstream_request(head, method, target, self.client_ip))
            framing.copy_body(self.reader, conn.sendall, request_body)
            answers = conn.makefile("rb")
            answer, status = self._final_answer(answers, host)
            self.answering = True
            if status == 101 and head.get("upgrade"):
                self.client.sendall(framing.encode_head(answer.start, answer.headers))
                tunnel(self.reader, self.client, answers, conn)
                return False
            keep = version == "HTTP/1.1" and "close" not in head.tokens("connection")
            no_body = framing.has_no_body(method, status)
            body = ("none", 0) if no_body else framing.body_framing(answer, False)
            keep = keep and body[0] != "close"
            headers = [*answer.passed_on(), ("Connection", "keep-alive" if keep else "close")]
            self.client.sendall(framing.encode_head(answer.start, headers))
            framing.copy_body(answers, self.client.sendall, body)
            return keep

    def _final_answer(self, answers, host: str) -> tuple[framing.Head, int]:
        """The upstream's answer past its interim 1xx ones (which go on to the client)."""
        while True:
            try:
                answer = framing.read_head(answers)
            except OSError as exc:
                raise framing.HttpError(502, f"the site {host} did not answer ({exc})") from None
            if answer is None:
                raise framing.HttpError(
                    502, f"the site {host} closed the connection without answering"
                )
            status = framing.status_of(answer)
            if status < 100 or status > 599:
                raise framing.HttpError(502, f"the site {host} answered with status {status}")
            if 100 <= status < 200 and status != 101:
                self.client.sendall(framing.encode_head(answer.start, answer.headers))
                continue
            return answer, status


def tunnel(client_reader, client: socket.socket, upstream_reader, upstream: socket.socket) -> None:
    """Bytes both ways until either side ends (an upgraded connection)."""
    upstream.settimeout(None)
    client.settimeout(None)

    def inward() -> None:
        try:
            while data := client_reader.read1(framing.CHUNK):
                upstream.sendall(data)
            upstream.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    threading.Thread(target=inward, daemon=True).start()
    try:
        while data := upstream_reader.read1(framing.CHUNK):
            client.sendall(data)
    except OSError:
        pass


def serve_connection(front: Front, client: socket.socket, client_ip: str) -> None:
    """Requests on one client connection, one after another, until one ends it."""
    client.settimeout(IDLE_TIMEOUT_S)
    reader = client.makefile("rb")
    exchange = Exchange(front, client, reader, client_ip)
    try:
        while True:
            try:
                head = framing.read_head(reader)
                if head is None or not exchange.serve(head):
                    return
            except framing.HttpError as exc:
                if not exchange.answering:
                    client.sendall(framing.error_answer(exc.status, exc.text))
                return
    except (OSError, ValueError):
        return  # the client or the upstream went away mid-message: nothing more to say
    finally:
        reader.close()


class FrontHandler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        front: Front = self.server.front
        client_ip = self.client_address[0]
        if not front.take(client_ip):
            full = framing.error_answer(503, "the front proxy is at its connection limit")
            self.request.sendall(full)
            return
        try:
            serve_connection(front, self.request, client_ip)
        finally:
            front.give_back(client_ip)


class FrontServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 128


def main(argv: list[str]) -> None:
    with open(argv[1]) as f:
        config = json.load(f)
    server = FrontServer(("0.0.0.0", int(config.get("port", 80))), FrontHandler)
    server.front = Front(config["sites"])
    print(f"front proxy: {len(server.front.sites)} site host names", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv)
