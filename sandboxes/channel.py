"""Line channels to the toolbox process: over a Docker attach socket or over a child's pipes.

Both read with `select` into a buffer so a read can time out without losing partial data.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import subprocess
import time
from collections import deque

from .base import SandboxError

log = logging.getLogger(__name__)

STDERR_TAIL_LINES = 50


class _LineBuffer:
    """Accumulates bytes and hands out complete lines."""

    def __init__(self) -> None:
        self._data = bytearray()

    def feed(self, data: bytes) -> None:
        self._data.extend(data)

    def pop_line(self) -> bytes | None:
        end = self._data.find(b"\n")
        if end < 0:
            return None
        line = bytes(self._data[:end])
        del self._data[: end + 1]
        return line


def _remaining(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    return max(0.0, deadline - time.monotonic())


def _readable(fds: list[int], timeout: float | None) -> list[int]:
    """The fds of `fds` ready to read within `timeout` seconds (None: no limit). poll, not select:
    a harness with dozens of sandboxes open holds descriptors past select's limit of 1024."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    wait_ms = None if timeout is None else max(0, int(timeout * 1000))
    return [fd for fd, _ in poller.poll(wait_ms)]


class PipeChannel:
    """The toolbox as a local child process (bubblewrap backend)."""

    def __init__(self, process: subprocess.Popen):
        self.process = process
        self._stdout = _LineBuffer()
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)

    def send_line(self, line: bytes) -> None:
        try:
            self.process.stdin.write(line + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise SandboxError(f"the sandbox's toolbox is gone ({exc}).") from None

    def read_line(self, timeout: float | None) -> bytes:
        deadline = None if timeout is None else time.monotonic() + timeout
        out_fd = self.process.stdout.fileno()
        err_fd = self.process.stderr.fileno() if self.process.stderr else None
        while True:
            line = self._stdout.pop_line()
            if line is not None:
                return line
            fds = [out_fd] + ([err_fd] if err_fd is not None else [])
            ready = _readable(fds, _remaining(deadline))
            if not ready:
                raise TimeoutError("no answer from the toolbox in time")
            for fd in ready:
                chunk = os.read(fd, 1 << 20)
                if fd == err_fd:
                    if chunk:
                        self.stderr_tail.extend(chunk.decode(errors="replace").splitlines())
                    else:
                        err_fd = None
                    continue
                if not chunk:
                    raise SandboxError(
                        "the sandbox's toolbox exited" + _stderr_note(self.stderr_tail)
                    )
                self._stdout.feed(chunk)

    def close(self) -> None:
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass


class DockerExecChannel:
    """The toolbox as a container's process (or a `docker exec`), spoken to over the engine's
    multiplexed attach socket.

    With no TTY the engine frames the output: an 8-byte header (stream id, 3 zero bytes, big-endian
    length) before each chunk; stream 1 is stdout, 2 is stderr.
    """

    def __init__(self, sock):
        # docker-py returns a SocketIO wrapper; the raw socket is what select and sendall need.
        self._sock: socket.socket = getattr(sock, "_sock", sock)
        self._wrapper = sock
        self._raw = bytearray()
        self._stdout = _LineBuffer()
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)

    def send_line(self, line: bytes) -> None:
        self.send_raw(line + b"\n")

    def send_raw(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
        except OSError as exc:
            raise SandboxError(f"the sandbox's toolbox is gone ({exc}).") from None

    def _demux(self) -> None:
        while len(self._raw) >= 8:
            stream, size = self._raw[0], int.from_bytes(self._raw[4:8], "big")
            if len(self._raw) < 8 + size:
                return
            payload = bytes(self._raw[8 : 8 + size])
            del self._raw[: 8 + size]
            if stream == 2:
                self.stderr_tail.extend(payload.decode(errors="replace").splitlines())
            else:
                self._stdout.feed(payload)

    def read_line(self, timeout: float | None) -> bytes:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            line = self._stdout.pop_line()
            if line is not None:
                return line
            ready = _readable([self._sock.fileno()], _remaining(deadline))
            if not ready:
                raise TimeoutError("no answer from the toolbox in time")
            chunk = self._sock.recv(1 << 20)
            if not chunk:
                raise SandboxError("the sandbox's toolbox exited" + _stderr_note(self.stderr_tail))
            self._raw.extend(chunk)
            self._demux()

    def close(self) -> None:
        for closer in (self._sock.close, getattr(self._wrapper, "close", None)):
            try:
                if closer:
                    closer()
            except OSError:
                pass


def _stderr_note(tail: deque[str]) -> str:
    lines = [line for line in tail if line.strip()]
    return f"; its last words: {lines[-1][:300]}" if lines else "."
