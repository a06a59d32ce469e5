"""Memory of each sandbox from its cgroup, sampled while a density run goes on.

The figure is the working set as `docker stats` reports it: the cgroup's usage less its inactive
page cache (file pages the kernel drops first under pressure). cgroup v1 (`memory/docker/<id>`)
and v2 (`docker/<id>` or `system.slice/docker-<id>.scope`) are both read. Only this process's
sandboxes are sampled (their owner label), so other people's containers on the engine never count.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from sandboxes.docker_backend import OWNER_LABEL, docker_client
from sandboxes.lifecycle import owner_label

CGROUP = Path("/sys/fs/cgroup")
MiB = 1024 * 1024


def cgroup_folder(container_id: str, root: Path = CGROUP) -> Path | None:
    """The memory cgroup folder of a container, or None when none of the known layouts has it."""
    for candidate in (
        root / "memory" / "docker" / container_id,
        root / "docker" / container_id,
        root / "system.slice" / f"docker-{container_id}.scope",
    ):
        if candidate.is_dir():
            return candidate
    return None


def working_set(folder: Path) -> int | None:
    """Bytes in use less inactive file cache; None once the cgroup is gone."""
    try:
        if (folder / "memory.usage_in_bytes").exists():  # cgroup v1
            usage = int((folder / "memory.usage_in_bytes").read_text())
            inactive_key = "total_inactive_file"
        else:
            usage = int((folder / "memory.current").read_text())
            inactive_key = "inactive_file"
        stat = dict(
            line.split() for line in (folder / "memory.stat").read_text().splitlines() if line
        )
    except (OSError, ValueError):
        return None
    return max(0, usage - int(stat.get(inactive_key, 0)))


def kernel_peak(folder: Path) -> int | None:
    """The kernel's own high-water mark of the cgroup's usage, page cache included (an upper
    bound of the working set's peak, which sampling can miss between samples)."""
    for name in ("memory.max_usage_in_bytes", "memory.peak"):
        try:
            return int((folder / name).read_text())
        except (OSError, ValueError):
            continue
    return None


def cpu_seconds(container_id: str, root: Path = CGROUP) -> float | None:
    """CPU time the container's processes used so far (cgroup v1 cpuacct, or v2 cpu.stat)."""
    try:
        v1 = root / "cpuacct" / "docker" / container_id / "cpuacct.usage"
        if v1.exists():
            return int(v1.read_text()) / 1e9
        folder = cgroup_folder(container_id, root)
        if folder is not None and (folder / "cpu.stat").exists():
            for line in (folder / "cpu.stat").read_text().splitlines():
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
    except (OSError, ValueError):
        pass
    return None


def host_available() -> int | None:
    """MemAvailable of the host, in bytes."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


@dataclass
class SandboxMemory:
    """Samples of one container: `kind` is `task` (started from the image) or `view` (a gate's
    or probe's observer sandbox, started from a snapshot)."""

    container_id: str
    kind: str
    samples: list[int] = field(default_factory=list)
    cpu_s: float = 0.0
    """CPU seconds of its processes, as last seen."""
    kernel_peak_bytes: int = 0
    """The cgroup's high-water mark, cache included, as last seen."""

    @property
    def peak_mib(self) -> float:
        return max(self.samples) / MiB if self.samples else 0.0

    @property
    def kernel_peak_mib(self) -> float:
        return self.kernel_peak_bytes / MiB

    @property
    def mean_mib(self) -> float:
        return sum(self.samples) / len(self.samples) / MiB if self.samples else 0.0


class MemorySampler:
    """A thread that samples every sandbox of this process each `interval_s`; its own CPU time is
    kept apart (`cpu_s`) so the harness's CPU figure does not include the measuring.

    Sandboxes are found by the engine's start events as well as by listing: a gate's observer
    sandbox can live for less than a listing interval, and a listing alone would miss it."""

    def __init__(self, task_image_id: str, interval_s: float = 0.5):
        self.task_image_id = task_image_id
        self.interval_s = interval_s
        self.sandboxes: dict[str, SandboxMemory] = {}
        self.min_available: int | None = None
        self.peak_live = 0
        self.cpu_s = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="density-memory", daemon=True)
        self._watcher = threading.Thread(target=self._watch, name="density-starts", daemon=True)
        self._folders: dict[str, Path] = {}
        self._lock = threading.Lock()
        self._events = None
        self._watch_cpu_s = 0.0

    def __enter__(self) -> MemorySampler:
        self._events = docker_client().events(
            decode=True,
            filters={"type": "container", "event": "start", "label": self._label()},
        )
        self._watcher.start()
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._events.close()
        self._thread.join(timeout=10)
        self._watcher.join(timeout=10)

    @staticmethod
    def _label() -> str:
        return f"{OWNER_LABEL}={owner_label()}"

    def _watch(self) -> None:
        """Record each sandbox as it starts, with one sample at once."""
        client = docker_client()
        try:
            for event in self._events:
                cid = event.get("id") or event.get("Actor", {}).get("ID")
                if not cid or self._stop.is_set():
                    continue
                try:
                    image_id = client.api.inspect_container(cid)["Image"]
                except Exception:  # noqa: BLE001 - gone already: nothing to sample
                    continue
                self._track(cid, image_id)
                self._sample()
                self._watch_cpu_s = time.thread_time()
        except Exception:  # noqa: BLE001 - the stream ends when closed on exit
            return

    def _loop(self) -> None:
        client = docker_client()
        filters = {"label": self._label()}
        listed_at = 0.0
        while not self._stop.is_set():
            now = time.monotonic()
            if now - listed_at >= 1.0:  # listing asks the engine; reading cgroups does not
                self._discover(client, filters)
                listed_at = now
            self._sample()
            self.cpu_s = time.thread_time() + self._watch_cpu_s
            self._stop.wait(self.interval_s)

    def _discover(self, client, filters: dict) -> None:
        live = client.api.containers(filters=filters)
        self.peak_live = max(self.peak_live, len(live))
        for container in live:
            self._track(container["Id"], container.get("ImageID"))

    def _track(self, cid: str, image_id: str | None) -> None:
        with self._lock:
            if cid in self.sandboxes:
                return
            folder = cgroup_folder(cid)
            if folder is None:
                return
            kind = "task" if image_id == self.task_image_id else "view"
            self._folders[cid] = folder
            self.sandboxes[cid] = SandboxMemory(cid, kind)

    def _sample(self) -> None:
        with self._lock:
            folders = list(self._folders.items())
        for cid, folder in folders:
            value = working_set(folder)
            if value is None:
                with self._lock:
                    self._folders.pop(cid, None)  # removed
            else:
                record = self.sandboxes[cid]
                record.samples.append(value)
                record.cpu_s = cpu_seconds(cid) or record.cpu_s
                record.kernel_peak_bytes = kernel_peak(folder) or record.kernel_peak_bytes
        available = host_available()
        if available is not None:
            self.min_available = min(self.min_available or available, available)

    def of_kind(self, kind: str) -> list[SandboxMemory]:
        return [s for s in self.sandboxes.values() if s.kind == kind and s.samples]
