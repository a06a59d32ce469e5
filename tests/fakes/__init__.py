"""Fake model-provider HTTP servers for tests: real sockets on 127.0.0.1, spoken to by the real
SDKs.

    from tests.fakes import FakeAnthropicServer, FakeOpenAIServer

    with FakeAnthropicServer([{"text": "hi"}]) as server: model =
        AnthropicModel("claude-sonnet-4-5", ModelConfig(base_url=server.base_url, api_key="k"))
        ... server.requests  # [{"path", "headers", "json"}, ...]

Both take `responses`: a list whose items are consumed one per completion request, each
- a reply spec: `{"text": str?, "content": [blocks]?, "tool_calls": [{"name", "input" |
    "arguments", "id"?}]?, "usage": {...}?, "stop_reason" | "finish_reason": str?}` (see each
    server for details);
- an error spec: `{"status": 529, "headers": {"retry-after": "1"}, "body": {...}?, "message": str?}`
  (the body defaults to the provider's error shape carrying `message`);
- a callable `(request_json) -> spec` to react to what the client sent (e.g. earlier tool
  results). When the responses run out, the server answers 500 with `x-should-retry: false` and a
  message saying so.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Spec = dict | Callable[[dict], dict]


class FakeProviderServer:
    """Shared plumbing: the HTTP server thread, the response queue and the request log."""

    provider = "fake"
    completion_paths: tuple[str, ...] = ()

    def __init__(self, responses: list[Spec] | None = None):
        self.responses: list[Spec] = list(responses or [])
        self.requests: list[dict] = []
        self.served = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle
    # ----------------------------------------------------------------------------------

    def start(self) -> FakeProviderServer:
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        # A short poll interval keeps shutdown (and so every test using a fake) fast.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "the fake server is not running"
        return self._server.server_address[1]

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def completion_requests(self) -> list[dict]:
        """The recorded requests that asked for a completion (not token counts)."""
        return [r for r in self.requests if r["path"] in self.completion_paths]

    def add(self, *specs: Spec) -> None:
        """Queue more responses while the server runs."""
        with self._lock:
            self.responses.extend(specs)

    # -- request handling
    # ---------------------------------------------------------------------------

    def handle(self, path: str, headers: dict, body: dict) -> tuple[int, dict, dict]:
        """(status, headers, JSON body) for one request; the subclass shapes replies and errors."""
        with self._lock:
            self.requests.append({"path": path, "headers": headers, "json": body})
            if path not in self.completion_paths:
                return self.other_path(path, body)
            if not self.responses:
                message = (
                    f"fake {self.provider} server: no scripted responses left after {self.served} "
                    f"completion requests"
                )
                return 500, {"x-should-retry": "false"}, self.error_body(500, message)
            spec = self.responses.pop(0)
            self.served += 1
            number = self.served
        if callable(spec):
            spec = spec(body)
        if "status" in spec:
            status = int(spec["status"])
            message = spec.get("message", f"fake error {status}")
            return (
                status,
                dict(spec.get("headers", {})),
                spec.get("body") or self.error_body(status, message),
            )
        return 200, {}, self.reply(spec, body, number)

    def other_path(self, path: str, body: dict) -> tuple[int, dict, dict]:
        return 404, {}, self.error_body(404, f"fake {self.provider} server has no route {path}")

    def reply(self, spec: dict, request: dict, number: int) -> dict:
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> dict:
        raise NotImplementedError


def _make_handler(fake: FakeProviderServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - the http.server naming
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"__unparsed__": raw.decode("utf-8", "replace")}
            path = self.path.split("?", 1)[0]
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                status, extra_headers, payload = fake.handle(path, headers, body)
            except Exception as exc:  # a broken test callable must not hang the client
                status, extra_headers = 500, {"x-should-retry": "false"}
                payload = fake.error_body(500, f"fake server callable failed: {exc!r}")
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for key, value in extra_headers.items():
                self.send_header(key, str(value))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler


from tests.fakes.anthropic_server import FakeAnthropicServer  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402

__all__ = ["FakeProviderServer", "FakeAnthropicServer", "FakeOpenAIServer"]
