"""One service of a compose file as a `ServiceSpec` (and the sites its Caddy labels declare): each
key is read, dropped with a note, or refused with a sentence naming the file, service and key
(`compose.py` says which and why)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from .base import SandboxError
from .compose_values import (
    command_list,
    container_port,
    key_values,
    memory_mb,
    read_env_file,
    restart_policy,
)
from .service_routes import LabelError, Site, caddy_sites
from .service_spec import ServiceLimits, ServiceRuntime, ServiceSpec

CADDY_IMAGE = "lucaslorentz/caddy-docker-proxy"
"""Reads the stack's labels through the Docker socket; StateAct's front proxy replaces it."""
READ = {
    *("build", "image", "environment", "env_file", "command", "entrypoint", "expose", "ports"),
    *("networks", "labels", "depends_on", "restart", "user", "working_dir", "tmpfs", "deploy"),
    *("mem_limit", "cpus", "pids_limit", "container_name", "hostname", "volumes", "init"),
    *("shm_size", "profiles", "healthcheck"),
}
DROPPED = {
    "stop_signal": "StateAct removes the stack's containers at once",
    "stop_grace_period": "StateAct removes the stack's containers at once",
    "logging": "the engine's default log driver is used",
    "tty": "nothing attaches to a service",
    "stdin_open": "nothing attaches to a service",
    "pull_policy": "StateAct pulls nothing",
    "memswap_limit": "a service gets no swap beyond its memory limit",
    "mem_reservation": "only limits are set",
}
REFUSED = {
    "privileged": "StateAct starts no privileged container",
    "cap_add": "StateAct adds no capability to a service",
    "devices": "StateAct passes no host device to a service",
    "network_mode": "every service joins the stack's private network",
    "pid": "it would share the host's processes",
    "ipc": "it would share an IPC namespace",
    "userns_mode": "it would leave the engine's user namespace setting",
    "cgroup_parent": "it would place the service outside the engine's cgroups",
    "security_opt": "StateAct keeps the engine's security profiles",
    "sysctls": "StateAct sets no kernel parameter for a service",
    "extra_hosts": "names resolve through the stack's network only",
    "dns": "names resolve through the stack's network only",
    "secrets": "StateAct passes no secret files",
    "configs": "StateAct passes no config files",
    "extends": "StateAct reads each service as written",
    "volumes_from": "StateAct mounts no other container's volumes",
    "links": "services reach each other by name on the stack's network",
    "external_links": "services reach each other by name on the stack's network",
    "ulimits": "the limits StateAct sets are memory, CPUs and processes",
}
BUILD_READ = {"context", "dockerfile", "args", "target", "network"}
BUILD_DROPPED = {"cache_from", "cache_to", "labels", "tags", "no_cache", "pull"}


class ComposeService:
    """Reads one service's mapping; every failure is a SandboxError naming file, service, key."""

    def __init__(self, name: str, body, file: Path, variables: Mapping[str, str], notes: list):
        self.name = str(name)
        self.file = file
        self.variables = variables
        self.notes = notes
        if not isinstance(body, dict):
            self._refuse("", "a service must be a mapping")
        self.body = body

    def _refuse(self, key: str, why: str):
        what = f"the key {key!r} of the service {self.name}" if key else f"the service {self.name}"
        raise SandboxError(f"{self.file}: {what} is not supported: {why}.")

    def _note(self, text: str) -> None:
        self.notes.append(f"{self.file}: the service {self.name}: {text}")

    def replaced(self) -> bool:
        """caddy-docker-proxy: StateAct's front proxy stands in for it."""
        return str(self.body.get("image", "")).startswith(CADDY_IMAGE)

    def started(self) -> bool:
        if self.replaced():
            self._note(
                "replaced by StateAct's front proxy (its ports, volumes, including the Docker "
                "engine's socket, and settings are not used)"
            )
            return False
        if self.body.get("profiles"):
            self._note("not started: it belongs to profiles, which Compose leaves out by default")
            return False
        return True

    def dependencies(self) -> list[str]:
        value = self.body.get("depends_on") or []
        if isinstance(value, dict):
            if any(isinstance(v, dict) and v.get("condition") for v in value.values()):
                self._note("depends_on conditions are not waited for (only the start order)")
            return [str(k) for k in value]
        if isinstance(value, list):
            return [str(v) for v in value]
        self._refuse("depends_on", "it must be a list or a mapping")

    def read(self, build_network: str) -> tuple[ServiceSpec, list[Site]]:
        """The service's spec and sites; `build_network` unless its build names one."""
        for key in self.body:
            if key in REFUSED:
                self._refuse(key, REFUSED[key])
            if key in DROPPED:
                self._note(f"{key} dropped: {DROPPED[key]}")
            elif key not in READ and not str(key).startswith("x-"):
                self._refuse(key, "StateAct's compose reader does not know it")
        try:
            port = self._port()
            labels = key_values(self.body.get("labels"), "labels", self.variables)
            sites = caddy_sites(self.name, labels, port, self.notes)
            fields = {
                **self._source(build_network),
                "name": self.name,
                "hosts": self._aliases(),
                "port": port,
                "health_path": None,
                "environment": self._environment(),
                "command": command_list(self.body.get("command"), "command"),
                "limits": self._limits(),
                "runtime": self._runtime(),
            }
            return ServiceSpec(**fields), sites
        except (ValueError, LabelError) as exc:
            if isinstance(exc, ValidationError):
                exc = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise SandboxError(f"{self.file}: the service {self.name}: {exc}.") from None

    def _source(self, build_network: str) -> dict:
        build, image = self.body.get("build"), self.body.get("image")
        if build is None:
            if not image:
                self._refuse("", "it has neither build nor image")
            return {"image": str(image)}
        if isinstance(build, str):
            build = {"context": build}
        if not isinstance(build, dict):
            self._refuse("build", "it must be a folder or a mapping")
        for key in build:
            if key in BUILD_DROPPED:
                self._note(f"build.{key} dropped: it does not change what is built")
            elif key not in BUILD_READ:
                self._refuse(f"build.{key}", "StateAct builds from a context and a Dockerfile")
        context = str(build.get("context", "."))
        if "://" in context or context.startswith("git@"):
            self._refuse("build.context", "StateAct builds only from folders of your checkout")
        folder = (self.file.parent / context).resolve()
        dockerfile = str(build.get("dockerfile", "Dockerfile"))
        if not (folder / dockerfile).resolve().is_relative_to(folder):
            self._refuse("build.dockerfile", "the Dockerfile must be inside the build context")
        network = str(build.get("network", build_network))
        if network not in ("none", "host", "default"):
            self._refuse("build.network", "a build runs with network none or host")
        return {
            "context": folder,
            "dockerfile": dockerfile,
            "build_args": key_values(build.get("args"), "build.args", self.variables),
            "target": build.get("target"),
            "build_network": "host" if network == "default" else network,
        }

    def _port(self) -> int:
        exposed = list(self.body.get("expose") or [])
        published = list(self.body.get("ports") or [])
        if published:
            self._note(
                "its published ports are not published: services are reached on the stack's "
                "network, and from the host through StateAct's services proxy"
            )
        ports = [container_port(p) for p in [*exposed, *published]]
        return ports[0] if ports else 80

    def _aliases(self) -> list[str]:
        """Further names on the network: container_name, hostname, the networks' aliases."""
        names = [self.body.get(key) for key in ("container_name", "hostname")]
        networks = self.body.get("networks") or []
        if isinstance(networks, dict):
            for network, settings in networks.items():
                extra = set(settings or {}) - {"aliases"}
                if extra:
                    self._refuse(f"networks.{network}.{sorted(extra)[0]}", "only aliases apply")
                names += list((settings or {}).get("aliases") or [])
        elif not isinstance(networks, list):
            self._refuse("networks", "it must be a list or a mapping")
        return [str(n).lower() for n in dict.fromkeys(names) if n and str(n) != self.name]

    def _environment(self) -> dict[str, str]:
        """env_file's values, then environment's over them."""
        found: dict[str, str] = {}
        files = self.body.get("env_file") or []
        for entry in files if isinstance(files, list) else [files]:
            path = entry.get("path") if isinstance(entry, dict) else entry
            required = entry.get("required", True) if isinstance(entry, dict) else True
            target = self.file.parent / str(path)
            if target.is_file() or required:
                found.update(read_env_file(target))
        found.update(key_values(self.body.get("environment"), "environment", self.variables))
        return found

    def _limits(self) -> ServiceLimits:
        """mem_limit/cpus/pids_limit, with deploy.resources.limits over them."""
        deploy = self.body.get("deploy") or {}
        if not isinstance(deploy, dict):
            self._refuse("deploy", "it must be a mapping")
        if int(deploy.get("replicas", 1)) != 1:
            self._refuse("deploy.replicas", "StateAct starts one container per service")
        for key in sorted(set(deploy) - {"resources", "replicas"}):
            self._note(f"deploy.{key} dropped: it is Docker Swarm's")
        limits = (deploy.get("resources") or {}).get("limits") or {}
        memory = limits.get("memory", self.body.get("mem_limit"))
        cpus = limits.get("cpus", self.body.get("cpus"))
        pids = limits.get("pids", self.body.get("pids_limit"))
        values = {}
        if memory is not None:
            values["memory_mb"] = memory_mb(memory)
        if cpus is not None:
            values["cpus"] = float(cpus)
        if pids is not None and int(pids) > 0:
            values["pids"] = int(pids)
        elif pids is not None:
            self._note(f"an unlimited process count ({pids}) is not set; the default applies")
        return ServiceLimits(**values)

    def _runtime(self) -> ServiceRuntime:
        tmpfs = self.body.get("tmpfs") or []
        entries = tmpfs if isinstance(tmpfs, list) else [tmpfs]
        mounts = dict(str(entry).partition(":")[::2] for entry in entries)  # path -> options
        mounts.update(self._volumes())
        if self.body.get("healthcheck"):
            self._note("healthcheck not run: StateAct probes the sites through its front proxy")
        restart = self.body.get("restart")
        return ServiceRuntime(
            entrypoint=command_list(self.body.get("entrypoint"), "entrypoint"),
            user=_optional_text(self.body.get("user")),
            working_dir=_optional_text(self.body.get("working_dir")),
            tmpfs=mounts,
            restart=restart_policy(restart) if restart is not None else None,
            init=self.body.get("init"),
            shm_size=_optional_text(self.body.get("shm_size")),
        )

    def _volumes(self) -> dict[str, str]:
        """tmpfs mounts; named volumes dropped with a note; host paths and the socket refused."""
        mounts = {}
        for entry in self.body.get("volumes") or []:
            if isinstance(entry, dict):
                kind, source = entry.get("type", "volume"), entry.get("source")
                target = entry.get("target")
            else:
                parts = str(entry).split(":")
                source, target = (parts[0], parts[1]) if len(parts) > 1 else (None, parts[0])
                kind = "bind" if source and source[:1] in "/.~" else "volume"
            if source and "docker.sock" in str(source):
                self._refuse("volumes", "StateAct never mounts the Docker engine's socket")
            if kind == "tmpfs":
                mounts[str(target)] = ""
            elif kind == "bind":
                self._refuse("volumes", f"it mounts the host path {source}")
            elif kind != "volume":
                self._refuse("volumes", f"the mount type {kind} is not supported")
            elif source:
                self._note(
                    f"the named volume {source} is dropped ({target} lives in the container)"
                )
        return mounts


def _optional_text(value) -> str | None:
    return None if value is None else str(value)
