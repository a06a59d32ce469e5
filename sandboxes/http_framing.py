"""HTTP/1.1 message framing on the standard library alone, for StateAct's two service proxies: the
front proxy in its container (`service_front.py`, which is copied in beside this file) and the
host's loopback proxy (`service_proxy.py`).

Bodies are never held whole: they are copied as they arrive, in pieces of at most `CHUNK` bytes
(a site's state of 1.5 MB is POSTed), framed by Content-Length, by chunked coding (passed on as
is, chunk by chunk) or by the end of the connection. A head is bounded (`MAX_HEAD_BYTES`,
`MAX_HEADER_LINES`): the agent's browser is one of the clients, so what arrives may be hostile.
"""

from __future__ import annotations

import http
import re

MAX_HEAD_BYTES = 64 * 1024
MAX_HEADER_LINES = 100
MAX_CHUNK_LINE = 4096
CHUNK = 64 * 1024
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "upgrade"}
)
"""Headers about one connection, never passed on (Transfer-Encoding is kept: bodies pass as they
came, chunked coding included)."""
CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


class HttpError(Exception):
    """A message that cannot be served: its status and one sentence for the answer's body."""

    def __init__(self, status: int, text: str):
        super().__init__(text)
        self.status = status
        self.text = text


class Head:
    """A request's or response's start line and its header fields, in order."""

    def __init__(self, start: str, headers: list[tuple[str, str]]):
        self.start = start
        self.headers = headers

    def values(self, name: str) -> list[str]:
        name = name.lower()
        return [value for key, value in self.headers if key.lower() == name]

    def get(self, name: str) -> str | None:
        found = self.values(name)
        return found[-1] if found else None

    def tokens(self, name: str) -> set[str]:
        """A comma-separated field's tokens, lowercase (`Connection: keep-alive, Upgrade`)."""
        return {t.strip().lower() for v in self.values(name) for t in v.split(",") if t.strip()}

    def passed_on(self, also_drop: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        """The fields a proxy passes on: no hop-by-hop field, nor one the Connection field names."""
        dropped = HOP_BY_HOP | self.tokens("connection") | {n.lower() for n in also_drop}
        return [(key, value) for key, value in self.headers if key.lower() not in dropped]


def encode_head(start: str, headers: list[tuple[str, str]]) -> bytes:
    lines = [start, *(f"{key}: {value}" for key, value in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def read_head(reader) -> Head | None:
    """The next head from a buffered binary reader; None when the stream ends before a byte."""
    lines: list[str] = []
    size = 0
    while True:
        line = reader.readline(MAX_HEAD_BYTES + 1)
        if not line:
            if lines:
                raise HttpError(400, "the message ended inside its head")
            return None
        size += len(line)
        if size > MAX_HEAD_BYTES or len(lines) > MAX_HEADER_LINES or not line.endswith(b"\n"):
            raise HttpError(431, "the message's head is too large")
        if line in (b"\r\n", b"\n"):
            if lines:
                break
            continue  # a stray empty line before a message is allowed (RFC 9112, 2.2)
        lines.append(line.rstrip(b"\r\n").decode("latin-1"))
    headers = []
    for raw in lines[1:]:
        name, sep, value = raw.partition(":")
        if not sep or not TOKEN.match(name):
            raise HttpError(400, "a header line of the message is malformed")
        headers.append((name, value.strip(" \t")))
    return Head(lines[0], headers)


def request_line(head: Head) -> tuple[str, str, str]:
    """Method, target and version of a request's start line."""
    parts = head.start.split(" ")
    if len(parts) != 3 or not TOKEN.match(parts[0]) or not parts[2].startswith("HTTP/1."):
        raise HttpError(400, "the request line is malformed")
    return parts[0], parts[1], parts[2]


def status_of(head: Head) -> int:
    parts = head.start.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise HttpError(502, "the upstream's answer is not HTTP")
    return int(parts[1])


def body_framing(head: Head, request: bool) -> tuple[str, int]:
    """How the body after `head` ends: ("length", N), ("chunked", 0), ("none", 0) or, for a
    response, ("close", 0). A request both chunked and with a length is refused: the two readings
    differ, which is how requests are smuggled past a proxy."""
    codings = head.tokens("transfer-encoding")
    lengths = {v.strip() for raw in head.values("content-length") for v in raw.split(",")}
    if codings:
        if request and lengths:
            raise HttpError(400, "the request has both Transfer-Encoding and Content-Length")
        last = head.values("transfer-encoding")[-1].split(",")[-1].strip().lower()
        if last == "chunked":
            return ("chunked", 0)
        if request:
            raise HttpError(400, "the request's transfer coding does not end in chunked")
        return ("close", 0)
    if lengths:
        value = lengths.pop() if len(lengths) == 1 else ""
        if not value.isdigit():
            raise HttpError(400 if request else 502, "the message's Content-Length is not valid")
        return ("length", int(value))
    return ("none", 0) if request else ("close", 0)


def copy_body(reader, send, framing: tuple[str, int]) -> None:
    """Pass one body on as it arrives; `send` takes each piece (a socket's `sendall`)."""
    kind, length = framing
    if kind == "length":
        copy_exact(reader, send, length)
    elif kind == "chunked":
        copy_chunked(reader, send)
    elif kind == "close":
        while data := reader.read1(CHUNK):
            send(data)


def copy_exact(reader, send, length: int) -> None:
    while length > 0:
        data = reader.read1(min(CHUNK, length))
        if not data:
            raise ConnectionError("the body ended before its length")
        send(data)
        length -= len(data)


def copy_chunked(reader, send) -> None:
    """Chunk by chunk, each size line checked, then the trailer fields up to the empty line."""
    while True:
        line = reader.readline(MAX_CHUNK_LINE + 1)
        size_text = line.split(b";", 1)[0].strip()
        if not line.endswith(b"\n") or not CHUNK_SIZE.fullmatch(size_text):
            raise HttpError(400, "a chunk's size line is malformed")
        send(line)
        size = int(size_text, 16)
        if size == 0:
            break
        copy_exact(reader, send, size)
        end = reader.readline(3)
        if end not in (b"\r\n", b"\n"):
            raise HttpError(400, "a chunk does not end where its size says")
        send(end)
    total = 0
    while True:
        line = reader.readline(MAX_HEAD_BYTES + 1)
        total += len(line)
        if not line:
            raise ConnectionError("the body ended inside its trailer")
        if total > MAX_HEAD_BYTES:
            raise HttpError(431, "the message's trailer is too large")
        send(line)
        if line in (b"\r\n", b"\n"):
            return


def has_no_body(method: str, status: int) -> bool:
    """Responses that end with their head (RFC 9112, 6.3)."""
    return method == "HEAD" or status in (204, 304) or 100 <= status < 200


def error_answer(status: int, text: str) -> bytes:
    """A short plain-text answer that ends the connection."""
    body = (text.rstrip(".") + ".\n").encode()
    reason = http.HTTPStatus(status).phrase
    headers = [
        ("Content-Type", "text/plain; charset=utf-8"),
        ("Content-Length", str(len(body))),
        ("Connection", "close"),
    ]
    return encode_head(f"HTTP/1.1 {status} {reason}", headers) + body
