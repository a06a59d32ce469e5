"""A mock site written for StateAct's service tests, copied into an image built FROM the base
image: `python3 service_site.py PORT NAME [ADDRESS]` (default all addresses; tests that run it on
the host give 127.0.0.1). Like OSWorld-web's sites it keeps a state per cookie (`GET|POST
/api/state?cookie=…`); `/hello.txt` says who it is, any other GET echoes what the site saw (path,
Host, X-Forwarded-*). POST bodies may come with a length or chunked."""

import hashlib
import json
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, NAME = int(sys.argv[1]), sys.argv[2]
STATES: dict[str, bytes] = {}
LOCK = threading.Lock()


class Site(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self, body: bytes, kind: str = "application/json") -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _cookie(self) -> str:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        return query.get("cookie", ["default"])[0]

    def do_GET(self) -> None:
        path = urllib.parse.urlsplit(self.path).path
        if path == "/hello.txt":
            return self._answer(f"{NAME} is up\n".encode(), "text/plain")
        if path == "/greeting.txt":  # written at build time from a build argument
            with open("/srv/greeting.txt", "rb") as f:
                return self._answer(f.read(), "text/plain")
        if path.startswith("/api/state"):
            with LOCK:
                return self._answer(STATES.get(self._cookie(), b"{}"))
        seen = {
            "site": NAME,
            "path": self.path,
            "host": self.headers.get("Host"),
            "x_forwarded_for": self.headers.get_all("X-Forwarded-For"),
            "x_forwarded_proto": self.headers.get("X-Forwarded-Proto"),
            "x_forwarded_host": self.headers.get("X-Forwarded-Host"),
        }
        return self._answer(json.dumps(seen).encode())

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = b""
            while size := int(self.rfile.readline().split(b";")[0], 16):
                data += self.rfile.read(size)
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass
            return data
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def do_POST(self) -> None:
        data = self._body()
        with LOCK:
            STATES[self._cookie()] = data
        digest = hashlib.sha256(data).hexdigest()
        self._answer(json.dumps({"site": NAME, "stored": len(data), "sha256": digest}).encode())

    def log_message(self, *args) -> None:
        pass


ADDRESS = sys.argv[3] if len(sys.argv) > 3 else "0.0.0.0"
ThreadingHTTPServer((ADDRESS, PORT), Site).serve_forever()
