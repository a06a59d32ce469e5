"""OSWorld 2.0 through StateAct's guest-server contract, on a real desktop sandbox.

The benchmark is played by a stand-in checkout written for these tests (`tests/osworld2_standin/`,
following the documented task-module interface); its controllers speak HTTP to StateAct's
`GuestServer`, which answers from the sandbox. Judges and the simulated user are the fake
OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import require_image
from tests.fakes import FakeOpenAIServer

STANDIN = Path(__file__).parents[2] / "osworld2_standin"
pytestmark = [pytest.mark.docker, pytest.mark.desktop, pytest.mark.slow]


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    require_image("desktop")
    from sandboxes import SandboxConfig, open_sandbox
    from tasks.osworld2.guest import GuestMachine, GuestServer
    from tasks.schema import Task
    from tasks.setup import SetupRunner, default_placeholders

    task = Task(id="osworld2-standin", instruction="stand-in")
    config = SandboxConfig(image="desktop", memory_mb=2048, display_size=(1280, 720))
    with open_sandbox(config) as sandbox:
        runner = SetupRunner(
            sandbox, task, None, default_placeholders(1280, 720), before_agent=True
        )
        guest = GuestMachine(runner, (1280, 720), tmp_path_factory.mktemp("guest"))
        with GuestServer(guest) as server:
            yield guest, server


def _post(server, route, body: bytes = b"", kind: str = "application/json"):
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}{route}", data=body, headers={"Content-Type": kind}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.status, response.read()


def _multipart(fields: dict[str, bytes]) -> tuple[bytes, str]:
    boundary = "stateact-boundary-7f3a"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{name}"\r\n'
        f"Content-Type: application/octet-stream\r\n\r\n".encode()
        + value
        + b"\r\n"
        for name, value in fields.items()
    ]
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), (
        f"multipart/form-data; boundary={boundary}"
    )


def _post_json(server, route, value: dict):
    status, data = _post(server, route, json.dumps(value).encode())
    return status, json.loads(data)


def test_execute_returns_stdout_stderr_and_code_apart(machine):
    guest, server = machine
    status, answer = _post_json(
        server, "/execute", {"command": "echo out; echo err >&2; exit 3", "shell": True}
    )
    assert status == 200
    assert answer == {"status": "success", "output": "out\n", "error": "err\n", "returncode": 3}
    _, listed = _post_json(server, "/execute", {"command": ["ls", "-d", "~/"]})
    assert listed["output"].strip() == "/home/user/"


def test_upload_then_file_round_trip_and_missing_file(machine):
    guest, server = machine
    payload = bytes(range(256)) * 40
    body, kind = _multipart({"file_path": b"~/inbox/data.bin", "file_data": payload})
    status, text = _post(server, "/setup/upload", body, kind)
    assert (status, text) == (200, f"File Uploaded: {len(payload)} bytes".encode())
    code, owner = guest.sandbox.exec(["stat", "-c", "%U", "/home/user/inbox/data.bin"])
    assert owner.strip() == "user"
    form = b"file_path=%2Fhome%2Fuser%2Finbox%2Fdata.bin"
    assert _post(server, "/file", form, "application/x-www-form-urlencoded") == (200, payload)
    with pytest.raises(urllib.error.HTTPError) as missing:
        _post(server, "/file", b"file_path=/nope", "application/x-www-form-urlencoded")
    assert missing.value.code == 404


def test_screen_routes(machine):
    import io

    from PIL import Image

    guest, server = machine
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/screenshot") as response:
        image = Image.open(io.BytesIO(response.read()))
    assert image.size == (1280, 720)
    assert _post_json(server, "/screen_size", {}) == (200, {"width": 1280, "height": 720})
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/platform") as response:
        assert response.read() == b"Linux"


def test_bad_requests_get_clear_errors(machine):
    guest, server = machine
    for route, body, code in [
        ("/execute", b"{not json", 400),
        ("/execute", b"[]", 400),
        ("/execute", b"{}", 400),
        ("/nowhere", b"", 404),
        ("/file", b"", 400),
    ]:
        with pytest.raises(urllib.error.HTTPError) as error:
            _post(server, route, body, "application/x-www-form-urlencoded")
        assert error.value.code == code, route
        assert "error" in json.loads(error.value.read())


def _bridge(tmp_path, judge: FakeOpenAIServer, **extra):
    from tasks.osworld2.bridge import Bridge, Osworld2Config

    config = Osworld2Config(
        checkout=STANDIN,
        data=STANDIN / "tasks",
        judge_model="openai/judge-small",
        base_url=judge.base_url,
        **extra,
    )
    return Bridge(config, tmp_path / "bridge.log")


def test_multiphase_task_oracle_scores_one_and_do_nothing_zero(machine, tmp_path, monkeypatch):
    from tasks.osworld2.scoring import phase_verdict, result_fields

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    guest, server = machine
    guest.sandbox.exec(["rm", "-f", "/home/user/report.txt"])
    with FakeOpenAIServer([{"text": "no"}, {"text": "yes"}]) as judge:
        with _bridge(tmp_path, judge) as bridge:
            task = bridge.request(
                "load",
                60,
                task_file=str(STANDIN / "tasks" / "task_multiphase.py"),
                endpoint=server.endpoint(),
                screen=[1280, 720],
            )
            assert task["phases"] == [
                "Write 'alpha' into ~/report.txt.",
                "Append 'beta' to ~/report.txt.",
            ]
            bridge.request("setup", 120, phase=0)
            assert guest.sandbox.exec(["cat", "/home/user/notes.txt"])[1] == "the word is alpha\n"
            assert guest.sandbox.exec(["test", "-f", "/home/user/phase-one-ready"])[0] == 0
            nothing = phase_verdict(0, bridge.request("evaluate", 120, phase=0))
            guest.sandbox.exec(["bash", "-c", "echo alpha > ~/report.txt"])
            done = phase_verdict(0, bridge.request("evaluate", 120, phase=0))
    assert nothing.score == 0.0 and done.score == 1.0
    assert [c["score"] for c in done.checkpoints] == [1.0, 1.0]
    assert done.judges[0]["answer"] == "yes" and not done.judge_errors
    assert judge.completion_requests()[0]["json"]["model"] == "judge-small"
    assert judge.completion_requests()[0]["headers"]["authorization"] == "Bearer sk-test"
    fields = result_fields([done])
    assert fields["success"] is True and fields["evaluation_error"] is None
    assert "sk-test" not in (tmp_path / "bridge.log").read_text()


def test_failed_judge_is_an_evaluation_error_not_a_silent_zero(machine, tmp_path, monkeypatch):
    from tasks.osworld2.scoring import phase_verdict, result_fields

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    guest, server = machine
    guest.sandbox.exec(["bash", "-c", "echo alpha > ~/report.txt"])
    with FakeOpenAIServer([{"status": 500, "message": "judge down"}]) as judge:
        with _bridge(tmp_path, judge) as bridge:
            bridge.request(
                "load",
                60,
                task_file=str(STANDIN / "tasks" / "task_multiphase.py"),
                endpoint=server.endpoint(),
            )
            bridge.request("setup", 120, phase=0)
            verdict = phase_verdict(0, bridge.request("evaluate", 120, phase=0))
    assert verdict.score == 0.75  # the stand-in, like upstream, scored the failed judge 0
    fields = result_fields([verdict])
    assert "judge call failed" in fields["evaluation_error"]
    assert "500" in fields["evaluation_error"]


def test_ask_user_reaches_the_simulated_user(machine, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    guest, server = machine
    with FakeOpenAIServer([{"text": "Teal, please."}]) as models:
        with _bridge(tmp_path, models, user_model="openai/user-sim") as bridge:
            task = bridge.request(
                "load",
                60,
                task_file=str(STANDIN / "tasks" / "task_ask_user.py"),
                endpoint=server.endpoint(),
            )
            assert task["has_user"] is True
            answer = bridge.request("ask", 60, question="What colour should I write?")
    assert answer == {"answer": "Teal, please."}
    request = models.completion_requests()[0]["json"]
    assert request["model"] == "user-sim"
    assert request["messages"][-1]["content"] == "What colour should I write?"


def test_bridge_errors_are_one_sentence(tmp_path):
    from harness.kernel.core import StateActError
    from tasks.osworld2.bridge import Bridge, Osworld2Config

    bridge = Bridge(Osworld2Config(checkout=tmp_path), tmp_path / "bridge.log")
    with bridge:
        with pytest.raises(StateActError, match="load failed: ModuleNotFoundError"):
            bridge.request("load", 30, task_file="x.py", endpoint="127.0.0.1:1")
        with pytest.raises(StateActError, match="unknown operation"):
            bridge.request("wrap_judges", 30)


def test_dry_run_names_every_missing_piece(tmp_path, monkeypatch):
    from tasks.osworld2.bridge import Osworld2Config
    from tasks.osworld2.scoring import blockers

    monkeypatch.delenv("WEBSITE_HOST_SUFFIX", raising=False)
    missing = blockers(None)
    assert [m.split(" ")[:3] for m in missing] == [
        ["no", "OSWorld-V2", "checkout"],
        ["no", "OSWorld", "2.0"],
        ["the", "mock", "websites"],
        ["no", "judge", "model"],
    ]
    empty = blockers(Osworld2Config(checkout=tmp_path, data=tmp_path))
    assert "is not an OSWorld-V2 checkout" in empty[0]
    assert "holds no task_*.py task modules" in empty[1]
    monkeypatch.setenv("WEBSITE_HOST_SUFFIX", "sites.test")
    ready = Osworld2Config(checkout=STANDIN, data=STANDIN / "tasks", judge_model="openai/j")
    assert blockers(ready) == []


def test_episode_runs_every_phase_through_the_benchmark(tmp_path, monkeypatch):
    """Both phases of the multiphase task: the benchmark's setup, an agent's work, its verdict."""
    require_image("desktop")
    from sandboxes import SandboxConfig, open_sandbox
    from tasks.osworld2.bridge import Osworld2Config
    from tasks.osworld2.episode import Osworld2Episode
    from tasks.osworld2.scoring import result_fields

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    task_file = STANDIN / "tasks" / "task_multiphase.py"
    with FakeOpenAIServer([{"text": "yes"}]) as judge:
        config = Osworld2Config(
            checkout=STANDIN,
            data=STANDIN / "tasks",
            judge_model="openai/j",
            base_url=judge.base_url,
        )
        with open_sandbox(SandboxConfig(image="desktop", memory_mb=2048)) as sandbox:
            with Osworld2Episode(config, task_file, tmp_path) as episode:
                episode.open(sandbox)
                assert episode.screen == (1920, 1080)  # the sandbox's, OSWorld 2.0's
                assert episode.task(1).instruction == "Append 'beta' to ~/report.txt."
                assert episode.ask("anyone?") is None  # this task has no simulated user
                episode.set_up(0)
                sandbox.exec(["bash", "-c", "echo alpha > ~/report.txt"])
                first = episode.judge(0)
                episode.set_up(1)
                assert sandbox.exec(["test", "-f", "/home/user/phase-two-ready"])[0] == 0
                unfinished = episode.judge(1)
                sandbox.exec(["bash", "-c", "echo beta >> ~/report.txt"])
                second = episode.judge(1)
    assert (first.score, unfinished.score, second.score) == (1.0, 0.0, 1.0)
    fields = result_fields([first, second])
    assert fields["score"] == 1.0 and [p["phase"] for p in fields["phase_results"]] == [0, 1]


def _background(sandbox, command: str) -> None:
    code, output = sandbox.exec(
        ["bash", "-c", f"setsid nohup {command} >/dev/null 2>&1 < /dev/null & sleep 1"]
    )
    assert code == 0, output


def test_guest_ports_are_forwarded_to_the_hosts_loopback(machine):
    """What the benchmark's host-side controllers connect to: Chrome's DevTools (a real Chromium
    here) and any HTTP port of the guest (VLC's), byte for byte."""
    import hashlib
    import socket
    import time

    from tasks.osworld2.forward import PortForward

    guest, server = machine
    sandbox = guest.sandbox
    sandbox.exec(["bash", "-c", "head -c 3000000 /dev/urandom > ~/blob.bin"])
    _background(sandbox, "python3 -m http.server 8080 --bind 127.0.0.1 --directory /home/user")
    _background(
        sandbox,
        "chromium --headless=new --no-sandbox --remote-debugging-port=9222 "
        "--user-data-dir=/tmp/cdp-profile about:blank",
    )
    with PortForward(sandbox, 8080) as vlc, PortForward(sandbox, 9222) as cdp:
        assert vlc.port != 8080 and cdp.port != 9222
        with urllib.request.urlopen(f"http://127.0.0.1:{vlc.port}/blob.bin", timeout=60) as got:
            body = got.read()
        assert len(body) == 3000000
        code, digest = sandbox.exec(["sha256sum", "/home/user/blob.bin"])
        assert hashlib.sha256(body).hexdigest() == digest.split()[0]
        for _ in range(30):  # Chromium takes a moment to open its port
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{cdp.port}/json/version", timeout=10
                ) as got:
                    version = json.loads(got.read())
                break
            except (urllib.error.URLError, ConnectionError, json.JSONDecodeError):
                time.sleep(1)
        else:
            pytest.fail("Chromium's DevTools never answered through the forward")
        assert "Browser" in version and version["webSocketDebuggerUrl"].startswith("ws://")
        with PortForward(sandbox, 9) as closed:  # nothing listens: the connection just ends
            with socket.create_connection(("127.0.0.1", closed.port), timeout=20) as conn:
                conn.settimeout(20)
                assert conn.recv(10) == b""
    sandbox.exec(["bash", "-c", "pkill -f http.server; pkill -f cdp-profile; rm -f ~/blob.bin"])


def test_recording_routes_make_an_mp4_of_the_screen(machine, tmp_path):
    import subprocess
    import time

    guest, server = machine
    assert _post(server, "/start_recording")[0] == 200
    with pytest.raises(urllib.error.HTTPError) as twice:
        _post(server, "/start_recording")
    assert twice.value.code == 400
    deadline = time.monotonic() + 60  # the first screenshot may wait for the desktop
    while guest.recorder.frames < 3 and time.monotonic() < deadline:
        time.sleep(0.5)
    status, video = _post(server, "/end_recording")
    assert status == 200 and video[4:8] == b"ftyp"
    (tmp_path / "recording.mp4").write_bytes(video)
    probe = subprocess.run(
        [
            "ffprobe",
            "-v",
            "error",
            "-show_entries",
            "stream=width,height,nb_frames",
            "-of",
            "json",
            str(tmp_path / "recording.mp4"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    (stream,) = json.loads(probe.stdout)["streams"]
    assert (stream["width"], stream["height"]) == (1280, 720)
    assert int(stream["nb_frames"]) >= 3
    with pytest.raises(urllib.error.HTTPError) as none:
        _post(server, "/end_recording")
    assert none.value.code == 400
