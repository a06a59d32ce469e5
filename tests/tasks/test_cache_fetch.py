"""`stateact cache fetch`: task files' URLs downloaded from a local server on 127.0.0.1 into
OSWorld's cache names, resumed, never half-written, confined to the cache folder."""

from __future__ import annotations

import hashlib
import http.server
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.kernel.core import StateActError
from tasks.cache import cache_name
from tasks.fetch import PARTIAL_DIR, Wanted, fetch_all, wanted_files
from tasks.support import dry_run_record
from tests.conftest import REPO

FILES = {
    "in put.xlsx": bytes(range(256)) * 400,
    "notes.txt": b"hello\n" * 1000,
    "gold.docx": hashlib.sha256(b"gold").digest() * 3000,
}


class FileServer(http.server.BaseHTTPRequestHandler):
    """Serves FILES (ranges honoured); `/cut/NAME` sends half of the file and hangs up."""

    requests: list[tuple[str, str | None]] = []

    def do_GET(self):  # noqa: N802 -- the standard library's name
        self.requests.append((self.path, self.headers.get("Range")))
        cut = self.path.startswith("/cut/")
        name = self.path.removeprefix("/cut/").lstrip("/").replace("%20", " ")
        if name not in FILES:
            self.send_error(404)
            return
        body, status = FILES[name], 200
        first = 0
        if self.headers.get("Range", "").startswith("bytes=") and not cut:
            first = int(self.headers["Range"][6:].split("-")[0])
            status = 206
        self.send_response(status)
        self.send_header("Content-Length", str(len(body) - first))
        self.end_headers()
        self.wfile.write(body[first : len(body) // 2] if cut else body[first:])

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FileServer)
    FileServer.requests = []
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_task(folder: Path, name: str, download: list[str], gold: str | None = None) -> Path:
    files = [{"url": url, "path": f"/home/user/{i}"} for i, url in enumerate(download)]
    evaluator = {"func": "exact_match"}
    if gold:
        evaluator = {
            "func": "compare_docx_files",
            "result": {"type": "vm_file", "path": "/home/user/out.docx", "dest": "out.docx"},
            "expected": {"type": "cloud_file", "path": gold, "dest": "gold.docx"},
        }
    data = {
        "id": name,
        "instruction": "x",
        "config": [{"type": "download", "parameters": {"files": files}}],
        "evaluator": evaluator,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def stateact(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


def test_fetch_fills_the_cache_the_dry_run_reads(tmp_path, server):
    tasks = tmp_path / "tasks"
    a = write_task(tasks, "a", [f"{server}/in%20put.xlsx", f"{server}/notes.txt"])
    b = write_task(tasks, "b", [f"{server}/notes.txt"], gold=f"{server}/gold.docx")
    cache = tmp_path / "cache"
    assert not dry_run_record(a, cache)["runnable"]
    done = stateact("cache", "fetch", str(tasks), "--cache", str(cache))
    assert done.returncode == 0, done.stderr
    assert "3 file(s) named by the tasks: 3 downloaded" in done.stderr
    assert (cache / cache_name(f"{server}/in%20put.xlsx")).read_bytes() == FILES["in put.xlsx"]
    assert (cache / cache_name(f"{server}/gold.docx")).read_bytes() == FILES["gold.docx"]
    assert dry_run_record(a, cache)["runnable"] and dry_run_record(b, cache)["runnable"]
    assert not list((cache / PARTIAL_DIR).iterdir())
    FileServer.requests.clear()
    again = stateact("cache", "fetch", str(tasks), "--cache", str(cache))
    assert again.returncode == 0 and "0 downloaded, 3 already in" in again.stderr
    assert FileServer.requests == []


def test_an_interrupted_download_leaves_no_file_and_resumes(tmp_path, server):
    cache = tmp_path / "cache"
    cut = f"{server}/cut/notes.txt"
    report = fetch_all([Wanted(cut, "t")], cache)
    assert cut in report.failed and not (cache / cache_name(cut)).exists()
    partial = cache / PARTIAL_DIR / cache_name(cut)
    assert partial.read_bytes() == FILES["notes.txt"][: len(FILES["notes.txt"]) // 2]
    # The same name from a server that honours ranges: only the rest is asked for.
    url = f"{server}/notes.txt"
    (cache / PARTIAL_DIR / cache_name(url)).write_bytes(partial.read_bytes())
    FileServer.requests.clear()
    report = fetch_all([Wanted(url, "t")], cache)
    assert report.fetched == [url]
    assert (cache / cache_name(url)).read_bytes() == FILES["notes.txt"]
    assert FileServer.requests == [("/notes.txt", f"bytes={len(FILES['notes.txt']) // 2}-")]


def test_offline_each_missing_file_is_named_in_one_sentence(tmp_path, server):
    dead = f"http://127.0.0.1:{closed_port()}"
    tasks = tmp_path / "tasks"
    write_task(tasks, "a", [f"{dead}/one.xlsx", f"{server}/notes.txt", f"{server}/absent.bin"])
    started = time.monotonic()
    done = stateact("cache", "fetch", str(tasks), "--cache", str(tmp_path / "cache"))
    assert time.monotonic() - started < 60
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("stateact: 2 file(s) could not be downloaded: ")
    assert f"{dead}/one.xlsx (" in last and f"{server}/absent.bin (Not Found)" in last
    assert "Traceback" not in done.stderr
    assert (tmp_path / "cache" / cache_name(f"{server}/notes.txt")).is_file()


def test_names_that_leave_the_cache_and_private_hosts_are_refused(tmp_path, server):
    cache = tmp_path / "deep" / "cache"
    escape = f"{server}/..%2F..%2Fescaped.txt"
    with pytest.raises(StateActError, match="outside the cache dir"):
        fetch_all([Wanted(f"{server}/notes.txt", "t"), Wanted(escape, "t")], cache)
    assert FileServer.requests == [] and not list(tmp_path.rglob("*escaped*"))
    tasks = tmp_path / "tasks"
    write_task(tasks, "a", [escape])
    done = stateact("cache", "fetch", str(tasks), "--cache", str(cache))
    assert done.returncode == 2 and "outside the cache dir" in done.stderr
    report = fetch_all([Wanted("http://10.1.2.3/x.bin", "t")], cache)
    assert "private address" in report.failed["http://10.1.2.3/x.bin"]
    not_folder = tmp_path / "file"
    not_folder.write_text("x")
    done = stateact("cache", "fetch", str(tasks), "--cache", str(not_folder))
    assert done.returncode == 2 and "is not a folder" in done.stderr


def test_wanted_files_are_listed_once_in_order(tmp_path, server):
    tasks = tmp_path / "tasks"
    write_task(tasks, "a", [f"{server}/notes.txt", f"{server}/gold.docx"])
    write_task(tasks, "b", [f"{server}/notes.txt"], gold=f"{server}/in%20put.xlsx")
    wanted = wanted_files(sorted(tasks.glob("*.json")))
    assert [(w.url.removeprefix(server), w.task_id) for w in wanted] == [
        ("/notes.txt", "a"),
        ("/gold.docx", "a"),
        ("/in%20put.xlsx", "b"),
    ]
