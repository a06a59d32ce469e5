"""The services' host proxy: how code on the host (OSWorld 2.0's getters, in the benchmark's bridge
process) reaches the services a stack started on its private network, e.g.
`http://mailhub.<suffix>/api/state?cookie=…` or GitLab's API.

An HTTP proxy on 127.0.0.1 (an ephemeral port, for the stack's life) takes absolute-form requests
(`GET http://host/path HTTP/1.1`) and CONNECT (`CONNECT host:443`), for the stack's own host names
only (any other: 403 with a sentence). Each connection becomes one relay exec in the stack's relay
container on that network (`exec_relay.py`), which opens the TCP connection there: the host itself
only speaks to the Docker engine's API and to its loopback, never to the network's private-range
addresses. One request per connection (the answer says `Connection: close`); a CONNECT becomes a
tunnel, answered 502 at once when nothing listens on its port (the sites serve no HTTPS, so the
benchmark's HTTPS-first probe fails fast and falls back to HTTP).

    with ServicesProxy(relay_container, {"mailhub.osworld2.test", …}) as proxy:
        proxy.url   # http://127.0.0.1:PORT, for HTTP_PROXY and HTTPS_PROXY
"""

from __future__ import annotations

import io
import logging
import socket
import threading
import urllib.parse

from .base import SandboxError
from .exec_relay import RELAY_SCRIPT, ExecRelay, pump_in, pump_out, stop_listening
from .http_framing import (
    Head,
    HttpError,
    body_framing,
    copy_body,
    encode_head,
    error_answer,
    read_head,
    request_line,
)

log = logging.getLogger(__name__)

RELAY_USER = "nobody"
IDLE_TIMEOUT_S = 120.0
"""How long a client may take over its request's head and body."""
ANSWER_TIMEOUT_S = 600.0
"""How long a service may take to answer a request (a CONNECT tunnel has no limit)."""
PROXY_ONLY = ("proxy-authorization", "proxy-connection", "expect")


class ServicesProxy:
    """127.0.0.1:`port` -> the stack's hosts, each connection relayed from `container`."""

    def __init__(self, container, hosts: set[str] | frozenset[str]):
        self.container = container
        self.hosts = frozenset(h.lower().rstrip(".") for h in hosts)
        self.listener: socket.socket | None = None
        self.clients: set[socket.socket] = set()
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def start(self) -> ServicesProxy:
        self.listener = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._accept, daemon=True, name="services-proxy").start()
        return self

    def _accept(self) -> None:
        listener = self.listener
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed
            with self.lock:
                self.clients.add(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(IDLE_TIMEOUT_S)
        reader = client.makefile("rb")
        try:
            head = read_head(reader)
            if head is not None:
                self._answer(head, client, reader)
        except HttpError as exc:
            _send(client, error_answer(exc.status, exc.text))
        except (OSError, ValueError) as exc:
            log.debug("services proxy connection ended: %s", exc)
        finally:
            reader.close()
            _end(client)
            with self.lock:
                self.clients.discard(client)

    def _answer(self, head: Head, client: socket.socket, reader) -> None:
        method, target, _version = request_line(head)
        if method == "CONNECT":
            host, port = self._allowed(*_host_port(target, default=None))
            relay = self._relay(host, port)
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            _splice(reader.read1, relay, client)
            return
        parts = urllib.parse.urlsplit(target)
        if parts.scheme != "http" or not parts.hostname:
            raise HttpError(
                400,
                "StateAct's services proxy takes absolute http:// requests and CONNECT "
                f"(not {target[:80]!r})",
            )
        host, port = self._allowed(*_host_port(parts.netloc, default=80))
        framing = body_framing(head, request=True)
        relay = self._relay(host, port)
        if "100-continue" in head.tokens("expect"):
            client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = head.passed_on(PROXY_ONLY)
        if head.get("host") is None:
            headers.insert(0, ("Host", parts.netloc))
        relay.sock.settimeout(ANSWER_TIMEOUT_S)
        relay.sendall(encode_head(f"{method} {path} HTTP/1.1", [*headers, ("Connection", "close")]))
        copy_body(reader, relay.sendall, framing)
        _answer_back(relay, client)

    def _allowed(self, host: str, port: int) -> tuple[str, int]:
        if host not in self.hosts:
            raise HttpError(
                403,
                f"{host} is not a service of this stack: StateAct's services proxy reaches only "
                "the host names of the services it started",
            )
        return host, port

    def _relay(self, host: str, port: int) -> ExecRelay:
        command = ["python3", "-I", "-c", RELAY_SCRIPT, host, str(port)]
        try:
            relay = ExecRelay.open(self.container, command, RELAY_USER)
        except SandboxError as exc:
            raise HttpError(502, f"{host}:{port} cannot be reached: {exc}") from None
        try:
            relay.wait_connected()
        except ConnectionError as exc:
            relay.close()
            raise HttpError(
                502, f"{host}:{port} does not answer on the services' network ({exc})"
            ) from None
        return relay

    def close(self) -> None:
        """Stop listening and end every connection still open (idempotent)."""
        stop_listening(self.listener)
        self.listener = None
        with self.lock:
            clients, self.clients = list(self.clients), set()
        for client in clients:
            _end(client)

    def __enter__(self) -> ServicesProxy:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.close()


def _host_port(authority: str, default: int | None) -> tuple[str, int]:
    """`host[:port]` -> (host, port); a CONNECT (no default) must name its port."""
    host, sep, port = authority.rpartition(":")
    if not sep or "]" in port:
        host, port = authority, ""
    if not port and default is None:
        raise HttpError(400, f"CONNECT needs host:port, not {authority[:80]!r}")
    if port and (not port.isdigit() or not 0 < int(port) < 65536):
        raise HttpError(400, f"{authority[:80]!r} does not name a port")
    return host.lower().rstrip("."), int(port) if port else default


def _answer_back(relay: ExecRelay, client: socket.socket) -> None:
    """The upstream's answer: its head with `Connection: close` (one request per connection
    here), then everything after it as it comes, until the upstream closes."""
    answers = io.BufferedReader(relay, buffer_size=1 << 16)
    try:
        answer = read_head(answers)
        if answer is None:
            raise HttpError(502, "the service closed the connection without answering")
        client.sendall(encode_head(answer.start, [*answer.passed_on(), ("Connection", "close")]))
        while data := answers.read1(1 << 16):
            client.sendall(data)
    finally:
        relay.close()


def _splice(read, relay: ExecRelay, client: socket.socket) -> None:
    client.settimeout(None)
    threading.Thread(target=pump_in, args=(read, relay), daemon=True).start()
    try:
        pump_out(relay, client)
    finally:
        relay.close()


def _send(client: socket.socket, data: bytes) -> None:
    try:
        client.sendall(data)
    except OSError:
        pass


def _end(client: socket.socket) -> None:
    try:
        client.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    client.close()
