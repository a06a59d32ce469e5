"""OSWorld 2.0's services (the mock websites, GitLab) as StateAct starts them for a suite: a tiny
service checkout written here (a Dockerfile FROM the local base image serving a file with Python's
http.server; nothing is pulled) is built, started on a private network under its host name,
health-checked from inside that network, reached from a real sandbox on it, and removed after;
after a crash the reaper removes what is left; a bad checkout is one sentence."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO, require_image, stateact
from tests.service_helpers import (
    STACK_SERVICES,
    compose_stack,
    managed,
    remove_built_images,
)

STANDIN = Path(__file__).parents[2] / "osworld2_standin"
MARKER = "mailhub is up"
HOST = "mailhub.osworld2.test"
TEST_SERVICES = ("mailhub", "silent", "dying", "site")


def service_checkout(folder: Path, command: str | None = None) -> Path:
    """A checkout whose Dockerfile builds on the local base image and serves `hello.txt`."""
    from sandboxes.images.build import image_ref

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hello.txt").write_text(MARKER + "\n")
    serve = command or 'CMD ["python3", "-m", "http.server", "8000", "--directory", "/srv"]'
    (folder / "Dockerfile").write_text(
        f"FROM {image_ref('base')}\nCOPY hello.txt /srv/hello.txt\nUSER nobody\n{serve}\n"
    )
    return folder


@pytest.fixture(autouse=True)
def built_images_removed():
    """The images the tests build (kept by design for a user's next suite) are removed after."""
    yield
    remove_built_images((*TEST_SERVICES, *STACK_SERVICES))


def services_file(tmp_path: Path, **extra) -> Path:
    service_checkout(tmp_path / "mailhub")
    path = tmp_path / "services.json"
    entry = {"name": "mailhub", "context": "mailhub", "hosts": ["mailhub"], "port": 8000}
    entry["health_path"] = "/hello.txt"
    path.write_text(json.dumps({"services": [{**entry, **extra}]}))
    return path


def _config(**extra):
    from harness.apps.run_options import RunOptions, config_from_options

    options = RunOptions(model="script/x", osworld2=str(STANDIN), **{"image": "base", **extra})
    return config_from_options(options)


@pytest.mark.docker
def test_a_service_is_built_started_reached_by_its_host_name_and_removed(tmp_path):
    require_image("base")
    from harness.apps.osworld2_services import osworld2_services
    from sandboxes import open_sandbox

    limits = {"memory_mb": 300, "cpus": 0.5, "pids": 128}
    config = _config(osworld2_services=str(services_file(tmp_path, limits=limits)))
    assert config.sandbox.network is False
    with osworld2_services(config, health_timeout_s=120) as started:
        network = started.sandbox.network_mode
        assert started.sandbox.network and network.startswith("stateact-services-")
        assert started.osworld2.host_suffix == "osworld2.test"
        assert started.osworld2.environment()["WEBSITE_HOST_SUFFIX"] == "osworld2.test"
        containers, networks = managed(network)
        assert sorted(containers) == [f"{network}-mailhub", f"{network}-probe"]
        assert networks == [network]
        from sandboxes.docker_backend import docker_client

        host = docker_client().containers.get(f"{network}-mailhub").attrs["HostConfig"]
        assert (host["Memory"], host["NanoCpus"], host["PidsLimit"]) == (300 << 20, 5 * 10**8, 128)
        assert started.osworld2.services_proxy.startswith("http://127.0.0.1:")
        with open_sandbox(started.sandbox) as sandbox:
            code, output = sandbox.exec(
                [
                    "python3",
                    "-c",
                    "import urllib.request, sys; "
                    "print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())",
                    f"http://{HOST}:8000/hello.txt",
                ]
            )
        assert (code, output.strip()) == (0, MARKER)
    assert config.sandbox.network is False  # the caller's config is left as it was
    assert managed(network) == ([], [])


@pytest.mark.docker
def test_a_service_that_never_answers_or_stops_is_one_sentence_and_leaves_nothing(tmp_path):
    require_image("base")
    from harness.kernel.core import StateActError
    from sandboxes.images.build import image_ref
    from sandboxes.services import ServiceSpec, ServiceStack

    silent = service_checkout(tmp_path / "silent", 'CMD ["sleep", "600"]')
    dying = service_checkout(tmp_path / "dying", 'CMD ["sh", "-c", "echo no config; exit 3"]')
    cases = [
        (silent, f"the service silent did not answer http://{HOST}:8000/ within 4 s."),
        (dying, "the service dying stopped before it answered"),
    ]
    for checkout, sentence in cases:
        spec = ServiceSpec(name=checkout.name, context=checkout, hosts=[HOST], port=8000)
        stack = ServiceStack([spec], image_ref("base"), health_timeout_s=4)
        with pytest.raises(StateActError) as caught:
            stack.start()
        assert str(caught.value).startswith(sentence), caught.value
        assert "\n" not in str(caught.value)
        assert managed(stack.network) == ([], [])
    assert "exit 3: no config" in str(caught.value)


@pytest.mark.docker
def test_a_crashed_suites_services_are_reaped(tmp_path):
    """Killed with SIGKILL (no cleanup ran): the next StateAct process's reaper removes the
    service containers, the probe and the network, by their owner label."""
    require_image("base")
    from sandboxes.docker_backend import docker_client, reap_orphans

    script = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from sandboxes.images.build import image_ref
        from sandboxes.services import ServiceSpec, ServiceStack
        spec = ServiceSpec(name="site", context=Path({str(service_checkout(tmp_path / "site"))!r}),
                           hosts=["site.osworld2.test"], port=8000, health_path="/hello.txt")
        stack = ServiceStack([spec], image_ref("base"), health_timeout_s=120).start()
        print(stack.network, flush=True)
        time.sleep(600)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=REPO
    )
    try:
        network = child.stdout.readline().strip()
        assert network.startswith("stateact-services-"), network
        assert len(managed(network)[0]) == 2
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    # Another StateAct process on this machine may reap them first: what counts is that they go.
    reap_orphans(docker_client())
    assert managed(network) == ([], [])


