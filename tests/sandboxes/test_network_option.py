"""`--network`: off by default; on, a docker sandbox shares the host's network (the only mode an
engine with --bridge=none offers), and sandboxes in that mode are never run side by side."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading

import pytest

from harness.apps.suite import SuiteRun
from harness.cli import build_parser
from harness.cli.run import build_config
from harness.run.config import RunConfig
from sandboxes import SandboxConfig, open_sandbox
from tests.conftest import REPO, require_image

FETCH = (
    "import sys, urllib.request\n"
    "try:\n"
    "    print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())\n"
    "except OSError as exc:\n"
    "    print('unreachable', exc)\n"
)


def parsed(*argv: str):
    return build_parser(argv[0]).parse_args(list(argv))


def test_the_network_is_off_unless_asked_for():
    config = build_config(parsed("run", "t.json", "--model", "script/x"))
    assert config.sandbox.network is False
    config = build_config(parsed("suite", "t.json", "--model", "script/x", "--network"))
    assert config.sandbox.network is True and config.sandbox.network_mode == "host"
    argv = ("batch", "f.txt", "--instruction", "do it", "--out", "o", "--model", "script/x")
    config = build_config(parsed(*argv, "--network", "--network-mode", "tasks-net"))
    assert config.sandbox.network and config.sandbox.network_mode == "tasks-net"


def test_host_mode_refuses_to_run_tasks_side_by_side(tmp_path):
    task = tmp_path / "t.json"
    task.write_text('{"id": "t", "instruction": "x"}')
    config = RunConfig(model="script/x")
    config.sandbox.network = True
    with pytest.raises(Exception, match="one task at a time"):
        SuiteRun([task], config, tmp_path / "out", 2, False, None, None)
    config.sandbox.network_mode = "tasks-net"
    SuiteRun([task], config, tmp_path / "out", 2, False, None, None)  # a bridge may run several
    config.sandbox.network = False
    SuiteRun([task], config, tmp_path / "out", 2, False, None, None)


def test_cli_says_so_in_one_sentence(tmp_path):
    task = tmp_path / "t.json"
    task.write_text('{"id": "t", "instruction": "x"}')
    argv = ["suite", str(task), "--model", "script/oracle", "--network", "--parallel", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", *argv, "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 2 and "one task at a time" in done.stderr
    assert "Traceback" not in done.stderr


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 -- the standard library's name
        body = b"hello from the host"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.docker
def test_a_docker_sandbox_reaches_the_host_only_with_network():
    require_image("base")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        for network, expected in ((True, "hello from the host"), (False, "unreachable")):
            config = SandboxConfig(image="base", memory_mb=512, network=network)
            with open_sandbox(config) as sandbox:
                code, output = sandbox.exec(["python3", "-c", FETCH, url], timeout=30)
            assert code == 0 and expected in output, (network, output)
    finally:
        server.shutdown()
