"""The host side of the OSWorld-V2 bridge: one process of the user's checkout per task, spoken to in
JSON lines (`bridge_main.py` is the other side).

The benchmark's code is trusted as it is in its own harness (it runs on the host, with the user's
credentials for its judges), but it never runs in StateAct's process: its dependencies and
interpreter are the checkout's own (`--osworld2-python`, default the checkout's `.venv`), and a
crash of it is an evaluation error of the task, not of the suite.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.kernel.core import StateActError

BRIDGE_SCRIPT = Path(__file__).with_name("bridge_main.py")
LOAD_TIMEOUT_S = 120.0
SETUP_TIMEOUT_S = 1800.0
"""OSWorld 2.0's setups upload large assets and seed websites: allow half an hour."""
EVALUATE_TIMEOUT_S = 1800.0
ASK_TIMEOUT_S = 300.0
ENV_PREFIXES = {"judge": "OSWORLD_EVAL_MODEL", "user": "OSWORLD_USER_SIM"}
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
URL_VARIABLES = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
DEFAULT_API_URLS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com"}


class Osworld2Config(BaseModel):
    """Where the user's OSWorld-V2 lives and which models judge and play the user."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    checkout: Path
    """The user's clone of xlang-ai/OSWorld-V2 (holds `desktop_env/`)."""
    data: Path | None = None
    """The downloaded task data (the gated `osworld_v2_tasks` dataset): `task_*.py` modules."""
    python: Path | None = None
    """The interpreter the checkout is installed in; None: `CHECKOUT/.venv/bin/python`, else the
    harness's own."""
    judge_model: str | None = None
    """PROVIDER/NAME of the judges' model (OSWORLD_EVAL_MODEL_*); None leaves the checkout's
    own settings."""
    user_model: str | None = None
    """PROVIDER/NAME of the simulated user (OSWORLD_USER_SIM_*); None: the judge's."""
    base_url: str | None = None
    """Endpoint for both models (an OpenAI-compatible server); None: the provider's variable."""
    judge_max_tokens: int | None = Field(None, gt=0)
    """OSWORLD_EVAL_MODEL_MAX_OUTPUT_TOKENS; a task's own limit still wins, as upstream."""
    services_file: Path | None = None
    """A JSON file naming the services to start for a suite (`tasks.osworld2.services`)."""
    websites: Path | None = None
    """The user's checkout of the mock websites (Task-Web/OSWorld-web), built and started."""
    gitlab: Path | None = None
    """The user's checkout of the GitLab service (Task-Web/gitlab), built and started."""
    host_suffix: str | None = None
    """WEBSITE_HOST_SUFFIX the started services answer under; None: the services file's, else
    `osworld2.test`."""
    build_network: Literal["none", "host"] = "none"
    """The network the builds from the websites' and GitLab's checkouts run with (`host` lets
    their Dockerfiles fetch packages); a compose file's `build.network` and a services file's
    `build_network` say their own."""
    services_proxy: str | None = None
    """The loopback proxy through which the benchmark's host-side code reaches the services
    StateAct started (set while they run; recorded in each run's config.json)."""
    checkpoint_eval_mode: Literal["off", "inline"] = "off"
    """`inline`: the benchmark's evaluation also runs mid-phase at `checkpoint_steps`, as its
    launcher does; the verdicts are recorded, the phase's score stays its final evaluation."""
    checkpoint_steps: list[int] = Field(default_factory=list)
    """Main-agent turns after which an inline evaluation runs (OSWorld 2.0's launcher: 150, 300)."""

    @property
    def starts_services(self) -> bool:
        return any(p is not None for p in (self.services_file, self.websites, self.gitlab))

    def interpreter(self) -> str:
        if self.python is not None:
            return str(self.python)
        venv = self.checkout / ".venv" / "bin" / "python"
        return str(venv) if venv.exists() else sys.executable

    def environment(self) -> dict[str, str]:
        """The bridge's environment: the harness's, plus the benchmark's model settings."""
        env = dict(os.environ)
        for role, spec in (("judge", self.judge_model), ("user", self.user_model)):
            if spec:
                env.update(model_variables(ENV_PREFIXES[role], spec, self.base_url))
        if self.judge_max_tokens:
            env["OSWORLD_EVAL_MODEL_MAX_OUTPUT_TOKENS"] = str(self.judge_max_tokens)
        if self.host_suffix:  # the services StateAct started answer under it
            env["WEBSITE_HOST_SUFFIX"] = self.host_suffix
        if self.services_proxy:
            env.update(proxy_variables(self.services_proxy, self.model_hosts()))
        return env

    def model_hosts(self) -> list[str]:
        """The judge's and simulated user's API hosts: reached directly, not through the
        services proxy (which reaches only the services)."""
        hosts = []
        for spec in (self.judge_model, self.user_model):
            provider = (spec or "").partition("/")[0]
            url = self.base_url or os.environ.get(URL_VARIABLES.get(provider, ""), "")
            url = url or DEFAULT_API_URLS.get(provider, "")
            if url:
                hosts.append(urllib.parse.urlsplit(url).hostname or "")
        return [host for host in dict.fromkeys(hosts) if host]