def test_bad_service_inputs_are_one_sentence(tmp_path):
    args = ["suite", "--dry-run", "--osworld2", str(STANDIN)]
    args += ["--osworld2-data", str(STANDIN / "tasks"), "--judge-model", "openai/j"]
    missing = tmp_path / "no-such-checkout"
    done = stateact(*args, "--osworld2-websites", str(missing), env={"WEBSITE_HOST_SUFFIX": ""})
    assert done.returncode == 0, done.stderr
    reasons = json.loads(done.stdout.splitlines()[0])["reasons"]
    assert reasons == [
        f"OSWorld 2.0: the checkout {missing} of the service websites is not a folder"
    ]
    (tmp_path / "empty").mkdir()
    done = stateact(*args, "--osworld2-gitlab", str(tmp_path / "empty"))
    reasons = json.loads(done.stdout.splitlines()[0])["reasons"]
    assert reasons == [
        f"OSWorld 2.0: the checkout {tmp_path / 'empty'} of the service gitlab has no Dockerfile"
    ]
    # a good checkout is no blocker, WEBSITE_HOST_SUFFIX unset or not
    done = stateact(*args, "--osworld2-services", str(services_file(tmp_path)))
    assert all(json.loads(line)["runnable"] for line in done.stdout.splitlines()), done.stdout
    bad = tmp_path / "bad.json"
    bad.write_text('{"services": [{"name": "Web", "image": "x"}]}')
    done = stateact(*args, "--osworld2-services", str(bad))
    reasons = json.loads(done.stdout.splitlines()[0])["reasons"]
    assert reasons == [
        "OSWorld 2.0: a service entry is not valid (the service name 'Web' must be lowercase "
        "letters and digits)"
    ]
    # a run starts nothing with a missing checkout: one sentence, exit 2
    script = tmp_path / "agent.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "finish", "input": {"summary": "-"}}]}]))
    run = stateact(
        "run",
        str(STANDIN / "tasks" / "task_multiphase.py"),
        "--osworld2",
        str(STANDIN),
        "--osworld2-websites",
        str(missing),
        "--model",
        f"script/{script}",
        "--out",
        str(tmp_path / "out"),
    )
    assert run.returncode == 2, run.stderr
    assert f"the checkout {missing} of the service websites is not a folder." in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_a_suite_starts_its_services_and_its_task_reaches_them_by_name(tmp_path):
    """`run_suite` with a services file: the stand-in task's URL is built by the benchmark's
    process from WEBSITE_HOST_SUFFIX, the agent's sandbox fetches it from the service, the
    stand-in scores the saved page; the services are gone after the suite."""
    require_image("desktop")
    from harness.apps.suite import run_suite
    from harness.models.scripted import ScriptedModel
    from tests.harness.apps.test_osworld2_run import FINISH, LOOK, bash

    def save_the_page(system, messages, tools):
        url = re.search(r"http://mailhub\.[a-z0-9.]+:8000/hello\.txt", json.dumps(messages))
        fetch = "import sys, urllib.request as u; print(u.urlopen(sys.argv[1]).read().decode())"
        return bash(f"python3 -c '{fetch}' {url.group(0) if url else 'none'} > ~/site.txt")

    config = _config(
        osworld2_services=str(services_file(tmp_path)),
        osworld2_host_suffix="suite.test",
        preset="no-verify",
        image="desktop",
    )
    config.sandbox.memory_mb = 2048
    summary = run_suite(
        [str(STANDIN / "tasks" / "task_website.py")],
        config,
        tmp_path / "suite",
        model_factory=lambda task: ScriptedModel([save_the_page, *LOOK, FINISH]),
    )
    (row,) = [json.loads(line) for line in (tmp_path / "suite" / "results.jsonl").open()]
    assert (row["status"], row["score"]) == ("completed", 1.0), row["error"]
    assert summary["osworld2"]["binary_accuracy"] == 1.0
    assert row["options"]["osworld2_services"] is True
    run_config = json.loads(
        (tmp_path / "suite" / "runs" / "task_website" / "config.json").read_text()
    )
    network = run_config["sandbox"]["network_mode"]
    assert network.startswith("stateact-services-") and run_config["sandbox"]["network"]
    assert run_config["osworld2"]["host_suffix"] == "suite.test"
    assert managed(network) == ([], [])


