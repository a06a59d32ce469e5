"""The warm pool: sandboxes started ahead of the tasks that will use them (`--warm N`).

A suite, a batch or the MCP server keeps N sandboxes of one `SandboxConfig` started, with the
desktop already up in an image that has one, and hands the next one to the next task whose
config equals the pool's (any other task opens its own, as without a pool). A thread starts a
replacement for each one taken. A pooled sandbox is used once: its task closes it as it would a
cold one, so nothing one task leaves reaches another. Pooled sandboxes are ordinary sandboxes
(registered with `sandboxes.lifecycle`, labelled with their owner), so exit and SIGTERM close
them and after a kill -9 the next StateAct start reaps them.

Set up ahead: a suite also tells the pool which tasks come next (`plan`, each with a key and the
function that runs its setup), and the pool runs each one's setup in the sandbox it will hand to
that task (`take(config, key)`), files copied in and applications open, while other tasks wait
for their models. A setup that fails leaves no sandbox: its task opens its own and meets the same
failure where it is recorded. A planned task no sandbox was started for yet takes a plain one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from harness.kernel.core import StateActError

from .base import Sandbox, SandboxConfig, SandboxError

log = logging.getLogger(__name__)

MAX_WARM = 64
"""More started sandboxes than any one machine holds: a typo (`--warm 500`) is refused."""
FAILURES_BEFORE_GIVING_UP = 3
"""Starts in a row that fail before the pool stops trying (tasks then open their own, and the
same cause shows in their results)."""
RETRY_PAUSE_S = 2.0
"""Pause after a failed start, times the failures in a row."""
WAITING_CPU_SHARES = 128
DEFAULT_CPU_SHARES = 1024
"""Docker's CPU weights: a pooled sandbox's while it starts and waits (an eighth), and every
running sandbox's."""
NO_DESKTOP = 3
"""The exit code of the desktop start when the image has no desktop to start."""


def check_warm(warm, backend: str) -> int:
    """`--warm N` as an int: 0 (no pool) or more, and more only with the docker backend."""
    if isinstance(warm, bool) or not isinstance(warm, int):
        raise StateActError(f"--warm takes a whole number of sandboxes (0 for none), not {warm!r}.")
    if warm < 0 or warm > MAX_WARM:
        raise StateActError(f"--warm must be from 0 (no pool) to {MAX_WARM}, got {warm}.")
    if warm and backend != "docker":
        raise StateActError(
            f"--warm needs the docker backend: {backend} sandboxes start in a fraction of a "
            "second, and a pool of them would leave nothing for the next start to reap after a "
            "kill -9."
        )
    return warm


@dataclass(frozen=True)
class PoolConfig:
    """What a warm pool keeps: `size` started sandboxes of `sandbox`, the desktop up unless
    `desktop` is off."""

    size: int
    sandbox: SandboxConfig
    desktop: bool = True
    """Start the desktop (Xvfb, openbox, D-Bus) in images that have one, as a task's first GUI
    step would; the MCP server's tools have no screen and leave it off."""

    def __post_init__(self) -> None:
        check_warm(self.size, self.sandbox.backend)


