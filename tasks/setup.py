"""Run OSWorld setup (and postconfig) steps inside a sandbox, through the `Sandbox` protocol only.

GUI programs need the desktop: before the first GUI step the sandbox's `stateact-desktop start WxH`
(provided by the desktop image) starts the X server and window manager and writes
`/tmp/stateact-desktop.env`, which every command here sources. GUI programs start detached
(`setsid nohup ... &`) so that a step returns while the program keeps running.
"""

from __future__ import annotations

import logging
import posixpath
import re
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from harness.kernel.core import StateActError, ToolError
from sandboxes.base import OSWORLD_SCREEN, SANDBOX_HOME, SANDBOX_USER, Sandbox
from sandboxes.toolbox.observer import DESKTOP_ENV_FILE, SAFE_DESKTOP_ENV
from tasks.apps import launched_program
from tasks.cache import confined, resolve_source
from tasks.chrome_live import cdp_call
from tasks.schema import SetupStep, Task
from tasks.setup_windows import (
    VISIBLE_WINDOWS,
    new_window_script,
    opens_a_window,
    titled_window_script,
    window_activate_script,
    window_close_script,
)
from tasks.start_state import prepare_start_state
from tasks.webarena.start import start_webarena

log = logging.getLogger(__name__)

DESKTOP_ENV = DESKTOP_ENV_FILE
# Postconfig steps run after the agent, which can write that file: take only its checked values.
SOURCE_DESKTOP = SAFE_DESKTOP_ENV
STEP_TYPES = {
    "download",
    "open",
    "launch",
    "execute",
    "command",
    "sleep",
    "activate_window",
    "close_window",
    "chrome_open_tabs",
    "chrome_close_tabs",
    "update_browse_history",
    "login",
    "googledrive",
    "webarena_start",
}
GUI_STEPS = {"open", "launch", "activate_window", "close_window", "chrome_open_tabs"}
GUI_STEPS |= {"webarena_start"}
COMMAND_STEPS = {"execute", "command"}
USER_RUNTIME_DIR = "/run/user/1000"
"""The user's runtime folder on Ubuntu (uid 1000, as `user` here), where its session bus lives."""
USER_FOLDERS = (
    *("Desktop", "Documents", "Downloads", "Music"),
    *("Pictures", "Public", "Templates", "Videos"),
)
"""An Ubuntu desktop user's home folders, there in OSWorld's VM (`sudo mkdir ~/Desktop/x`)."""
UNSUPPORTED_STEPS = {
    "login": "it signs in to a live web site with an account, which StateAct's offline sandbox "
    "cannot do",
    "googledrive": "it fills a Google Drive account, which StateAct's offline sandbox cannot do",
}
SUDO = re.compile(r"(^|[\s;&|(`])sudo\s")
# OSWorld's user has sudo; the agent here has none (no-new-privileges, and `user` is no sudoer).
# Before the agent starts (`before_agent`), a command step that uses `sudo` runs as root: the
# docker backend's root keeps the container's few capabilities (file ownership, switching users),
# while the agent's processes have none. The step's shell keeps the user's HOME, so `~` means what
# it means in OSWorld's user shell, and `sudo` is a function that drops its options (and the
# password line -S reads) and runs the command. After the agent (postconfig), and on a backend
# without root, the same function runs the command with the user's rights: root then would run
# what the agent planted in the home. docs/osworld-setup.md has the measurements.
SUDO_FUNCTION = (
    "sudo() { local stdin_password=; while [ $# -gt 0 ]; do case $1 in -S|--stdin) "
    "stdin_password=1; shift ;; -[ugpCDRhTU]) shift 2 ;; --) shift; break ;; -*) shift ;; *) break "
    ";; esac; done; "
    '[ -n "$stdin_password" ] && IFS= read -r _; [ $# -eq 0 ] || "$@"; }; export -f sudo; '
)
SUDO_AS_USER = SUDO_FUNCTION  # the name tests and older callers know
AS_THE_USER = f"export HOME={SANDBOX_HOME} USER={SANDBOX_USER} LOGNAME={SANDBOX_USER}; "
"""A root step's shell keeps the user's home and name, as `sudo` in the user's shell does."""
OFFICE_MODES = {
    ".xlsx": "--calc",
    ".xls": "--calc",
    ".ods": "--calc",
    ".csv": "--calc",
    ".docx": "--writer",
    ".doc": "--writer",
    ".odt": "--writer",
    ".rtf": "--writer",
    ".pptx": "--impress",
    ".ppt": "--impress",
    ".odp": "--impress",
}


