"""A guest port on the host's loopback: what OSWorld's host-side controllers connect to when they
talk to the guest's Chrome DevTools (9222) or VLC's HTTP interface (8080) directly.

The sandbox has no network to publish ports on, so each accepted connection becomes one Docker
exec of `socat - TCP:127.0.0.1:PORT` inside the container, its standard input and output spliced
to the connection (Docker frames an exec's output; the frames are unwrapped here). The exec runs
as `nobody`, never as the agent. On the local backend the guest's ports are
the host's own, so nothing is forwarded.

    with PortForward(sandbox, 9222) as cdp:
        cdp.port  # on 127.0.0.1
"""

from __future__ import annotations

import logging
import secrets
import socket
import struct
import threading

from harness.kernel.core import StateActError

log = logging.getLogger(__name__)

RELAY_USER = "nobody"
"""Who runs the relay in the sandbox: neither the agent nor root (it only opens a loopback
connection)."""
FRAME_HEADER = 8
STDOUT = 1
CHUNK = 1 << 16


class PortForward:
    """127.0.0.1:`port` on the host relayed to 127.0.0.1:`guest_port` in the sandbox."""

    def __init__(self, sandbox, guest_port: int, fallback_ports: tuple[int, ...] = ()):
        """`fallback_ports` are tried in order when nothing listens on `guest_port`."""
        self.sandbox = sandbox
        self.guest_port = guest_port
        self.fallback_ports = fallback_ports
        self.container = getattr(sandbox, "container", None)
        self.listener: socket.socket | None = None
        self.closed = threading.Event()

    @property
    def port(self) -> int:
        """The host port to connect to (the guest's own port where nothing is forwarded)."""
        return self.listener.getsockname()[1] if self.listener else self.guest_port

    def __enter__(self) -> PortForward:
        if self.container is None:  # the local backend: the guest's loopback is the host's
            return self
        self.listener = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._accept, daemon=True, name="osworld2-forward").start()
        return self

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        try:
            marker = secrets.token_hex(8)
            inner = self._open_exec(marker)
        except StateActError as exc:
            log.warning("forwarding guest port %d: %s", self.guest_port, exc)
            client.close()
            return
        threading.Thread(target=_pump_in, args=(client, inner), daemon=True).start()
        try:
            _pump_out(inner, client, marker)
        finally:
            for end in (client, inner):
                try:  # shut down first: a recv blocked on it in the other pump would keep it open
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                end.close()

    def _open_exec(self, marker: str) -> socket.socket:
        """The relay: socat, then `marker` on its standard error once socat has ended (the engine
        keeps an exec's stream open while its input is, so the end is told in the stream)."""
        api = self.container.client.api
        ports = (self.guest_port, *self.fallback_ports)
        tries = " || ".join(f"socat - TCP:127.0.0.1:{int(port)}" for port in ports)
        relay = f"{tries}; echo {marker} >&2"
        try:
            exec_id = api.exec_create(
                self.container.id,
                ["sh", "-c", relay],
                stdin=True,
                tty=False,
                user=RELAY_USER,
            )["Id"]
            raw = api.exec_start(exec_id, socket=True, demux=False)
        except Exception as exc:  # noqa: BLE001 -- the engine's errors vary; one sentence out
            raise StateActError(f"the sandbox refused a relay exec: {exc}") from None
        return getattr(raw, "_sock", raw)

    def __exit__(self, *exc_info) -> None:
        self.closed.set()
        if self.listener is not None:
            self.listener.close()
            self.listener = None


def _pump_in(client: socket.socket, inner: socket.socket) -> None:
    """The connection's bytes to socat's standard input; its end closes socat's input."""
    try:
        while data := client.recv(CHUNK):
            inner.sendall(data)
        inner.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _pump_out(inner: socket.socket, client: socket.socket, marker: str) -> None:
    """socat's standard output, unframed, to the connection, until the stream ends or the relay's
    standard error says socat has ended."""
    buffer, errors = bytearray(), bytearray()
    while True:
        try:
            data = inner.recv(CHUNK)
        except OSError:
            return
        if not data:
            return
        buffer.extend(data)
        while len(buffer) >= FRAME_HEADER:
            kind, size = buffer[0], struct.unpack(">I", buffer[4:8])[0]
            if len(buffer) < FRAME_HEADER + size:
                break
            payload = bytes(buffer[FRAME_HEADER : FRAME_HEADER + size])
            del buffer[: FRAME_HEADER + size]
            if kind != STDOUT:
                errors.extend(payload)
                if marker.encode() in errors:
                    return
                del errors[: -len(marker)]  # only a marker split over frames needs the tail
                continue
            try:
                client.sendall(payload)
            except OSError:
                return