class WarmPool:
    """Started sandboxes for tasks of one config; `take` hands one out, a thread replaces it."""

    def __init__(
        self, config: PoolConfig, opener: Callable[[SandboxConfig], Sandbox] | None = None
    ):
        from . import open_sandbox

        self.config = config
        self._open = opener or open_sandbox
        self._ready: deque = deque()
        self._changed = threading.Condition()
        self._waiting = 0
        self._closed = False
        self._failures = 0
        self._has_desktop: bool | None = None if config.desktop else False
        self._planned: deque = deque()  # (key, prepare) of tasks to set up ahead, in order
        self._preparing: set[str] = set()
        self._prepared: dict[str, Sandbox | None] = {}  # None: its setup failed
        self.taken = 0
        """Sandboxes handed to tasks (for the record and the bench)."""
        self._starting = 1  # the filler's first start, counted before it runs (see _fill)
        self._thread = threading.Thread(target=self._fill, name="warm-pool", daemon=True)
        self._thread.start()

    @property
    def ready(self) -> int:
        """How many started sandboxes wait for a task now."""
        with self._changed:
            return len(self._ready)

    def wait_full(self, timeout_s: float) -> bool:
        """Block until the pool holds `size` started sandboxes, set up ahead or not (the bench,
        the tests)."""
        with self._changed:
            return (
                self._changed.wait_for(lambda: self._full() or self._gave_up(), timeout_s)
                and self._full()
            )

    def _full(self) -> bool:
        return self._held() >= self.config.size and not (self._planned and self._ready)

    def _held(self) -> int:
        """Started sandboxes waiting for a task: plain ones and those set up ahead."""
        return len(self._ready) + sum(s is not None for s in self._prepared.values())

    def plan(self, tasks: Iterable[tuple[str, Callable[[Sandbox], None]]]) -> None:
        """Set these tasks up ahead, in this order: (key, prepare) each, `prepare(sandbox)` being
        the task's own setup; the task takes its sandbox with `take_prepared(config, key)`."""
        with self._changed:
            self._planned.extend(tasks)
            self._changed.notify_all()

    def take_prepared(self, config: SandboxConfig, key: str) -> Sandbox | None:
        """The sandbox set up ahead for the task `key`, waiting for a setup under way; None when
        there is none (not planned, not started yet, or its setup failed), and the task is then
        planned no more: it sets itself up."""
        if config != self.config.sandbox:
            return None
        with self._changed:
            self._planned = deque(item for item in self._planned if item[0] != key)
            timeout = config.start_timeout_s + 300  # the start, its desktop, the task's setup
            self._changed.wait_for(lambda: key not in self._preparing or self._closed, timeout)
            sandbox = self._prepared.pop(key, None)
            self._changed.notify_all()  # its place is free: the filler starts the next
        if sandbox is not None and not self._closed and _answers(sandbox):
            _cpu_weight(sandbox, None)
            self.taken += 1
            return sandbox
        if sandbox is not None:
            sandbox.close()
        return None

    def forget(self, key: str) -> None:
        """The task `key` will not take its sandbox (it was skipped, or it ran without): close
        what was set up for it and plan it no more."""
        with self._changed:
            self._planned = deque(item for item in self._planned if item[0] != key)
            sandbox = self._prepared.pop(key, None)
            self._changed.notify_all()
        if sandbox is not None:
            sandbox.close()

    def take(self, config: SandboxConfig) -> Sandbox | None:
        """A started sandbox for a task of `config`, or None (another config, or none to be had
        soon): the caller then opens its own. One that is being started is waited for, since it
        is ready sooner than a cold start would be."""
        if config != self.config.sandbox:
            return None
        while True:
            with self._changed:
                if not self._ready and self._starting > self._waiting and not self._closed:
                    self._waiting += 1
                    self._changed.notify_all()
                    timeout = config.start_timeout_s + 90  # the start plus its desktop's
                    self._changed.wait_for(
                        lambda: self._ready or self._closed or not self._starting, timeout
                    )
                    self._waiting -= 1
                if self._closed or not self._ready:
                    return None
                sandbox = self._ready.popleft()
                self._changed.notify_all()  # the filler starts its replacement
            if _answers(sandbox):
                _cpu_weight(sandbox, None)
                self.taken += 1
                return sandbox
            sandbox.close()  # died while it waited (the engine restarted, an OOM): the next one

    def close(self) -> None:
        """Stop filling and close every sandbox that no task took."""
        with self._changed:
            self._closed = True
            left, self._ready = list(self._ready), deque()
            left += [s for s in self._prepared.values() if s is not None]
            self._prepared.clear()
            self._changed.notify_all()
        for sandbox in left:
            sandbox.close()
        # A start under way ends in the filler, which closes what it started: wait for it, so
        # nothing the pool started outlives the suite (a start that hangs is left to the exit
        # hooks and the next start's reaper).
        self._thread.join(timeout=self.config.sandbox.start_timeout_s)

    def _gave_up(self) -> bool:
        return self._failures >= FAILURES_BEFORE_GIVING_UP

    def _wanted(self) -> bool:
        """Whether another sandbox should be started now: fewer ready (set up or not) or starting
        than the size plus the tasks waiting for one."""
        short = self._held() + self._starting < self.config.size + self._waiting
        return short or bool(self._planned and self._ready)  # a plain one to set up ahead

    def _fill(self) -> None:
        """Start sandboxes one after the other while the pool is short, each set up for the next
        planned task if there is one. `_starting` counts the start under way from the moment it
        is decided (in the same hold of the lock that put the last one in), so a task never sees
        an empty pool with nothing coming."""
        while True:
            sandbox, key = self._plain_for_plan() or self._start_one(), None
            if sandbox is None and not self._gave_up():
                time.sleep(RETRY_PAUSE_S * self._failures)  # the engine may be busy: not at once
            if sandbox is not None:
                key, sandbox = self._set_up_ahead(sandbox)
            with self._changed:
                self._starting -= 1
                keep = sandbox is not None and not self._closed
                if key is not None:
                    self._preparing.discard(key)
                    self._prepared[key] = sandbox if keep else None
                elif keep:
                    self._ready.append(sandbox)
                self._changed.notify_all()
                if self._gave_up():
                    log.warning("the warm pool stopped: %d starts in a row failed", self._failures)
                    stop = True
                else:
                    self._changed.wait_for(lambda: self._closed or self._wanted())
                    stop = self._closed
                    self._starting += not stop
            if sandbox is not None and not keep:
                sandbox.close()
            if stop:
                return

    def _plain_for_plan(self) -> Sandbox | None:
        """A plain sandbox already started, when a planned task can have it (a plan that came
        after the pool filled)."""
        with self._changed:
            return self._ready.popleft() if self._planned and self._ready else None

    def _set_up_ahead(self, sandbox: Sandbox) -> tuple[str | None, Sandbox | None]:
        """Run the next planned task's setup in `sandbox`: (its key, the sandbox), (None, the
        sandbox) when no task is planned, (its key, None) when its setup failed (the sandbox is
        closed: the task sets itself up and meets the failure in its own record)."""
        with self._changed:
            if not self._planned or self._closed or self._waiting:
                return None, sandbox  # a task waits for a plain one: it comes first
            key, prepare = self._planned.popleft()
            self._preparing.add(key)
        try:
            prepare(sandbox)
        except Exception as exc:  # noqa: BLE001
            log.info("setting up %s ahead failed (it will set itself up): %s", key, exc)
            sandbox.close()
            return key, None
        return key, sandbox

    def _start_one(self) -> Sandbox | None:
        """A started sandbox with its desktop up, or None (logged) when it could not start."""
        try:
            sandbox = self._open(self.config.sandbox)
        except Exception as exc:  # noqa: BLE001 -- the tasks report a start failure themselves
            self._failures += 1
            log.warning("the warm pool could not start a sandbox: %s", exc)
            return None
        _cpu_weight(sandbox, WAITING_CPU_SHARES)
        try:
            self._start_desktop(sandbox)
        except Exception as exc:  # noqa: BLE001
            sandbox.close()
            self._failures += 1
            log.warning("the warm pool could not start a desktop: %s", exc)
            return None
        self._failures = 0
        return sandbox

    def _start_desktop(self, sandbox: Sandbox) -> None:
        """What a task's first GUI step runs (`tasks.setup.SetupRunner.ensure_desktop`), so that
        step finds the desktop up; `stateact-desktop start` is idempotent."""
        if self._has_desktop is False:
            return
        width, height = self.config.sandbox.display_size
        script = (
            f"command -v stateact-desktop >/dev/null || exit {NO_DESKTOP}; "
            f"stateact-desktop start {width}x{height} >/dev/null"
        )
        code, output = sandbox.exec(["bash", "-c", script], timeout=90.0)
        if code == NO_DESKTOP:
            self._has_desktop = False
            return
        if code != 0:
            raise SandboxError(f"the desktop did not start: {output.strip()[-300:]}")
        self._has_desktop = True
        _warm_desktop_driver(sandbox, width, height)


