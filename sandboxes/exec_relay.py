"""A TCP connection made from inside a container, carried over one Docker exec: the host writes to
the exec's standard input and reads its standard output, which the engine frames together with
its standard error (8-byte headers: the stream, then the length). The relay program in the
container reports on standard error in lines tagged with a marker only this exec knows:
`MARKER connected` once its connection is up, `MARKER failed REASON` when it could not connect,
`MARKER end` when it is over (the engine keeps an exec's stream open while its input is, so the
end is told in the stream; the host then closes the input, and the stream ends once the rest of
the output is through).

Used by the guest port forwards (`tasks/osworld2/forward.py`, socat in the sandbox) and the
services' host proxy (`service_proxy.py`, `RELAY_SCRIPT` in the relay container).
"""

from __future__ import annotations

import io
import secrets
import socket
import struct
import threading

from .base import SandboxError

FRAME_HEADER = 8
STDOUT, STDERR = 1, 2
CHUNK = 1 << 16
MAX_ERROR_LINE = 4096
DRAIN_TIMEOUT_S = 10.0
"""How long the rest of a relay's output may take once it said `end`."""
RELAY_SCRIPT = r"""
import os, socket, sys, threading
host, port, marker = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def say(word):
    os.write(2, (marker + " " + word + "\n").encode())
try:
    upstream = socket.create_connection((host, port), timeout=10)
except OSError as exc:
    say("failed " + str(exc.strerror or type(exc).__name__).replace("\n", " "))
    sys.exit(1)
upstream.settimeout(None)
say("connected")
def inward():
    try:
        while data := os.read(0, 65536):
            upstream.sendall(data)
        upstream.shutdown(socket.SHUT_WR)
    except OSError:
        pass
threading.Thread(target=inward, daemon=True).start()
try:
    while data := upstream.recv(65536):
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]
except OSError:
    pass
say("end")
"""
"""`python3 -c RELAY_SCRIPT HOST PORT MARKER`: the relay on the standard library (the base image
has no socat)."""
_engine_lock = threading.Lock()
"""One engine client serves every relay thread; its HTTP session is not made for concurrent use."""


class ExecRelay(io.RawIOBase):
    """One relay exec: `sendall` feeds its standard input, `read` gives its standard output
    unframed (b"" once the stream closed, which closing the input after `end` brings about)."""

    def __init__(self, sock: socket.socket, marker: str):
        self.sock = sock
        self.marker = marker.encode()
        self.pending = bytearray()
        self.errors = bytearray()
        self.status: str | None = None
        """`connected`, `failed REASON` or `end`, as the relay last said."""
        self.ended = False

    @classmethod
    def open(cls, container, command: list[str], user: str) -> ExecRelay:
        """Start `command` (which gets the marker as its last argument) in `container`."""
        marker = secrets.token_hex(8)
        api = container.client.api
        try:
            with _engine_lock:
                exec_id = api.exec_create(
                    container.id, [*command, marker], stdin=True, tty=False, user=user
                )["Id"]
                raw = api.exec_start(exec_id, socket=True, demux=False)
        except Exception as exc:  # noqa: BLE001 -- the engine's errors vary; one sentence out
            raise SandboxError(f"the container refused a relay exec: {exc}") from None
        return cls(getattr(raw, "_sock", raw), marker)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self.pending and not self.ended:
            self._next_frame()
        size = min(len(buffer), len(self.pending))
        buffer[:size] = self.pending[:size]
        del self.pending[:size]
        return size

    def wait_connected(self) -> None:
        """Return once the relay's connection is up; ConnectionError with its reason if not."""
        while self.status is None and not self.ended:
            self._next_frame()
        if self.status != "connected":
            reason = (self.status or "").removeprefix("failed ") or "the relay ended silently"
            raise ConnectionError(reason)

    def _next_frame(self) -> None:
        header = self._exactly(FRAME_HEADER)
        if header is None:
            self.ended = True
            return
        payload = self._exactly(struct.unpack(">I", header[4:8])[0])
        if payload is None:
            self.ended = True
            return
        if header[0] == STDOUT:
            self.pending += payload
            return
        self.errors += payload
        while b"\n" in self.errors:
            line, _, rest = bytes(self.errors).partition(b"\n")
            self.errors = bytearray(rest)
            word = line.removeprefix(self.marker + b" ")
            if word != line:  # only the relay's own lines carry the marker
                self.status = word.decode(errors="replace")
                if self.status == "end":
                    self._drain()
        if len(self.errors) > MAX_ERROR_LINE:  # what else the relay's program says is not kept
            del self.errors[:-MAX_ERROR_LINE]

    def _drain(self) -> None:
        """After `end`: the engine copies an exec's standard output and error apart, so output
        may still follow the line; closing the input lets the engine end the stream once all of
        it is through (the stream's end, not the line, ends the reading)."""
        self.shutdown_write()
        self.sock.settimeout(DRAIN_TIMEOUT_S)

    def _exactly(self, size: int) -> bytes | None:
        data = b""
        while len(data) < size:
            try:
                piece = self.sock.recv(size - len(data))
            except OSError:
                return None
            if not piece:
                return None
            data += piece
        return data

    def sendall(self, data: bytes) -> None:
        self.sock.sendall(data)

    def shutdown_write(self) -> None:
        """End the relay's standard input (its connection's writing half)."""
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        try:  # shut down first: a recv blocked on it in another thread would keep it open
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        super().close()


def pump_in(read, relay: ExecRelay) -> None:
    """Bytes from `read` (a client socket's `recv`, or its buffered reader's `read1`) into the
    relay, then its input's end; run in a thread of its own."""
    try:
        while data := read(CHUNK):
            relay.sendall(data)
    except (OSError, ValueError):
        pass
    relay.shutdown_write()


def pump_out(relay: ExecRelay, client: socket.socket) -> None:
    """The relay's output to the client until the relay ends."""
    try:
        while data := relay.read(CHUNK):
            client.sendall(data)
    except (OSError, ValueError):
        pass


def stop_listening(listener: socket.socket | None) -> None:
    """Close a listening socket so its accepting thread wakes: a close alone leaves the port
    listening under a thread blocked in accept()."""
    if listener is None:
        return
    try:
        listener.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    listener.close()
