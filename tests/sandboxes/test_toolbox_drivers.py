"""The drivers as toolbox methods: isolated from agent-written files, bounded in time, restartable.

The sandbox tests use the base image: `desktop.act` with only `sleep` commands and no screenshot
needs no X server, so the driver process itself is what is tested.
"""

from __future__ import annotations

import importlib.util
import threading
import time
from pathlib import Path

import pytest

from harness.kernel.core import ToolError

DESKTOP_DRIVER = Path(__file__).resolve().parents[2] / "sandboxes/toolbox/drivers/desktop.py"
STEERED = "/tmp/steered"
PLANT = f"open({STEERED!r}, 'a').write(__name__ + '\\n')\n"


def _sleep(sandbox, seconds: float, timeout: float = 30.0) -> dict:
    commands = [["sleep", str(seconds)]]
    return sandbox.call(
        "desktop.act", commands=commands, width=8, height=8, settle_s=None, timeout=timeout
    )


def test_the_desktop_environment_file_gives_only_a_display_and_a_bus_address(tmp_path):
    """The file is in /tmp, the agent's to write: only a display name and a bus address of the
    expected shape come from it (drivers/desktop_env.py, read by the driver and the toolbox)."""
    spec = importlib.util.spec_from_file_location(
        "desktop_env_under_test", DESKTOP_DRIVER.parent / "desktop_env.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    env_file = tmp_path / "desktop.env"
    env_file.write_text(
        "export DISPLAY=:7\n"
        "export DBUS_SESSION_BUS_ADDRESS='unix:path=/tmp/dbus-x,guid=ab12'\n"
        "export LD_PRELOAD=/home/user/evil.so\n"
        "export PATH=/home/user/bin\n"
        "PYTHONPATH=/home/user\n"
    )
    assert module.desktop_env(str(env_file)) == {
        "DISPLAY": ":7",
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/tmp/dbus-x,guid=ab12",
    }
    env_file.write_text("export DISPLAY=':1; touch /tmp/x'\n")
    with pytest.raises(module.NoDesktop, match="names no display"):
        module.desktop_env(str(env_file))
    with pytest.raises(module.NoDesktop, match="not running"):
        module.desktop_env(str(tmp_path / "absent.env"))


@pytest.mark.docker
def test_files_the_agent_plants_do_not_steer_the_driver(base_sandbox):
    user_site = base_sandbox.call(
        "bash.run", command="python3 -c 'import site; print(site.getusersitepackages())'"
    )["output"].strip()
    plants = {
        f"{user_site}/PIL/__init__.py": PLANT + "raise ImportError('planted')\n",
        f"{user_site}/usercustomize.py": PLANT,
        f"{user_site}/sitecustomize.py": PLANT,
        "/home/user/PIL/__init__.py": PLANT + "raise ImportError('planted')\n",
        "/tmp/PIL/__init__.py": PLANT + "raise ImportError('planted')\n",
    }
    for path, text in plants.items():
        base_sandbox.call("editor.run", command="create", path=path, file_text=text)
    # The plants work on the agent's own Python ...
    steered = base_sandbox.call(
        "bash.run", command="python3 -c 'import PIL' 2>&1; cat /tmp/steered"
    )
    assert "planted" in steered["output"]
    base_sandbox.call("bash.run", command=f"rm -f {STEERED}")
    # ... but not on the driver, which runs isolated from the toolbox's root-owned folder.
    assert _sleep(base_sandbox, 0) == {}
    after = base_sandbox.call("bash.run", command=f"cat {STEERED} 2>&1")["output"]
    assert "No such file" in after
    base_sandbox.call("bash.run", command=f"rm -rf {user_site} /home/user/PIL /tmp/PIL")


@pytest.mark.docker
def test_a_call_over_its_timeout_is_interrupted_and_the_driver_goes_on(base_sandbox):
    began = time.monotonic()
    with pytest.raises(ToolError, match="did not finish act within 1 s"):
        _sleep(base_sandbox, 20, timeout=1)
    assert time.monotonic() - began < 8
    assert _sleep(base_sandbox, 0) == {}


@pytest.mark.docker
def test_a_driver_that_dies_is_reported_and_replaced(base_sandbox):
    assert _sleep(base_sandbox, 0) == {}  # the driver is running
    outcome = {}

    def long_call():
        try:
            outcome["result"] = _sleep(base_sandbox, 20)
        except ToolError as exc:
            outcome["error"] = str(exc)

    caller = threading.Thread(target=long_call)
    caller.start()
    time.sleep(1.0)
    find_and_kill = (
        "import os, signal\n"
        "for pid in filter(str.isdigit, os.listdir('/proc')):\n"
        "    try: args = open(f'/proc/{pid}/cmdline', 'rb').read().split(b'\\0')\n"
        "    except OSError: continue\n"
        "    if any(a.endswith(b'drivers/desktop.py') for a in args): os.kill(int(pid), 9)\n"
    )
    code, output = base_sandbox.exec(["python3", "-c", find_and_kill])
    assert code == 0, output
    caller.join(30)
    assert "exited (code -9) during act" in outcome.get("error", ""), outcome
    assert _sleep(base_sandbox, 0) == {}  # a fresh driver on the next call


@pytest.mark.docker
def test_bad_driver_calls_are_clear_errors(base_sandbox):
    with pytest.raises(ToolError, match="missing a required argument: 'commands'"):
        base_sandbox.call("desktop.act", width=8, height=8)
    with pytest.raises(ToolError, match="unexpected keyword argument 'bogus'"):
        base_sandbox.call("desktop.cursor", bogus=1)
    with pytest.raises(ToolError, match="list of argument lists"):
        base_sandbox.call("desktop.act", commands="xdotool key a", width=8, height=8)
    with pytest.raises(ToolError, match="unknown method 'desktop.nope'"):
        base_sandbox.call("desktop.nope")
    with pytest.raises(ToolError, match="desktop is not running"):
        base_sandbox.call("desktop.cursor")
