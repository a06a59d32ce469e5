"""A disk limit for a container whose engine has none.

Docker's `--storage-opt size=` works on overlay2 only over xfs with project quotas; on the usual
ext4 backing it is refused, so a container's writable layer may grow until the host's disk is
full, and a sparse file that costs nothing inside is written out in full by a commit. The watch
polls the layer's apparent size (what a commit or a copy-out would write: a sparse file counts at
its length) and, past the limit, records why and kills the container, so the run ends with the
status `sandbox_limit` and one sentence instead of a full disk.
"""

from __future__ import annotations

import logging
import threading

from .agent_files import MiB
from .base import SandboxError

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 2.0


class SandboxLimitExceeded(SandboxError):
    """The sandbox passed a size limit and was ended; the run's status says so."""

    status = "sandbox_limit"


def layer_bytes(api, container_id: str) -> int:
    """The apparent size of the container's writable layer (the engine walks it: ~ms)."""
    url = api._url("/containers/{0}/json", container_id)
    info = api._result(api._get(url, params={"size": 1}), True)
    return int(info.get("SizeRw") or 0)


class DiskWatch:
    """Polls one container's writable layer in a daemon thread until `stop()`."""

    def __init__(self, api, container, limit_mb: int, interval_s: float = POLL_INTERVAL_S):
        self.api, self.container = api, container
        self.limit = limit_mb * MiB
        self.interval_s = interval_s
        self.exceeded: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stateact-disk-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def raise_if_exceeded(self) -> None:
        if self.exceeded is not None:
            raise SandboxLimitExceeded(self.exceeded + ".")

    def guard(self, call):
        """`call` (a toolbox client's), failing with the reason once the watch ended the sandbox
        (a call cut short by the end says why, instead of "connection closed")."""

        def guarded(method: str, *, wait_s: float | None = None, **params) -> dict:
            self.raise_if_exceeded()
            try:
                return call(method, wait_s=wait_s, **params)
            except SandboxError:
                self.raise_if_exceeded()
                raise

        return guarded

    def check(self) -> None:
        """Measure now; past the limit, end the container and raise SandboxLimitExceeded."""
        if self.exceeded is None:
            size = layer_bytes(self.api, self.container.id)
            if size > self.limit:
                self.exceeded = (
                    f"the sandbox's files grew to {size / MiB:,.0f} MiB (counting sparse files at "
                    f"their length), past its disk limit of {self.limit // MiB:,} MiB; the "
                    "sandbox was ended so the host's disk is not filled"
                )
                log.warning("%s: %s", self.container.name, self.exceeded)
                self._end()
        self.raise_if_exceeded()

    def _end(self) -> None:
        from docker.errors import APIError, NotFound

        try:
            self.container.kill()
        except (APIError, NotFound):
            pass  # already stopped or removed: nothing more is written either way

    def _run(self) -> None:
        from docker.errors import APIError, NotFound

        while not self._stop.wait(self.interval_s):
            try:
                self.check()
            except SandboxLimitExceeded:
                return
            except (APIError, NotFound):
                return  # the container is gone: its owner is closing it
            except Exception as exc:  # noqa: BLE001 - the watch must never take the run down
                log.warning("disk watch of %s stopped: %s", self.container.name, exc)
                return
