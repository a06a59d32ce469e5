"""The default backend: one Docker container per sandbox, driven with the Docker SDK.

The container runs offline, with memory, CPU and process limits and no capabilities beyond what
file ownership needs. Its one process under the engine's init is the toolbox: it boots as root,
receives the toolbox's source over its own stdin (so images need no rebuild when the toolbox
changes), prepares the root-only folders and becomes user `user` for good
(`sandboxes/toolbox/boot.py`); the harness speaks to it over the container's attach socket.
"""

from __future__ import annotations

import io
import json
import logging
import tarfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path

from harness.kernel.core import StateActError

from .agent_files import (
    COPY_LIMIT_BYTES,
    ChunkReader,
    FileLimitError,
    MiB,
)
from .agent_stop import FREEZE_LAUNCHER, FrozenAgent, parse_answer
from .agent_sudo import grant_script, security_options
from .base import (
    SANDBOX_HOME,
    SANDBOX_USER,
    TOOLBOX_DIR,
    TOOLBOX_PARENT,
    SandboxConfig,
    SandboxError,
    Snapshot,
    ToolboxSandboxMixin,
)
from .channel import DockerExecChannel
from .client import ToolboxClient
from .confined import host_target, sandbox_parts
from .disk_watch import DiskWatch
from .docker_archive import GO_MODE_DIR, GO_MODE_SYMLINK, extract_as, special_kind
from .lifecycle import owner_is_gone, owner_label, register, unregister
from .toolbox.observer import observer_argv, observer_env
from .toolbox.protocol import ProcFreeze, ProcThaw
from .typed import exec_through_toolbox, run

log = logging.getLogger(__name__)

ARCHIVE_CHUNK = 8 * 1024 * 1024
"""Bytes per read of a streamed archive (the SDK's 2 MiB default reads at a quarter the speed)."""


LABEL = "stateact.managed"
OWNER_LABEL = "stateact.owner"
PERSISTED_REPOSITORY = "stateact-milestone"
STAGING_ROOT = "/run/stateact-staging"
"""Root-owned: where archives land before a copy made as the user puts them in place."""
OBSERVER_USER = "stateact-observer"
OBSERVER_UID = 2999
OBSERVER_HOME = "/run/stateact-observer"
"""The observer's home: made empty at every container start, only the observer writes in it."""
OBSERVER_LAUNCHER = FREEZE_LAUNCHER.replace("toolbox.freeze", "toolbox.observer_exec")
# Root drops to the observer's uid keeping only the capability to read (see observer_exec.py).
AS_OBSERVER = [
    "/usr/bin/setpriv",
    f"--reuid={OBSERVER_UID}",
    f"--regid={OBSERVER_UID}",
    "--clear-groups",
    "--inh-caps=-all,+dac_read_search",
    "--ambient-caps=-all,+dac_read_search",
    "--",
    "/usr/bin/python3",
    "-I",
    "-c",
    OBSERVER_LAUNCHER,
]
HARNESS_METHODS = frozenset(
    {"proc.run", "file.stat", "file.read", "file.write", "fs.changed", "desktop.wait_quiet"}
)
"""Toolbox methods only the harness's own code calls; any other call may be the agent's."""
ENGINE_HINT = "start it with `bash .ci/install-engine.sh` (or `sudo dockerd &`)"
_reaped = False


_clients = threading.local()


def docker_client():
    """One engine client per thread (creating one costs a version round trip)."""
    import docker
    from docker.errors import DockerException

    client = getattr(_clients, "client", None)
    if client is not None:
        return client
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except DockerException:
        raise SandboxError(
            f"the Docker engine is not running or not reachable; {ENGINE_HINT}."
        ) from None
    _clients.client = client
    return client


def resolve_image(client, image: str) -> str:
    """The concrete image reference for `image` (a short name like `desktop`, or a full
    reference)."""
    from docker.errors import ImageNotFound

    if ":" in image or image.startswith("sha256"):
        ref, name = image, image.split(":")[0].removeprefix("stateact-")
    else:
        from .images.build import image_ref

        name = image.removeprefix("stateact-")
        ref = image_ref(name)
    try:
        client.images.get(ref)
    except ImageNotFound:
        raise SandboxError(
            f"the image {ref} is not built; build it with `stateact image build {name}`."
        ) from None
    return ref


def snapshot_exists(ref: str) -> bool:
    """Whether the snapshot image `ref` is still there."""
    from docker.errors import ImageNotFound

    try:
        docker_client().images.get(ref)
    except ImageNotFound:
        return False
    return True