def test_a_compose_stack_that_asks_for_too_much_is_one_sentence(tmp_path):
    """`--osworld2-websites` on a compose stack: a key StateAct does not carry out is the dry
    run's blocker and the run's one sentence (exit 2, no traceback); the stack as written is no
    blocker."""
    stack = tmp_path / "OSWorld-web"
    compose_stack(stack)
    args = ["suite", "--dry-run", "--osworld2", str(STANDIN)]
    args += ["--osworld2-data", str(STANDIN / "tasks"), "--judge-model", "openai/j"]
    done = stateact(*args, "--osworld2-websites", str(stack))
    assert done.returncode == 0, done.stderr
    assert all(json.loads(line)["runnable"] for line in done.stdout.splitlines()), done.stdout
    site = stack / "news_web" / "web-compose.yml"
    site.write_text(site.read_text().replace("    networks: [web]\n", "    privileged: true\n"))
    sentence = (
        f"{site}: the key 'privileged' of the service news_web is not supported: StateAct "
        "starts no privileged container"
    )
    done = stateact(*args, "--osworld2-websites", str(stack))
    assert json.loads(done.stdout.splitlines()[0])["reasons"] == [f"OSWorld 2.0: {sentence}"]
    script = tmp_path / "agent.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "finish", "input": {"summary": "-"}}]}]))
    run = stateact(
        "run",
        str(STANDIN / "tasks" / "task_site_state.py"),
        "--osworld2",
        str(STANDIN),
        "--osworld2-websites",
        str(stack),
        "--model",
        f"script/{script}",
        "--out",
        str(tmp_path / "out"),
    )
    assert run.returncode == 2, run.stderr
    assert f"{sentence}." in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_the_benchmarks_process_gets_the_services_proxy_and_keeps_the_rest_direct(monkeypatch):
    from tasks.osworld2.bridge import Osworld2Config

    monkeypatch.setenv("NO_PROXY", "mirror.internal")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    config = Osworld2Config(checkout=STANDIN, judge_model="openai/j", host_suffix="t.test")
    config.services_proxy = "http://127.0.0.1:4321"
    env = config.environment()
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        assert env[name] == "http://127.0.0.1:4321"
    # the guest server (127.0.0.1), the judge's API and the user's own exceptions stay direct
    assert (
        env["NO_PROXY"] == env["no_proxy"] == "127.0.0.1,localhost,api.openai.com,mirror.internal"
    )
    without = Osworld2Config(checkout=STANDIN).environment()
    assert without.get("HTTP_PROXY") == os.environ.get("HTTP_PROXY")  # untouched without services


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_a_compose_stack_serves_a_suite_and_the_benchmark_reads_its_state_through_the_proxy(
    tmp_path,
):
    """OSWorld-web's form end to end: `--osworld2-websites` on a compose stack; the stand-in's
    setup seeds the shop's cart from the benchmark's own process (through the services proxy,
    HTTPS tried first and refused at once), the agent reads it and pays from its sandbox (through
    the front proxy), and the benchmark's evaluation reads the paid cart back through the proxy."""
    require_image("desktop")
    from harness.apps.suite import run_suite
    from harness.models.scripted import ScriptedModel
    from tests.harness.apps.test_osworld2_run import FINISH, LOOK, bash

    def pay(system, messages, tools):
        found = re.search(
            r"http://shop\.[a-z0-9.]+/api/state\?cookie=osworld2", json.dumps(messages)
        )
        script = (
            "import sys, pathlib, urllib.request as u; url = sys.argv[1]; "
            "pathlib.Path.home().joinpath('cart.txt').write_bytes(u.urlopen(url).read()); "
            "u.urlopen(url, data=b'paid').read()"
        )
        return bash(f'python3 -c "{script}" {found.group(0) if found else "none"}')

    config = _config(
        osworld2_websites=str(compose_stack(tmp_path / "OSWorld-web").parent),
        osworld2_host_suffix="suite.test",
        preset="no-verify",
        image="desktop",
    )
    config.sandbox.memory_mb = 2048
    summary = run_suite(
        [str(STANDIN / "tasks" / "task_site_state.py")],
        config,
        tmp_path / "suite",
        model_factory=lambda task: ScriptedModel([pay, *LOOK, FINISH]),
    )
    (row,) = [json.loads(line) for line in (tmp_path / "suite" / "results.jsonl").open()]
    assert (row["status"], row["score"]) == ("completed", 1.0), row["error"]
    assert summary["osworld2"]["binary_accuracy"] == 1.0
    assert row["options"]["osworld2_services_proxy"] is True
    run_dir = tmp_path / "suite" / "runs" / "task_site_state"
    run_config = json.loads((run_dir / "config.json").read_text())
    proxy = run_config["osworld2"]["services_proxy"]
    assert proxy.startswith("http://127.0.0.1:")
    probes = [
        json.loads(line.split("website probes: ", 1)[1])
        for line in (run_dir / "osworld2-bridge.log").read_text().splitlines()
        if line.startswith("website probes: ")
    ]
    assert probes, "the stand-in logged no website probe"
    for url, seconds, outcome in probes[-1]:
        if url.startswith("https://"):
            assert (outcome, seconds < 5) == ("URLError", True), (url, seconds, outcome)
        else:
            assert (url, outcome) == ("http://shop.suite.test", "answered")
    assert managed(run_config["sandbox"]["network_mode"]) == ([], [])
    port = int(proxy.rsplit(":", 1)[1])
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5)