def _warm_desktop_driver(sandbox: Sandbox, width: int, height: int) -> None:
    """Spawn the toolbox's desktop driver and its screen grabber (the first `desktop.*` call
    starts a Python process that loads Pillow, 0.3-1 s on a loaded machine), so a task's first
    screenshot pays neither. Sent through the toolbox client itself: the call is the harness's,
    not the agent's, so a docker sandbox keeps running the task's setup commands through the
    toolbox (`DockerSandbox.agent_has_run` stays False)."""
    client = getattr(sandbox, "toolbox", None)
    if client is None:
        return
    client.call("desktop.start", timeout=90.0, width=width, height=height)
    client.call("desktop.screenshot", timeout=60.0, width=320, height=180, settle_s=0.0)


def _cpu_weight(sandbox: Sandbox, shares: int | None) -> None:
    """Lower a pooled container's CPU weight while it starts and waits (its desktop start then
    yields to the running tasks' work on a machine with few cores); None gives the default back
    when a task takes it. Best effort: an engine without CPU weights leaves it as it is."""
    container = getattr(sandbox, "container", None)
    if container is None:
        return
    try:
        container.update(cpu_shares=shares or DEFAULT_CPU_SHARES)
    except Exception as exc:  # noqa: BLE001 -- never worth losing the sandbox (or leaking it) over
        log.debug("no CPU weight for %s: %s", getattr(sandbox, "id", "?"), exc)