def proxy_variables(proxy: str, direct_hosts: list[str]) -> dict[str, str]:
    """HTTP(S)_PROXY for the services proxy, in both spellings; NO_PROXY keeps the guest server
    (127.0.0.1), the model APIs and whatever the user's own NO_PROXY named direct."""
    own = os.environ.get("NO_PROXY") or os.environ.get("no_proxy") or ""
    direct = ["127.0.0.1", "localhost", *direct_hosts, *own.split(",")]
    bypass = ",".join(dict.fromkeys(h.strip() for h in direct if h.strip()))
    names = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
    return {**dict.fromkeys(names, proxy), "NO_PROXY": bypass, "no_proxy": bypass}


def model_variables(prefix: str, spec: str, base_url: str | None) -> dict[str, str]:
    """OSWorld 2.0's variables for one model: provider, name, endpoint and the NAME of the key's
    variable (the key itself stays in that variable, so no record of the bridge holds it)."""
    provider, sep, name = spec.partition("/")
    if not sep or provider not in KEY_VARIABLES or not name:
        raise StateActError(
            f"the model {spec!r} for OSWorld 2.0's {prefix} must be anthropic/NAME or openai/NAME"
        )
    variables = {
        f"{prefix}_PROVIDER": provider,
        f"{prefix}_NAME" if prefix.endswith("MODEL") else f"{prefix}_MODEL": name,
        f"{prefix}_API_KEY_ENV": KEY_VARIABLES[provider],
    }
    url = base_url or os.environ.get(URL_VARIABLES[provider])
    if url:
        variables[f"{prefix}_BASE_URL"] = url
    return variables


@dataclass
class Bridge:
    """One running bridge process; `request` sends an operation and waits for its answer."""

    config: Osworld2Config
    log_path: Path
    process: subprocess.Popen | None = None
    answers: queue.Queue = field(default_factory=queue.Queue)
    log_file: IO | None = None

    def start(self) -> Bridge:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_file = self.log_path.open("ab")
        try:
            self.process = subprocess.Popen(
                [self.config.interpreter(), str(BRIDGE_SCRIPT), str(self.config.checkout)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.log_file,
                env=self.config.environment(),
                cwd=str(self.config.checkout),
            )
        except OSError as exc:
            raise StateActError(f"the OSWorld-V2 interpreter could not start: {exc}") from None
        threading.Thread(target=self._read, daemon=True).start()
        return self

    def _read(self) -> None:
        for line in self.process.stdout:
            self.answers.put(line)
        self.answers.put(None)

    def request(self, op: str, timeout: float, **params) -> dict:
        if self.process is None or self.process.poll() is not None:
            raise StateActError(f"the OSWorld-V2 bridge is not running ({self._tail()})")
        line = json.dumps({"op": op, **params}) + "\n"
        try:
            self.process.stdin.write(line.encode())
            self.process.stdin.flush()
            raw = self.answers.get(timeout=timeout)
        except (BrokenPipeError, OSError) as exc:
            raise StateActError(f"the OSWorld-V2 bridge stopped: {exc} ({self._tail()})") from None
        except queue.Empty:
            self.close()
            raise StateActError(f"OSWorld-V2's {op} took longer than {timeout:.0f} s") from None
        if raw is None:
            raise StateActError(f"the OSWorld-V2 bridge exited during {op} ({self._tail()})")
        answer = json.loads(raw)
        if not answer.pop("ok", False):
            raise StateActError(f"OSWorld-V2's {op} failed: {answer.get('error')}")
        return answer

    def _tail(self) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "no log"
        return (text[-1] if text else "no output")[-300:]

    def close(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            try:
                self.process.stdin.write(b'{"op": "close"}\n')
                self.process.stdin.flush()
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        if self.log_file is not None:
            self.log_file.close()
        self.process = None

    def __enter__(self) -> Bridge:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.close()