def default_placeholders(width: int, height: int, password: str = "password") -> dict[str, str]:
    """The placeholder values OSWorld substitutes into setup commands."""
    return {
        "SCREEN_WIDTH": str(width),
        "SCREEN_HEIGHT": str(height),
        "SCREEN_WIDTH_HALF": str(width // 2),
        "SCREEN_HEIGHT_HALF": str(height // 2),
        "CLIENT_PASSWORD": password,
    }


def sandbox_screen(sandbox: Sandbox) -> tuple[int, int]:
    """The screen size the sandbox was configured with (OSWorld's when it names none)."""
    size = getattr(getattr(sandbox, "config", None), "display_size", None) or OSWORLD_SCREEN
    return int(size[0]), int(size[1])


def substitute_placeholders(value: Any, placeholders: dict[str, str]) -> Any:
    """`{NAME}` replaced by its value in every string inside `value`; other text is left alone."""
    if isinstance(value, str):
        for name, replacement in placeholders.items():
            value = value.replace("{" + name + "}", str(replacement))
        return value
    if isinstance(value, list):
        return [substitute_placeholders(item, placeholders) for item in value]
    if isinstance(value, dict):
        return {key: substitute_placeholders(item, placeholders) for key, item in value.items()}
    return value


def open_command(path: str) -> list[str]:
    """The command that opens `path` with its desktop application."""
    mode = OFFICE_MODES.get(PurePosixPath(path).suffix.lower())
    return ["soffice", mode, path] if mode else ["xdg-open", path]


def sandbox_target(path: str) -> str:
    """A step's file path as OSWorld's server resolves it: `~` and `$HOME` are the user's home,
    and a relative path is relative to the server's working folder, the home (`eval.sh` is
    /home/user/eval.sh). The result is absolute and normalised, so it stays a path inside the
    sandbox (a `..` past the root stops at /)."""
    path = re.sub(r"^~(?=/|$)", SANDBOX_HOME, path.strip())
    path = re.sub(r"\$(HOME\b|\{HOME\})", SANDBOX_HOME, path)
    return "/" + posixpath.normpath(posixpath.join(SANDBOX_HOME, path)).lstrip("/")


def command_text(command: str | list[str]) -> str:
    """A command as one bash command line (a list is quoted word by word)."""
    if isinstance(command, list):
        return shlex.join(str(part) for part in command)
    return command


def detached(command_line: str, log_name: str) -> str:
    """Shell text that starts `command_line` in its own session and returns at once."""
    inner = shlex.quote(command_line)
    return (
        f"cd {SANDBOX_HOME}; setsid nohup bash -c {inner} >/tmp/{log_name}.log 2>&1 < /dev/null &"
    )


@dataclass
class SetupRunner:
    """Runs steps in one sandbox; remembers whether the desktop is up."""

    sandbox: Sandbox
    task: Task
    cache_dir: Path | None
    placeholders: dict[str, str]
    outputs_dir: Path | None = None
    """Host folder for an execute step's `stdout`/`stderr` files (read later by `cache_file`)."""
    desktop_started: bool = False
    before_agent: bool = False
    """These are the task's own setup steps, run before any agent has touched the sandbox: a
    command step that uses `sudo` runs as root, and the home gets Ubuntu's user folders."""
    desktop_missing: bool = False
    """The image has no desktop session to start (a command step then runs without one)."""
    launched: int = field(default=0)

    def bash(
        self, script: str, timeout: float = 120.0, user: str = SANDBOX_USER
    ) -> tuple[int, str]:
        return self.sandbox.exec(
            ["bash", "-c", SOURCE_DESKTOP + script], timeout=timeout, user=user
        )

    def must(self, script: str, what: str, timeout: float = 120.0) -> str:
        code, output = self.bash(script, timeout)
        if code != 0:
            raise StateActError(f"{what} failed (exit {code}): {output.strip()[-300:]}")
        return output

    def ensure_desktop(self, optional: bool = False) -> None:
        """Start the desktop session unless it is up; `optional`: not in an image without one."""
        if self.desktop_started:
            return
        folders = " ".join(f"{SANDBOX_HOME}/{name}" for name in USER_FOLDERS)
        # Made only before the agent: afterwards one it removed must stay removed.
        make_folders = ""
        if self.before_agent:
            make_folders = f" && {{ mkdir -p {folders} 2>/dev/null; true; }}"
        if self.bash(f"test -f {DESKTOP_ENV}{make_folders}")[0] == 0:
            self.desktop_started = True
            self.publish_user_bus()
            return
        if optional and (
            self.desktop_missing or self.bash("command -v stateact-desktop >/dev/null")[0] != 0
        ):
            self.desktop_missing = True
            return
        width = self.placeholders.get("SCREEN_WIDTH", OSWORLD_SCREEN[0])
        height = self.placeholders.get("SCREEN_HEIGHT", OSWORLD_SCREEN[1])
        size = f"{width}x{height}"
        self.must(
            f"stateact-desktop start {size}{make_folders}",
            "starting the desktop",
            timeout=90.0,
        )
        self.desktop_started = True
        self.publish_user_bus()

    def publish_user_bus(self) -> None:
        """Before the agent, make the session bus reachable where Ubuntu keeps it, as OSWorld's
        steps address it (`DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus gsettings …`).

        Best effort: /run is root's, so this needs the root step of the docker backend."""
        if not self.before_agent:
            return
        folder = USER_RUNTIME_DIR
        owner = f"{SANDBOX_USER}:{SANDBOX_USER}"
        self.sandbox.exec(
            ["bash", "-c", f"mkdir -p {folder} && chown {owner} {folder} && chmod 700 {folder}"],
            user="root",
        )
        link = (
            "socket=${DBUS_SESSION_BUS_ADDRESS#unix:path=}; socket=${socket%%,*}; "
            f'[ -S "$socket" ] && [ -O {folder} ] && ln -sfn "$socket" {folder}/bus'
        )
        self.bash(link)

    def start_detached(self, command_line: str) -> None:
        self.launched += 1
        self.must(
            detached(command_line, f"stateact-launch-{self.launched}"), "starting the program"
        )

    def download(self, params: dict) -> None:
        for item in params.get("files", []):
            host = resolve_source(str(item["url"]), self.task, self.cache_dir)
            path = sandbox_target(str(item["path"]))
            self.must(
                f"mkdir -p {shlex.quote(str(PurePosixPath(path).parent))}",
                f"making the folder for {path}",
            )
            # The backend writes the file as the user (owned by the user, as OSWorld's download
            # leaves it): no root step follows a path the agent could have planted.
            self.sandbox.copy_in(host, path)

    def open(self, params: dict) -> None:
        path = sandbox_target(str(params["path"]))
        command = open_command(path)
        title = PurePosixPath(path).name if command[0] == "soffice" else None
        self.start_with_window(command_text(command), opens_a_window(command[0]), title)

    def launch(self, params: dict) -> None:
        command = params["command"]
        self.start_with_window(command_text(command), opens_a_window(launched_program(command)))

    def start_with_window(self, command_line: str, windowed: bool, title: str | None = None):
        """Start a program; for an application, return once a new window of it is shown (one
        bearing `title`, when given: the document's name) and its content stays put, so the
        agent's first look and the next step find it laid out."""
        before = self.bash(VISIBLE_WINDOWS)[1] if windowed else ""
        self.start_detached(command_line)
        if not windowed:
            return
        if self.bash(new_window_script(before))[0] != 0:
            log.warning("setup of %s: no window came from %r", self.task.id, command_line[:80])
            return
        if title is not None and self.bash(titled_window_script(title))[0] != 0:
            log.warning("setup of %s: no window titled with %s came", self.task.id, title)
            return
        self.wait_for_a_settled_screen()

    def wait_for_a_settled_screen(self) -> None:
        try:
            self.sandbox.call("desktop.wait_quiet", timeout=60.0)
        except (StateActError, ToolError) as exc:  # no driver for this screen: go on as before
            log.info("setup of %s: the screen was not watched (%s)", self.task.id, exc)

    def execute(self, params: dict) -> None:
        # The command's exit code does not fail the step: tasks run `diff` or `pkill` and judge
        # their output later, as OSWorld does.
        command = command_text(params["command"])
        until = params.get("until") or {}
        uses_sudo = SUDO.search(command) is not None
        prefix = SUDO_FUNCTION if uses_sudo else ""
        user = SANDBOX_USER
        if uses_sudo and self.before_agent:
            prefix, user = AS_THE_USER + prefix, "root"
        for _attempt in range(10 if until else 1):
            code, output = self.bash(
                f"{prefix}cd {SANDBOX_HOME}; {command}",
                timeout=float(params.get("timeout", 120)),
                user=user,
            )
            if not until or self.until_met(until, code, output):
                break
            time.sleep(1.0)
        else:
            raise StateActError(f"the command never met its 'until' condition {until}")
        for key in ("stdout", "stderr"):
            # The sandbox gives one combined output stream, so both files get it.
            if params.get(key) and self.outputs_dir is not None:
                self.outputs_dir.mkdir(parents=True, exist_ok=True)
                target = confined(
                    self.outputs_dir / str(params[key]),
                    [self.outputs_dir],
                    f"the execute step's {key} file {params[key]!r} leaves the outputs folder",
                )
                target.write_text(output, encoding="utf-8")

    @staticmethod
    def until_met(until: dict, code: int, output: str) -> bool:
        if "returncode" in until and code != int(until["returncode"]):
            return False
        return all(str(until[key]) in output for key in ("stdout", "stderr") if key in until)

    def sleep(self, params: dict) -> None:
        time.sleep(float(params.get("seconds", 1)))

    def activate_window(self, params: dict) -> None:
        script = window_activate_script(
            str(params["window_name"]),
            bool(params.get("strict", False)),
            bool(params.get("by_class", False)),
        )
        code, output = self.bash(script)
        if code != 0:
            # OSWorld ignores wmctrl's answer: a window that never came is a warning, as there.
            log.warning(
                "setup of %s: no window %r to activate: %s",
                self.task.id,
                params["window_name"],
                output.strip()[-200:],
            )

    def close_window(self, params: dict) -> None:
        script = window_close_script(
            str(params["window_name"]),
            bool(params.get("strict", False)),
            bool(params.get("by_class", False)),
        )
        self.must(script, f"closing the window {params['window_name']!r}")

    def chrome(self, request: dict) -> dict:
        return cdp_call(lambda command: self.bash(command, timeout=180.0), request)

    def chrome_open_tabs(self, params: dict) -> None:
        urls = [str(url) for url in params.get("urls_to_open", [])]
        self.chrome({"op": "open_tabs", "urls": urls, "wait_s": 30})

    def chrome_close_tabs(self, params: dict) -> None:
        urls = [str(url) for url in params.get("urls_to_close", [])]
        self.chrome({"op": "close_tabs", "urls": urls, "wait_s": 30})

    def webarena_start(self, params: dict) -> None:
        start_webarena(lambda command: self.bash(command, timeout=180.0), params)

    def update_browse_history(self, params: dict) -> None:
        from tasks.chrome_history import history_script

        self.must(history_script(params.get("history", [])), "writing Chrome's history")

    def run(self, index: int, step: SetupStep) -> None:
        if step.type not in STEP_TYPES:
            raise StateActError(f"setup step {index} has the unsupported type {step.type!r}")
        if step.type in UNSUPPORTED_STEPS:
            raise StateActError(
                f"setup step {index} ({step.type}) is unsupported: {UNSUPPORTED_STEPS[step.type]}"
            )
        params = substitute_placeholders(step.parameters, self.placeholders)
        handler = self.execute if step.type == "command" else getattr(self, step.type)
        try:
            if step.type in GUI_STEPS:
                self.ensure_desktop()
            elif step.type in COMMAND_STEPS:
                # OSWorld runs every command in a live session: pyautogui needs the display, and
                # gsettings without the session's bus changes nothing.
                self.ensure_desktop(optional=True)
            handler(params)
        except (StateActError, ToolError, KeyError, ValueError, TypeError, OSError) as exc:
            detail = f"missing parameter {exc}" if isinstance(exc, KeyError) else str(exc)
            raise StateActError(f"setup step {index} ({step.type}) failed: {detail}") from None


def run_setup(
    steps: list[SetupStep],
    sandbox: Sandbox,
    task: Task,
    cache_dir: Path | None,
    placeholders: dict[str, str] | None = None,
    outputs_dir: Path | None = None,
    before_agent: bool = False,
) -> SetupRunner:
    """Run `steps` in order; raises StateActError naming the first step that fails.

    `before_agent`: these are the task's own setup steps and no agent has written in the sandbox
    yet, so the steps that use `sudo` run as root and the home gets Ubuntu's user folders."""
    runner = SetupRunner(
        sandbox,
        task,
        cache_dir,
        placeholders or default_placeholders(*sandbox_screen(sandbox)),
        outputs_dir,
        before_agent=before_agent,
    )
    if before_agent:
        prepare_start_state(task, sandbox)
    for index, step in enumerate(steps):
        runner.run(index, step)
    return runner