def _answers(sandbox: Sandbox) -> bool:
    """Whether a pooled sandbox still runs commands (one through its toolbox: a few ms)."""
    try:
        return sandbox.exec(["/bin/true"], timeout=10)[0] == 0
    except Exception:  # noqa: BLE001 -- any failure: it is closed and the next one taken
        return False


_active: list[WarmPool] = []
_active_lock = threading.Lock()


@contextmanager
def warm_pool(config: PoolConfig | None) -> Iterator[WarmPool | None]:
    """Keep a pool of `config` for the block's tasks (`open_pooled` takes from it); closed on the
    way out. None or a size of 0: no pool."""
    if config is None or config.size == 0:
        yield None
        return
    pool = WarmPool(config)
    with _active_lock:
        _active.append(pool)
    try:
        yield pool
    finally:
        with _active_lock:
            _active.remove(pool)
        pool.close()


@dataclass(frozen=True)
class PooledStart:
    """A task's sandbox as `open_pooled` hands it over."""

    sandbox: Sandbox
    from_pool: bool = False
    set_up: bool = False
    """The pool already ran the task's setup in it (set up ahead)."""


def _active_pools() -> list[WarmPool]:
    with _active_lock:
        return list(_active)


def open_pooled(config: SandboxConfig, key: str | None = None) -> PooledStart:
    """A sandbox for `config`: the one set up ahead for the task `key` when an active pool
    planned it, else a pooled one when an active pool keeps this config, else a fresh start."""
    from . import open_sandbox

    pools = _active_pools()
    for pool in pools if key is not None else []:
        sandbox = pool.take_prepared(config, key)
        if sandbox is not None:
            return PooledStart(sandbox, from_pool=True, set_up=True)
    for pool in pools:
        sandbox = pool.take(config)
        if sandbox is not None:
            return PooledStart(sandbox, from_pool=True)
    return PooledStart(open_sandbox(config))


def forget_planned(key: str) -> None:
    """The task `key` is done (or skipped): no active pool keeps or sets up a sandbox for it."""
    for pool in _active_pools():
        pool.forget(key)
