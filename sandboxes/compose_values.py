"""The values inside a compose file as Docker Compose reads them: `${VAR}` interpolation, `.env`
files, environment and label lists, ports, memory sizes and restart policies. Each reader raises
ValueError with the reason; `compose.py` names the file, service and key around it."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path

VARIABLE = re.compile(
    r"\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))"
)
SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)
SIZE_FACTORS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
RESTART = re.compile(r"^(no|always|unless-stopped|on-failure)(?::(\d+))?$")


def interpolate(value, variables: Mapping[str, str], missing: set[str]):
    """Every string inside `value` (lists and mappings walked; keys kept) with `$VAR`, `${VAR}`,
    `${VAR:-default}`, `${VAR-default}`, `${VAR:+other}`, `${VAR+other}`, `${VAR:?error}` and
    `$$` resolved. An unset variable without a default reads as "" and is added to `missing`."""
    if isinstance(value, dict):
        return {key: interpolate(item, variables, missing) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate(item, variables, missing) for item in value]
    if not isinstance(value, str):
        return value
    return _substitute(value, variables, missing)


def _substitute(text: str, variables: Mapping[str, str], missing: set[str]) -> str:
    out, position = [], 0
    while (found := VARIABLE.search(text, position)) is not None:
        out.append(text[position : found.start()])
        dollar, name, operator, argument, bare = found.groups()
        if dollar:
            out.append("$")
            position = found.end()
            continue
        if bare:
            name, operator = bare, None
        # a default may hold `${…}` of its own: take the braces up to the one that closes it
        end = found.end()
        if operator is not None:
            argument, end = _argument(text, found.start(2) + len(name) + len(operator))
        out.append(_resolve(name, operator, argument, variables, missing))
        position = end
    out.append(text[position:])
    return "".join(out)


def _argument(text: str, start: int) -> tuple[str, int]:
    """The text of a `${VAR:-…}` argument from `start` to its closing brace (nesting counted)."""
    depth, index = 1, start
    while index < len(text):
        if text.startswith("${", index):
            depth, index = depth + 1, index + 2
            continue
        if text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[start:index], index + 1
        index += 1
    raise ValueError(f"the variable in {text!r} has no closing brace")


def _resolve(name, operator, argument, variables, missing) -> str:
    value = variables.get(name)
    empty = value is None or (operator is not None and operator.startswith(":") and value == "")
    if operator in (":-", "-"):
        return _substitute(argument, variables, missing) if empty else value
    if operator in (":+", "+"):
        return "" if empty else _substitute(argument, variables, missing)
    if operator in (":?", "?"):
        if empty:
            raise ValueError(f"the variable {name} must be set: {argument or 'no message'}")
        return value
    if value is None:
        missing.add(name)
        return ""
    return value


def read_env_file(path: Path) -> dict[str, str]:
    """`KEY=VALUE` lines (`export`, quotes and comments as Compose reads them)."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    found = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.removeprefix("export ").partition("=")
        key = key.strip()
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", key):
            raise ValueError(f"line {number} of {path} is not KEY=VALUE")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        found[key] = value
    return found


def key_values(value, what: str, variables: Mapping[str, str]) -> dict[str, str]:
    """A compose mapping or `KEY=VALUE` list (environment, labels, build args) as strings; a bare
    `KEY` takes the variable of that name, or is left out when it has none."""
    if value is None:
        return {}
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = []
        for entry in value:
            key, sep, item = str(entry).partition("=")
            items.append((key, item if sep else None))
    else:
        raise ValueError(f"{what} must be a mapping or a list")
    found = {}
    for key, item in items:
        if item is None:
            item = variables.get(str(key))
            if item is None:
                continue
        found[str(key)] = _text(item)
    return found


def _text(item) -> str:
    if isinstance(item, bool):
        return "true" if item else "false"
    return str(item)


def command_list(value, what: str) -> list[str] | None:
    """A command or entrypoint: a list as is, a string split as a shell would split its words."""
    if value is None:
        return None
    if isinstance(value, str):
        return shlex.split(value)
    if isinstance(value, list):
        return [str(part) for part in value]
    raise ValueError(f"{what} must be a string or a list")


def container_port(entry) -> int:
    """The container's side of an `expose` or `ports` entry (`8000`, `"80:80"`,
    `"127.0.0.1:8080:80/tcp"`, `"3000-3001"`, `{target: 80}`)."""
    if isinstance(entry, dict):
        entry = entry.get("target")
    text = str(entry).rsplit(":", 1)[-1].split("/", 1)[0].split("-", 1)[0].strip()
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"{entry!r} does not name a port")
    return int(text)


def memory_mb(value) -> int:
    """A Compose memory size (`512m`, `2g`, `1.5GB`, bytes as a number) in MiB, rounded up."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        size = float(value)
    else:
        found = SIZE.match(str(value))
        if not found:
            raise ValueError(f"{value!r} is not a memory size")
        size = float(found.group(1)) * SIZE_FACTORS[found.group(2).lower()]
    megabytes = -(-int(size) // (1 << 20))
    if megabytes < 6:
        raise ValueError(f"{value!r} is below the engine's 6 MiB minimum")
    return megabytes


def restart_policy(value) -> dict | None:
    """`no`, `always`, `unless-stopped`, `on-failure[:N]` as the engine's restart policy."""
    found = RESTART.match(str(value).strip())
    if not found:
        raise ValueError(f"{value!r} is not a restart policy")
    name, retries = found.groups()
    if name == "no":
        return None
    policy = {"Name": name}
    if retries:
        policy["MaximumRetryCount"] = int(retries)
    return policy
