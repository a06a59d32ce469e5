"""One OSWorld 2.0 task on one sandbox: the guest server, the bridge to the user's checkout, and
the task's phases, each set up by the benchmark and judged by it after the agent's part.

    episode = Osworld2Episode(config, task_file, run_dir)
    info = episode.open(sandbox)            # loads the task; info["phases"] are instructions
    episode.set_up(0)                       # the benchmark's setup of phase 0
    …the agent works on phase 0…
    verdict = episode.judge(0)              # the benchmark's evaluation, as an observer
    episode.close()
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from harness.kernel.core import StateActError
from tasks.osworld2.bridge import (
    ASK_TIMEOUT_S,
    EVALUATE_TIMEOUT_S,
    LOAD_TIMEOUT_S,
    SETUP_TIMEOUT_S,
    Bridge,
    Osworld2Config,
)
from tasks.osworld2.forward import PortForward
from tasks.osworld2.guest import GuestMachine, GuestServer
from tasks.osworld2.scoring import PhaseVerdict, phase_verdict
from tasks.schema import Task
from tasks.setup import SetupRunner, default_placeholders, sandbox_screen

CDP_PORT = 9222
"""Chrome's DevTools port in OSWorld's guest (the host's controllers connect to it over CDP)."""
CHROME_PORT = 1337
"""Where OSWorld's tasks start Chrome's debugging (`--remote-debugging-port=1337`, then a `socat`
from 9222): once the agent has stopped, the task's socat is ended with the agent's processes (only
known applications are kept), so the forward reaches Chrome itself there."""
VLC_PORT = 8080
"""VLC's HTTP interface in OSWorld's guest (its getters read the player's state from it)."""
OSWORLD2_SCREEN = (1920, 1080)
"""OSWorld 2.0's guest screen (its observation PNGs are this size), the sandboxes' default."""


def osworld2_task(task_file: Path, instruction: str, related_apps: list[str]) -> Task:
    """A StateAct `Task` standing for a task module (its id is the module's name)."""
    return Task(
        id=task_file.stem,
        instruction=instruction,
        related_apps=related_apps,
        base_dir=task_file.parent,
        source="osworld2",
    )


class Osworld2Episode:
    """The guest server and the bridge for one task; a `UserChannel` for `ask_user`."""

    def __init__(self, config: Osworld2Config, task_file: Path, run_dir: Path):
        self.config = config
        self.task_file = Path(task_file)
        self.run_dir = Path(run_dir)
        self.screen = OSWORLD2_SCREEN
        self.bridge = Bridge(config, self.run_dir / "osworld2-bridge.log")
        self.server: GuestServer | None = None
        self.machine: GuestMachine | None = None
        self.info: dict = {}
        self._work = tempfile.TemporaryDirectory(prefix="stateact-osworld2-")
        self._stack = contextlib.ExitStack()
        """The guest server and the port forwards, closed with the episode."""

    @property
    def phases(self) -> list[str]:
        return list(self.info.get("phases") or [self.info.get("instruction", "")])

    @property
    def has_user(self) -> bool:
        return bool(self.info.get("has_user"))

    def open(self, sandbox) -> dict:
        """Serve the sandbox to the benchmark (its guest routes, Chrome's DevTools and VLC's HTTP
        ports on the host's loopback) and load the task with its own loader."""
        self.screen = sandbox_screen(sandbox)
        placeholder = osworld2_task(self.task_file, "(loading)", [])
        runner = SetupRunner(
            sandbox,
            placeholder,
            self.config.data,
            default_placeholders(*self.screen),
            before_agent=True,
        )
        self.machine = GuestMachine(runner, self.screen, Path(self._work.name))
        self.server = self._stack.enter_context(GuestServer(self.machine))
        cdp = self._stack.enter_context(PortForward(sandbox, CDP_PORT, (CHROME_PORT,)))
        vlc = self._stack.enter_context(PortForward(sandbox, VLC_PORT))
        self.bridge.start()
        self.info = self.bridge.request(
            "load",
            LOAD_TIMEOUT_S,
            task_file=str(self.task_file),
            endpoint=self.server.endpoint(chromium_port=cdp.port, vlc_port=vlc.port),
            screen=list(self.screen),
            cache_dir=str(self.run_dir / "osworld2-cache"),
        )
        if not self.phases or not all(isinstance(p, str) and p for p in self.phases):
            raise StateActError(f"{self.task_file.name} gives no instruction for a phase")
        return self.info

    def task(self, phase: int = 0) -> Task:
        """The StateAct task an agent works on in `phase`."""
        return osworld2_task(self.task_file, self.phases[phase], self.info.get("related_apps", []))

    def set_up(self, phase: int) -> None:
        """The benchmark's setup of `phase`, as the task's user (its sudo steps as root)."""
        self.machine.phase = "setup"
        self.machine.runner.before_agent = phase == 0
        self.bridge.request("setup", SETUP_TIMEOUT_S, phase=phase)

    def judge(self, phase: int) -> PhaseVerdict:
        """The benchmark's evaluation of `phase`; every command it runs is an observer's."""
        self.machine.phase = "judging"
        return phase_verdict(
            phase, self.bridge.request("evaluate", EVALUATE_TIMEOUT_S, phase=phase)
        )

    def ask(self, question: str) -> str | None:
        """The simulated user's answer (None where the task has none)."""
        if not self.has_user:
            return None
        return self.bridge.request("ask", ASK_TIMEOUT_S, question=question).get("answer")

    def close(self) -> None:
        self.bridge.close()
        self._stack.close()
        self.server = None
        self._work.cleanup()

    def __enter__(self) -> Osworld2Episode:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