def discard_snapshot(ref: str) -> bool:
    """Remove the snapshot image `ref`; False when it must wait (a newer image is built on it)."""
    from docker.errors import APIError, NotFound

    try:
        docker_client().images.remove(ref, force=True)
    except NotFound:
        pass
    except APIError as exc:
        log.info("snapshot image %s kept for now: %s", ref[:19], exc)
        return False
    return True


@contextmanager
def engine_errors(action: str) -> Iterator[None]:
    """The engine's errors while doing `action` as one SandboxError sentence: a container or image
    that vanished (removed by someone else meanwhile) says so, never an internal error."""
    from docker.errors import APIError, NotFound

    try:
        yield
    except NotFound as exc:
        raise SandboxError(
            f"could not {action}: the Docker engine no longer has it "
            f"({exc.explanation or exc}); it was removed while this run used it."
        ) from None
    except APIError as exc:
        raise SandboxError(f"could not {action}: {exc.explanation or exc}.") from None


def reap_orphans(client) -> list[str]:
    """Remove containers and snapshot images whose owning StateAct process is gone."""
    from docker.errors import APIError, NotFound

    removed = []
    # Other StateAct processes start and remove sandboxes meanwhile: vanished objects are fine.
    for container in client.containers.list(
        all=True, filters={"label": LABEL}, ignore_removed=True
    ):
        if owner_is_gone(container.labels.get(OWNER_LABEL, "")):
            try:  # with its anonymous volumes (a service image's VOLUME paths)
                container.remove(force=True, v=True)
            except (NotFound, APIError):
                continue
            removed.append(container.name)
    # The low-level listing: the high-level one inspects each image afterwards and fails with
    # ImageNotFound on a snapshot another process discarded in between.
    for image in client.api.images(filters={"label": LABEL}):
        owner = (image.get("Labels") or {}).get(OWNER_LABEL, "")
        if owner_is_gone(owner, image.get("Created")):
            try:
                client.images.remove(image["Id"], force=True)
            except (NotFound, APIError):
                continue
            removed.append(image["Id"].removeprefix("sha256:")[:12])
    # Service networks (sandboxes/services.py) once their containers above are gone.
    for network in client.networks.list(filters={"label": LABEL}):
        if owner_is_gone((network.attrs.get("Labels") or {}).get(OWNER_LABEL, "")):
            try:
                network.remove()
            except (NotFound, APIError):
                continue
            removed.append(network.name)
    if removed:
        log.info("removed %d orphaned sandbox objects: %s", len(removed), ", ".join(removed))
    return removed


ATTACH_PARAMS = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}


@lru_cache(maxsize=1)
def _boot_source() -> str:
    return (TOOLBOX_DIR / "boot.py").read_text(encoding="utf-8")


def boot_argv(config: SandboxConfig) -> list[str]:
    """The container's command: the boot process (toolbox/boot.py) with what it prepares as root
    before it becomes the toolbox as `user`."""
    settings = {
        "toolbox_parent": TOOLBOX_PARENT,
        "user": SANDBOX_USER,
        "observer": config.observer,
        "observer_user": OBSERVER_USER,
        "observer_uid": OBSERVER_UID,
        "observer_home": OBSERVER_HOME,
        "staging_root": STAGING_ROOT,
        "grant_script": grant_script() if config.agent_sudo else "",
    }
    return ["/usr/bin/python3", "-I", "-c", _boot_source(), json.dumps(settings)]


