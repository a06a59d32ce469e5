"""A guest port on the host's loopback: what OSWorld's host-side controllers connect to when they
talk to the guest's Chrome DevTools (9222) or VLC's HTTP interface (8080) directly.

The sandbox has no network to publish ports on, so each accepted connection becomes one Docker
exec of `socat - TCP:127.0.0.1:PORT` inside the container, its standard input and output spliced
to the connection (`sandboxes/exec_relay.py` unwraps the engine's frames). The exec runs
as `nobody`, never as the agent. On the local backend the guest's ports are
the host's own, so nothing is forwarded.

    with PortForward(sandbox, 9222) as cdp:
        cdp.port  # on 127.0.0.1
"""

from __future__ import annotations

import logging
import socket
import threading

from harness.kernel.core import StateActError
from sandboxes.exec_relay import ExecRelay, pump_in, pump_out, stop_listening

log = logging.getLogger(__name__)

RELAY_USER = "nobody"
"""Who runs the relay in the sandbox: neither the agent nor root (it only opens a loopback
connection)."""


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
        ports = (self.guest_port, *self.fallback_ports)
        tries = " || ".join(f"socat - TCP:127.0.0.1:{int(port)}" for port in ports)
        try:  # `$0` is the relay's marker (exec_relay.py): said once socat has ended
            relay = ExecRelay.open(
                self.container, ["sh", "-c", f'{tries}; echo "$0 end" >&2'], RELAY_USER
            )
        except StateActError as exc:
            log.warning("forwarding guest port %d: %s", self.guest_port, exc)
            client.close()
            return
        threading.Thread(target=pump_in, args=(client.recv, relay), daemon=True).start()
        try:
            pump_out(relay, client)
        finally:
            try:  # shut down first: a recv blocked on it in the other pump would keep it open
                client.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            client.close()
            relay.close()

    def __exit__(self, *exc_info) -> None:
        self.closed.set()
        stop_listening(self.listener)
        self.listener = None
