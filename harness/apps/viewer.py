"""`stateact view OUT`: the report and every trajectory, served live on the loopback.

A suite directory (results.jsonl, runs/) is shown as its report, rebuilt from results.jsonl on each
request (the latest line of each run, so a suite still running shows what has finished, plus the
runs under way); a single run directory is shown as its trajectory page. Each page asks
`/_version?page=…` every 2 s and reloads when the files behind it changed, so it follows a run
without the user pressing reload. Files under OUT (screenshots) are served as they are; nothing
outside OUT is reachable (paths are resolved, links leading out are refused), and the server binds
to a loopback address only: a run's pages hold the task's data and the model's words.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import mimetypes
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from harness.kernel.core import StateActError
from harness.reports import summary as summaries
from harness.reports.html_report import report_html
from harness.reports.page import esc
from harness.reports.trajectory import trajectory_html

from .outdir import ResultsFile

POLL_MS = 2000
REFRESH_SCRIPT = """
(function(){
  const page = %(page)s;
  let seen = %(version)s;
  async function poll(){
    try {
      const r = await fetch('/_version?page=' + encodeURIComponent(page), {cache: 'no-store'});
      if (r.ok) {
        const v = (await r.json()).version;
        if (v !== seen) { location.reload(); return; }
      }
    } catch (e) { /* the viewer stopped: keep the page as it is */ }
    setTimeout(poll, %(poll)d);
  }
  setTimeout(poll, %(poll)d);
})();
"""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class View:
    """What OUT holds and the pages made from it."""

    def __init__(self, out_dir: str | Path):
        self.root = Path(out_dir).resolve()
        if not self.root.is_dir():
            raise StateActError(f"{out_dir} is not a folder; give a suite or run directory.")
        self.is_suite = (self.root / "results.jsonl").exists() or (self.root / "runs").is_dir()
        if not self.is_suite and not (
            (self.root / "result.json").exists() or (self.root / "trajectory.jsonl").exists()
        ):
            raise StateActError(
                f"{out_dir} is neither a suite directory (results.jsonl, runs/) nor a run "
                "directory (result.json, trajectory.jsonl)."
            )

    # -- what a page depends on, for the refresh
    def version(self, page: str) -> str:
        files = self._sources(page)
        stamp = []
        for path in files:
            try:
                info = path.stat()
                stamp.append(f"{path.name}:{info.st_size}:{info.st_mtime_ns}")
            except OSError:
                stamp.append(f"{path.name}:-")
        return hashlib.sha256("|".join(stamp).encode()).hexdigest()[:16]

    def _sources(self, page: str) -> list[Path]:
        run_dir = self.run_dir_of(page)
        if run_dir is None:  # the report: every run's result and the running ones' trajectories
            runs = sorted((self.root / "runs").glob("*")) if (self.root / "runs").is_dir() else []
            return [self.root / "results.jsonl", *[r / "result.json" for r in runs]]
        return [run_dir / "trajectory.jsonl", run_dir / "result.json", *run_dir.glob("gate/*")]

    def run_dir_of(self, page: str) -> Path | None:
        """The run folder a page shows (None: the suite report)."""
        if not self.is_suite:
            return self.root
        if page in ("", "/", "/report.html", "/index.html"):
            return None
        parts = [p for p in page.strip("/").split("/") if p]
        if len(parts) >= 2 and parts[-1] == "trajectory.html":
            run_dir = self.inside("/".join(parts[:-1]))
            if run_dir is not None and run_dir.is_dir():
                return run_dir
        return None

    def inside(self, relative: str) -> Path | None:
        """`relative` resolved under OUT, or None when it leads out of it."""
        target = (self.root / unquote(relative).lstrip("/")).resolve()
        return target if target == self.root or target.is_relative_to(self.root) else None

    # -- pages
    def page(self, page: str) -> str:
        script = REFRESH_SCRIPT % {
            "page": json.dumps(page),
            "version": json.dumps(self.version(page)),
            "poll": POLL_MS,
        }
        run_dir = self.run_dir_of(page)
        if run_dir is not None:
            return trajectory_html(
                run_dir, script=script, report_link="/" if self.is_suite else None
            )
        return self.report(script)

    def report(self, script: str) -> str:
        rows = ResultsFile(self.root / "results.jsonl").latest()
        summary = summaries.summarize(rows)
        stored = self.root / "summary.json"
        if stored.exists():
            try:
                kept = json.loads(stored.read_text(encoding="utf-8"))
                summary.update({k: kept[k] for k in ("model", "preset", "control") if k in kept})
            except (OSError, ValueError):
                pass
        if rows and "model" not in summary:
            summary.update(model=rows[-1].get("model"), preset=rows[-1].get("preset"))
        finished = {str(r.get("run_dir")) for r in rows}
        runs = sorted((self.root / "runs").glob("*")) if (self.root / "runs").is_dir() else []
        running = [r for r in runs if f"runs/{r.name}" not in finished and r.is_dir()]
        note = ""
        if running:
            links = ", ".join(
                f'<a href="/runs/{esc(r.name)}/trajectory.html">{esc(r.name)}</a>'
                for r in running[:20]
            )
            note = (
                f'<p class="warn">{len(rows)} finished, {len(running)} under way or interrupted: '
                f"{links}</p>"
            )
        return report_html(rows, summary, script=script, note=note)


def serve(out_dir: str | Path, host: str = "127.0.0.1", port: int = 7575) -> ThreadingHTTPServer:
    """A started server (in a daemon thread) for OUT; `server.server_address` says where."""
    if not is_loopback(host):
        raise StateActError(
            f"stateact view binds to a loopback address only (127.0.0.1, ::1), not {host}: the "
            "pages hold task data and model output; forward the port with ssh to view remotely."
        )
    view = View(out_dir)
    handler = type("ViewHandler", (_Handler,), {"view": view})
    try:
        server = ThreadingHTTPServer((host, port), handler)
    except OSError as exc:
        raise StateActError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; pick another --port "
            "(0 picks a free one)."
        ) from None
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True, name="stateact-view").start()
    return server


class _Handler(BaseHTTPRequestHandler):
    view: View

    def log_message(self, format, *args) -> None:  # noqa: A002 -- the base class's name
        pass  # quiet: the command prints where to look, not every request

    def do_GET(self) -> None:  # noqa: N802 -- http.server's name
        url = urlsplit(self.path)
        try:
            if url.path == "/favicon.ico":
                self._send(204, b"", "image/x-icon")
            elif url.path == "/_version":
                page = (parse_qs(url.query).get("page") or ["/"])[0]
                self._send(
                    200, json.dumps({"version": self.view.version(page)}), "application/json"
                )
            elif url.path in ("/", "/index.html", "/report.html") or url.path.endswith(
                "/trajectory.html"
            ):
                if url.path.endswith("/trajectory.html") and self.view.run_dir_of(url.path) is None:
                    self._send(404, "no such run", "text/plain")
                else:
                    self._send(200, self.view.page(url.path), "text/html; charset=utf-8")
            else:
                self._file(url.path)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the browser went away

    def _file(self, path: str) -> None:
        target = self.view.inside(path)
        if target is None or not target.is_file():
            self._send(404, "not found", "text/plain")
            return
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        self._send(200, target.read_bytes(), kind)

    def _send(self, status: int, body: str | bytes, kind: str) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.send_response(HTTPStatus(status))
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(data)