@lru_cache(maxsize=1)
def _toolbox_tar() -> bytes:
    buffer = io.BytesIO()
    parent = TOOLBOX_PARENT.removeprefix("/opt/")
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        # Folders first, root-owned: the agent (user `user`) must not add a module beside the
        # toolbox.
        for folder in (parent, f"{parent}/toolbox"):
            info = tarfile.TarInfo(folder)
            info.type = tarfile.DIRTYPE
            tar.addfile(_root_owned(info))
        for path in sorted(TOOLBOX_DIR.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            tar.add(
                path,
                arcname=f"{parent}/toolbox/{path.relative_to(TOOLBOX_DIR)}",
                filter=_root_owned,
            )
    return buffer.getvalue()


def _root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mode = 0o755 if info.isdir() else 0o644
    return info


def _user_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 1000
    info.uname = info.gname = SANDBOX_USER
    return info


class DockerSandbox(ToolboxSandboxMixin):
    """A sandbox in a Docker container."""

    backend = "docker"
    exec_over_toolbox = True
    """Run the harness's commands through the toolbox until the agent has had it (see `exec`);
    the benchmark turns it off to measure the engine's exec instead."""

    def __init__(self, config: SandboxConfig, snapshot: Snapshot | None = None):
        global _reaped
        self.config = config
        self.client = docker_client()
        if not _reaped:
            _reaped = True
            reap_orphans(self.client)
        image = snapshot.ref if snapshot else resolve_image(self.client, config.image)
        self.id = f"stateact-{uuid.uuid4().hex[:12]}"
        self.started_at = time.time()
        self._closed = False
        self.agent_has_run = False
        """Whether anything but the harness's own methods went through the toolbox (see exec)."""
        self.env = {
            "HOME": SANDBOX_HOME,
            "USER": SANDBOX_USER,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            **config.env,
        }
        self.container = self._create(image)
        register(self)
        try:
            # Attached before the start, so the toolbox's first line is never missed.
            channel = DockerExecChannel(
                self.client.api.attach_socket(self.container.id, params=ATTACH_PARAMS)
            )
            self.container.start()
            self.toolbox = self._start_toolbox(channel)
            self.disk_watch = DiskWatch(self.client.api, self.container, config.disk_limit_mb)
            self.disk_watch.start()
            self.call = self._noting_the_agent(self.disk_watch.guard(self.toolbox.call))
        except Exception as exc:
            self.close()
            from docker.errors import APIError

            if isinstance(exc, APIError):
                raise SandboxError(
                    f"the Docker engine could not start the sandbox: {exc.explanation or exc}."
                ) from None
            raise

    def _create(self, image: str):
        from docker.errors import APIError

        config = self.config
        try:
            return self.client.containers.create(
                image,
                command=boot_argv(self.config),
                name=self.id,
                init=True,
                # Root here, so a root exec (the setup's sudo steps) keeps the capabilities below;
                # the toolbox drops to `user` at once (toolbox/boot.py) and an exec as `user`
                # (every harness command) gets none of them.
                user="root",
                # The toolbox speaks over the container's own stdin and stdout; stdin closes when
                # the host's attachment does (detach=False is what sets StdinOnce), and the
                # toolbox then exits.
                stdin_open=True,
                detach=False,
                working_dir=SANDBOX_HOME,
                environment=self.env,
                network_mode=config.network_mode if config.network else "none",
                mem_limit=f"{config.memory_mb}m",
                memswap_limit=f"{config.memory_mb}m",
                nano_cpus=int(config.cpus * 1e9),
                pids_limit=config.pids_limit,
                cap_drop=["ALL"],
                cap_add=[
                    *("CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL"),
                    "DAC_READ_SEARCH",  # for the observer only (see toolbox/observer_exec.py)
                ],
                security_opt=security_options(config.agent_sudo),
                shm_size="512m",
                labels={LABEL: "1", OWNER_LABEL: owner_label()},
            )
        except APIError as exc:
            hint = (
                f" (with --network it uses the network {config.network_mode!r}: "
                "`host`, or a Docker network that exists)"
                if config.network
                else ""
            )
            raise SandboxError(
                f"the Docker engine refused to create the sandbox{hint}: {exc.explanation or exc}."
            ) from None

    def _start_toolbox(self, channel: DockerExecChannel) -> ToolboxClient:
        """Hand the boot process the toolbox's files and wait for its ready line."""
        files = _toolbox_tar()
        channel.send_line(str(len(files)).encode())
        channel.send_raw(files)
        client = ToolboxClient(channel, self.id)
        client.wait_ready(self.config.start_timeout_s)
        return client

    def _noting_the_agent(self, call):
        def noted(method: str, *, wait_s: float | None = None, **params) -> dict:
            if method not in HARNESS_METHODS:
                self.agent_has_run = True
            return call(method, wait_s=wait_s, **params)

        return noted

    def _check_limits(self) -> None:
        if getattr(self, "disk_watch", None) is not None:
            self.disk_watch.raise_if_exceeded()

    def exec(
        self, argv: list[str], timeout: float = 120.0, user: str = SANDBOX_USER
    ) -> tuple[int, str]:
        self._check_limits()
        if user == SANDBOX_USER and not self.agent_has_run and self.exec_over_toolbox:
            # Nothing of the agent's has run yet (the task's setup): the toolbox's own process
            # runner, in the same observer flavour, costs a few ms where an engine exec costs
            # 0.1-0.6 s and the engine's CPU. Once the agent has had the toolbox, the harness's
            # commands go through the engine again, in processes the agent never had a hand in.
            try:
                return exec_through_toolbox(self, argv, timeout)
            except SandboxError:
                with engine_errors("run a command in the sandbox"):
                    self.container.reload()  # a vanished container says so, as an exec would
                raise
        # The engine's exec has no timeout of its own; coreutils' timeout bounds it inside.
        # Only the harness execs (setup, getters, probes): always in the observer flavour.
        env = observer_env(self.env)
        command = observer_argv(argv)
        workdir = SANDBOX_HOME
        if user == "observer":
            # Another uid than the agent's, with a home of its own (no ~/.magic, ~/.sqliterc).
            env.update(HOME=OBSERVER_HOME, USER=OBSERVER_USER, LOGNAME=OBSERVER_USER)
            command, user, workdir = [*AS_OBSERVER, *command], "root", "/"
        elif user == "root":
            # Root holds CAP_DAC_READ_SEARCH for the observer's sake: it too never opens by handle.
            command = [*AS_OBSERVER[AS_OBSERVER.index("--") + 1 :], *command]
        wrapped = ["/usr/bin/timeout", "-k", "5", str(max(1, int(timeout))), *command]
        with engine_errors(f"run a command in the sandbox {self.id}"):
            result = self.container.exec_run(wrapped, user=user, workdir=workdir, environment=env)
        return result.exit_code, result.output.decode(errors="replace")

    def freeze_agent(self, end: bool = False) -> FrozenAgent:
        """Stop every process of the agent's uid; only the toolbox and the task's applications run
        on (`sandboxes/agent_stop.py`). Root runs it: the agent can neither see nor stop it."""
        toolbox = str(self.toolbox.hello.get("pid", ""))
        argv = ["/usr/bin/python3", "-I", "-c", FREEZE_LAUNCHER, "freeze", toolbox]
        code, output = self.exec([*argv, *(["--end"] if end else [])], timeout=60, user="root")
        try:
            return FrozenAgent.from_answer(parse_answer(code, output))
        except SandboxError as exc:
            # The root freezer could not even start: a process table the agent keeps full (a fork
            # bomb) leaves no room for a new process. The toolbox is already running and needs
            # none: its own kill(-1) as the agent's uid stops the same processes (it is the
            # sender, so it is left out), and with `end` their kill frees the table for the
            # observers. The agent cannot forge its answer (non-dumpable, its own stream).
            return self._freeze_by_toolbox(end, exc)

    def _freeze_by_toolbox(self, end: bool, root_failure: SandboxError) -> FrozenAgent:
        try:
            frozen = FrozenAgent.from_answer(asdict(run(self, ProcFreeze(end=end), wait_s=60)))
        except StateActError as exc:
            raise SandboxError(f"{root_failure} (and by the toolbox: {exc})") from None
        frozen.by_toolbox = True
        log.warning("sandbox %s: root's freezer could not start; the toolbox froze", self.id)
        if end:
            self._wait_for_room()
        return frozen

    def _wait_for_room(self, within_s: float = 10.0) -> None:
        """Until a process can be started again (the killed ones are reaped by the init process),
        so the observers' first command does not fail for a table that is emptying."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            if self.exec(["/bin/true"], timeout=5, user="root")[0] == 0:
                return
            time.sleep(0.2)

    def thaw_agent(self, frozen: FrozenAgent) -> None:
        if frozen.by_toolbox:  # the stopped processes may still fill the table
            run(self, ProcThaw(frozen=frozen.frozen), wait_s=60)
            return
        argv = ["/usr/bin/python3", "-I", "-c", FREEZE_LAUNCHER, "thaw", json.dumps(frozen.frozen)]
        code, output = self.exec(argv, timeout=60, user="root")
        parse_answer(code, output)

    def interactive_argv(self) -> list[str]:
        """A command line that opens an interactive shell in this sandbox (needs the docker CLI)."""
        return [
            "docker",
            "exec",
            "-it",
            "-u",
            SANDBOX_USER,
            "-w",
            SANDBOX_HOME,
            self.container.id,
            "bash",
        ]

    def copy_in(self, host_path: Path, sandbox_path: str) -> None:
        """Copy a host file or folder in, written with the user's rights.

        The engine unpacks an archive as root and resolves the target folder through links, so a
        link the agent planted (`~/Desktop -> /etc`) would take a root write anywhere. The archive
        goes into a fresh root-owned staging folder instead, and a copy run as the user moves it to
        its place: a planted link then leads only where the user could write anyway.
        """
        host_path = Path(host_path)
        if not host_path.exists():
            raise SandboxError(f"cannot copy {host_path} into the sandbox: it does not exist.")
        target = sandbox_parts(sandbox_path)
        if not target.name:
            raise SandboxError(
                f"cannot copy {host_path} onto {sandbox_path}; name a file or folder."
            )
        staging = f"{STAGING_ROOT}/{uuid.uuid4().hex}"
        code, output = self.exec(["install", "-d", "-m", "755", staging], user="root")
        if code != 0:
            raise SandboxError(f"cannot stage a copy in the sandbox: {output.strip()}")
        try:
            buffer = io.BytesIO()
            with tarfile.open(fileobj=buffer, mode="w") as tar:
                tar.add(host_path, arcname="item", filter=_user_owned)
            self.container.put_archive(staging, buffer.getvalue())
            place = (
                'mkdir -p -- "$(dirname -- "$2")" && '
                'cp -RT --no-preserve=ownership --preserve=mode,timestamps -- "$1" "$2"'
            )
            code, output = self.exec(["sh", "-c", place, "sh", f"{staging}/item", str(target)])
            if code != 0:
                raise SandboxError(
                    f"cannot copy {host_path.name} to {target} in the sandbox: {output.strip()}"
                )
        finally:
            self.exec(["rm", "-rf", "--", staging], user="root")

    def copy_out(self, sandbox_path: str, host_path: Path, max_bytes: int | None = None) -> None:
        """Stream `sandbox_path` to `host_path` under a byte cap (default COPY_LIMIT_BYTES), holes
        kept as holes. A link at the path is read as the agent would read it: resolved inside the
        sandbox, and only when user `user` may read its target. A FIFO, socket or device is
        refused with a sentence, since it holds no file content."""
        self._check_limits()
        sandbox_path = str(sandbox_parts(sandbox_path))
        cap = COPY_LIMIT_BYTES if max_bytes is None else max_bytes
        stream, stat = self._archive(sandbox_path)
        if stat.get("mode", 0) & GO_MODE_SYMLINK:
            stream.close()
            stream, stat = self._archive(self._resolve_link(sandbox_path))
        kind = special_kind(stat.get("mode", 0))
        if kind is not None:
            stream.close()
            raise SandboxError(f"{sandbox_path} is a {kind}, not a regular file or folder.")
        if not stat.get("mode", 0) & GO_MODE_DIR and stat.get("size", 0) > cap:
            stream.close()
            raise FileLimitError(
                f"{sandbox_path} has {stat['size']:,} bytes, more than the limit of "
                f"{cap // MiB:,} MiB the harness copies out of a sandbox."
            )
        host_path = host_target(host_path)
        host_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with tarfile.open(fileobj=ChunkReader(stream), mode="r|") as tar:
                extract_as(tar, host_path, cap, sandbox_path)
        finally:
            stream.close()

    def _archive(self, sandbox_path: str):
        from docker.errors import NotFound

        try:
            return self.container.get_archive(sandbox_path, chunk_size=ARCHIVE_CHUNK)
        except NotFound:
            raise FileNotFoundError(sandbox_path) from None

    def _resolve_link(self, sandbox_path: str) -> str:
        """The file a link leads to, resolved in the sandbox as user `user` would open it."""
        script = 'p=$(realpath -e -- "$1") && test -r "$p" && printf %s "$p"'
        code, output = self.exec(["sh", "-c", script, "sh", sandbox_path], timeout=20)
        if code != 0 or not output.startswith("/"):
            raise FileNotFoundError(sandbox_path)  # dangling, a loop, or not the agent's to read
        return output

    def snapshot(self) -> Snapshot:
        return self._commit("stateact-snapshot", owner_label())

    def persist(self, run_dir: Path, name: str) -> Snapshot:
        # Owned by the run directory rather than this process: the reaper keeps it until the run
        # directory is gone or has a result.
        return self._commit(PERSISTED_REPOSITORY, f"run:{Path(run_dir).resolve()}")

    def _commit(self, repository: str, owner: str) -> Snapshot:
        with engine_errors(f"freeze the sandbox {self.id} into a snapshot"):
            # A commit writes the layer out in full (sparse files too): measure it first.
            self.disk_watch.check()
            image = self.container.commit(
                repository=repository,
                tag=uuid.uuid4().hex[:12],
                conf={"Labels": {LABEL: "1", OWNER_LABEL: owner}},
            )
        return Snapshot(backend=self.backend, ref=image.id, created_at=time.time())

    def discard_snapshot(self, snapshot: Snapshot) -> None:
        if not discard_snapshot(snapshot.ref):
            log.warning("could not remove snapshot %s yet", snapshot.ref[:19])

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        unregister(self)
        if getattr(self, "disk_watch", None):
            self.disk_watch.stop()
        if getattr(self, "toolbox", None):
            self.toolbox.channel.close()
        from docker.errors import APIError, NotFound

        try:
            self.container.remove(force=True)
        except NotFound:
            pass
        except APIError as exc:
            log.warning("could not remove container %s: %s", self.id, exc)