def test_the_options_give_each_service_its_limits_and_build_network(tmp_path):
    """GitLab gets several GB, a compose site its file's limits or the default; the checkouts'
    builds run with --osworld2-build-network unless the compose file names a network."""
    from tasks.osworld2.services import GITLAB_LIMITS, service_plan

    compose_stack(tmp_path / "OSWorld-web")
    (tmp_path / "gitlab").mkdir()
    config = _config(
        osworld2_websites=str(tmp_path / "OSWorld-web"),
        osworld2_gitlab=str(tmp_path / "gitlab"),
        osworld2_services=str(services_file(tmp_path, limits={"memory_mb": 300, "cpus": 0.5})),
        osworld2_build_network="host",
    ).osworld2
    specs = {spec.name: spec for spec in service_plan(config).services}
    assert specs["gitlab"].limits == GITLAB_LIMITS and GITLAB_LIMITS.memory_mb >= 4096
    assert specs["shop_backend"].limits.memory_mb == 300  # the compose file's mem_limit
    assert specs["news_web"].limits.memory_mb == 1024  # the default
    assert specs["mailhub"].limits.model_dump() == {"memory_mb": 300, "cpus": 0.5, "pids": 1024}
    networks = {name: spec.build_network for name, spec in specs.items()}
    assert networks == {
        **dict.fromkeys(STACK_SERVICES, "host"),
        "gitlab": "host",
        "mailhub": "none",
    }
    with pytest.raises(Exception, match="must be one of none, host"):
        _config(osworld2_build_network="bridge")
