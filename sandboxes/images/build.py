"""Sandbox images built with no container registry.

`base` starts from a debootstrap tarball imported into Docker, then a Dockerfile layer adds Python's
document libraries; `desktop` builds on `base` with LibreOffice, Xvfb, openbox, Chromium and
Playwright; `osworld2` builds on `desktop` with OSWorld 2.0's applications that Debian has
(FreeCAD, Blender, KiCad, MuseScore 3, Shotcut, OpenBoard, Evince). Every image is tagged
`stateact-<name>:<hash12>`, where the hash covers all of its inputs (and its parent's tag), so an
image is rebuilt only when its definition changes; it is also tagged `:latest`.

pip inside `docker build` cannot reach PyPI, so the pinned wheels are downloaded on the host and
copied into the build context.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.kernel.core import StateActError
from sandboxes.images import bundles
from sandboxes.images.bundles import read_list

IMAGE_NAMES = ("base", "desktop", "osworld2")
"""Every image, each after the one it builds on."""
PARENTS = {"desktop": "base", "osworld2": "desktop"}
"""The image each one is built FROM (its Dockerfile's `BASE` build argument)."""
DEFAULT_IMAGES = ("base", "desktop")
"""What `stateact image build` makes when no name is given; `osworld2` (several GB more) only on
request."""
DEBIAN_SUITE = "bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
DEFAULT_SECURITY_MIRROR = "http://deb.debian.org/debian-security"
IMAGE_PYTHON = "3.11"  # bookworm's python3; the wheels are downloaded for it
RECIPE_VERSION = "2"  # bump when this module changes how an image is built
DEFINITIONS_ENV = "STATEACT_IMAGES_DIR"
MIRROR_ENV = "STATEACT_DEBIAN_MIRROR"
SECURITY_MIRROR_ENV = "STATEACT_SECURITY_MIRROR"
ROOTFS_REPO = "stateact-rootfs"
SOURCE_WHEELS = "source-wheels.txt"
NPM_BUNDLE = "npm.txt"
ENGINE_FIX = "start it with `bash .ci/install-engine.sh`"

Log = Callable[[str], None]


def definitions_dir(override: Path | str | None = None) -> Path:
    """Where the image definitions live: the argument, `$STATEACT_IMAGES_DIR`, or beside this
    file."""
    chosen = override or os.environ.get(DEFINITIONS_ENV) or Path(__file__).parent
    path = Path(chosen)
    if not path.is_dir():
        raise StateActError(f"the image definitions directory {path} does not exist")
    return path


def cache_dir() -> Path:
    """`$XDG_CACHE_HOME/stateact` (default `~/.cache/stateact`), holding rootfs tarballs and
    wheels."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    path = Path(root) / "stateact"
    path.mkdir(parents=True, exist_ok=True)
    return path


def debian_mirror() -> str:
    """The Debian mirror the host's apt uses for the suite (`$STATEACT_DEBIAN_MIRROR` overrides)."""
    if os.environ.get(MIRROR_ENV):
        return os.environ[MIRROR_ENV].rstrip("/")
    return host_apt_uri(DEBIAN_SUITE) or DEFAULT_MIRROR


def security_mirror() -> str:
    """The host's mirror for `<suite>-security` (`$STATEACT_SECURITY_MIRROR` overrides)."""
    if os.environ.get(SECURITY_MIRROR_ENV):
        return os.environ[SECURITY_MIRROR_ENV].rstrip("/")
    return host_apt_uri(f"{DEBIAN_SUITE}-security") or DEFAULT_SECURITY_MIRROR


def host_apt_uri(suite: str, apt_dir: Path = Path("/etc/apt")) -> str | None:
    """The first URI the host's apt sources (deb822 or one-line) give for `suite`, if any."""
    deb822 = apt_dir / "sources.list.d" / "debian.sources"
    if deb822.is_file():
        for stanza in re.split(r"\n\s*\n", deb822.read_text()):
            uris = re.search(r"^URIs:\s*(\S+)", stanza, re.M)
            suites = re.search(r"^Suites:\s*(.+)$", stanza, re.M)
            if uris and suites and suite in suites.group(1).split():
                return uris.group(1).rstrip("/")
    one_line = apt_dir / "sources.list"
    if one_line.is_file():
        for line in one_line.read_text().splitlines():
            match = re.match(r"\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", line)
            if match and match.group(2) == suite:
                return match.group(1).rstrip("/")
    return None


def machine_arch() -> str:
    """The CPU architecture the images are built for, as wheel tags spell it."""
    arch = platform.machine()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)


def _check_name(name: str) -> None:
    if name not in IMAGE_NAMES:
        raise StateActError(f"unknown image {name!r}; choose one of {', '.join(IMAGE_NAMES)}")


# What an image declares about itself for the dry run (sandboxes/images/apps.py): not built into
# the image, so editing it neither changes the image's hash nor rebuilds it.
DECLARATION_FILES = {"osworld-apps.txt", "programs.txt"}


def _definition_files(directory: Path) -> list[Path]:
    files = [p for p in directory.rglob("*") if p.is_file() and not p.name.startswith(".")]
    files = [p for p in files if p.name not in DECLARATION_FILES]
    return sorted(p for p in files if "__pycache__" not in p.parts and not p.name.endswith("~"))


def _hash_parts(parts: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()[:12]


def input_hash(name: str, definitions: Path | str | None = None) -> str:
    """A 12-digit hash of everything that goes into image `name` (files, suite, mirror, base
    tag)."""
    _check_name(name)
    root = definitions_dir(definitions)
    image_dir = root / name
    if not (image_dir / "Dockerfile").is_file():
        raise StateActError(f"image {name!r} has no Dockerfile in {image_dir}")
    parts = [RECIPE_VERSION, DEBIAN_SUITE, debian_mirror(), security_mirror(), machine_arch()]
    parts.append(IMAGE_PYTHON)
    blobs = [p.encode() for p in parts]
    for path in _definition_files(image_dir):
        blobs += [path.relative_to(image_dir).as_posix().encode(), path.read_bytes()]
    if name in PARENTS:  # a new parent is a new image
        blobs.append(image_ref(PARENTS[name], root).encode())
    return _hash_parts(blobs)


def image_ref(name: str, definitions: Path | str | None = None) -> str:
    """`stateact-<name>:<hash12>` for the current definitions; hashes files, never calls Docker."""
    return f"stateact-{name}:{input_hash(name, definitions)}"


def docker_client():
    """A Docker SDK client for a running engine, or a StateActError naming the fix."""
    try:
        import docker

        client = docker.from_env(timeout=600)
        client.ping()
    except Exception as exc:  # the SDK raises several types for "no engine"
        raise StateActError(f"the Docker engine is not running; {ENGINE_FIX}") from exc
    return client


def image_exists(client, name: str, definitions: Path | str | None = None) -> bool:
    """Whether image `name` is built for the current definitions."""
    import docker.errors

    try:
        client.images.get(image_ref(name, definitions))
    except docker.errors.ImageNotFound:
        return False
    return True


def image_size(client, ref: str) -> int | None:
    """The image's size in bytes, or None when it is not built."""
    import docker.errors

    try:
        return int(client.images.get(ref).attrs.get("Size", 0))
    except docker.errors.ImageNotFound:
        return None


@contextmanager
def _build_lock() -> Iterator[None]:
    # Two processes building the same image at once would both run debootstrap and apt.
    with open(cache_dir() / "build.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_image(
    name: str,
    *,
    force: bool = False,
    log: Log = print,
    definitions: Path | str | None = None,
    client=None,
) -> str:
    """Build image `name` (and the images it builds on first, if missing); returns its ref."""
    _check_name(name)
    client = client or docker_client()
    root = definitions_dir(definitions)
    parent = PARENTS.get(name)
    if parent is not None and not image_exists(client, parent, root):
        build_image(parent, log=log, definitions=root, client=client)
    ref = image_ref(name, root)
    with _build_lock():
        if not force and image_exists(client, name, root):
            log(f"{ref} is up to date")
            _tag_latest(client, ref)
            return ref
        log(f"building {ref}")
        with tempfile.TemporaryDirectory(prefix=f"stateact-{name}-", dir=cache_dir()) as tmp:
            context = Path(tmp)
            for path in _definition_files(root / name):
                target = context / path.relative_to(root / name)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
            wheels = _download_wheels(root / name / "wheels.txt", log)
            shutil.copytree(wheels, context / "wheels", ignore=shutil.ignore_patterns(".*"))
            if (root / name / SOURCE_WHEELS).is_file():
                built = _source_wheels(root / name / SOURCE_WHEELS, log)
                for wheel in built.glob("*.whl"):
                    shutil.copy2(wheel, context / "wheels" / wheel.name)
            if (root / name / NPM_BUNDLE).is_file():
                bundle = _npm_bundle(root / name / NPM_BUNDLE, log)
                shutil.copytree(
                    bundle, context / "npm", symlinks=True, ignore=shutil.ignore_patterns(".*")
                )
            if name == "base":
                tarball = _rootfs_tarball(read_list(root / "base" / "rootfs-packages.txt"), log)
                build_args = {
                    "ROOTFS": _import_rootfs(client, tarball, log),
                    "SUITE": DEBIAN_SUITE,
                    "MIRROR": debian_mirror(),
                    "SECURITY_MIRROR": security_mirror(),
                }
            else:
                build_args = {"BASE": image_ref(PARENTS[name], root)}
            _docker_build(client, context, ref, build_args, log)
        _tag_latest(client, ref)
        if not os.environ.get("STATEACT_KEEP_OLD_IMAGES"):
            # Several checkouts on one machine (branches, CI beside a developer) each need their own
            # tags; STATEACT_KEEP_OLD_IMAGES=1 keeps the older ones.
            keep = {ref, build_args.get("ROOTFS", "")}
            _remove_stale(
                client, [f"stateact-{name}"] + ([ROOTFS_REPO] if name == "base" else []), keep, log
            )
    log(f"built {ref}")
    return ref


def ensure_images(
    names: Iterable[str] = DEFAULT_IMAGES, log: Log = print, definitions: Path | str | None = None
) -> list[str]:
    """Build whichever of `names` are missing for the current definitions; returns their refs."""
    wanted = list(dict.fromkeys(names))
    for name in wanted:
        _check_name(name)
    client = docker_client()
    refs = []
    for name in sorted(wanted, key=IMAGE_NAMES.index):  # each after the one it builds on
        if image_exists(client, name, definitions):
            refs.append(image_ref(name, definitions))
        else:
            refs.append(build_image(name, log=log, definitions=definitions, client=client))
    return refs


def _remove_stale(client, repositories: list[str], keep: set[str], log: Log) -> None:
    """Drop older hash tags of these repositories so rebuilds do not pile up; images in use stay."""
    import docker.errors

    for repository in repositories:
        # The low-level listing: the high-level one fails on an image removed meanwhile.
        for image in client.api.images(name=repository):
            for tag in image.get("RepoTags") or []:
                if (
                    tag.startswith(repository + ":")
                    and tag not in keep
                    and not tag.endswith(":latest")
                ):
                    try:
                        client.images.remove(tag)
                        log(f"removed the outdated {tag}")
                    except docker.errors.APIError:
                        pass  # a container still uses it


def _tag_latest(client, ref: str) -> None:
    import docker.errors

    repository = ref.split(":", 1)[0]
    try:
        client.images.get(ref).tag(repository, "latest")
    except docker.errors.ImageNotFound:
        raise StateActError(
            f"the image {ref} was removed while this build used it (another process's build?); "
            "run the command again."
        ) from None


def _wheel_platforms(arch: str) -> list[str]:
    # pip does not widen an explicit --platform to older manylinux tags, so list them all.
    tags = ["manylinux1", "manylinux2010", "manylinux2014"] if arch == "x86_64" else []
    tags.append("manylinux2014")
    tags += [f"manylinux_2_{minor}" for minor in range(17, 37)]  # bookworm has glibc 2.36
    return [f"{tag}_{arch}" for tag in dict.fromkeys(tags)]


def _download_wheels(requirements: Path, log: Log) -> Path:
    """The pinned wheels of `requirements`, downloaded once into the cache for this arch."""
    arch = machine_arch()
    pins = read_list(requirements) if requirements.is_file() else []
    key = _hash_parts([arch.encode(), IMAGE_PYTHON.encode(), *(p.encode() for p in pins)])
    target = cache_dir() / "wheels" / key
    done = target / ".complete"
    if done.is_file():
        return target
    target.mkdir(parents=True, exist_ok=True)
    if pins:
        log(f"downloading {len(pins)} wheels for {arch}")
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
        command += ["--python-version", IMAGE_PYTHON, "--implementation", "cp"]
        command += ["--abi", "cp" + IMAGE_PYTHON.replace(".", "")]
        for tag in _wheel_platforms(arch):
            command += ["--platform", tag]
        command += ["--dest", str(target), "--quiet", *pins]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["no output"])[-1]
            raise StateActError(
                f"could not download the image's wheels ({last}); check PyPI access"
            )
    if len(list(target.glob("*.whl"))) < len(pins):
        raise StateActError(f"pip downloaded fewer wheels than {requirements} pins; check the pins")
    done.touch()
    return target


def _source_wheels(requirements: Path, log: Log) -> Path:
    """Wheels built on the host from the pinned source-only packages, cached by their pins."""
    pins = read_list(requirements)
    key = _hash_parts([IMAGE_PYTHON.encode(), *(p.encode() for p in pins)])
    return bundles.build_source_wheels(requirements, cache_dir() / "source-wheels" / key, log)


def _npm_bundle(pins_file: Path, log: Log) -> Path:
    """The npm packages of `pins_file` installed on the host, cached by pins and architecture."""
    pins = read_list(pins_file)
    key = _hash_parts([machine_arch().encode(), *(p.encode() for p in pins)])
    return bundles.npm_bundle(pins, cache_dir() / "npm" / key, log)


def _rootfs_tarball(packages: list[str], log: Log) -> Path:
    """A tarball of a minimal Debian made by debootstrap, cached by suite, mirror and packages."""
    mirror = debian_mirror()
    parts = [RECIPE_VERSION, DEBIAN_SUITE, mirror, machine_arch(), *packages]
    key = _hash_parts(p.encode() for p in parts)
    rootfs_cache = cache_dir() / "rootfs"
    tarball = rootfs_cache / f"{DEBIAN_SUITE}-{key}.tar"
    if tarball.is_file():
        return tarball
    if not shutil.which("debootstrap"):
        raise StateActError(
            "debootstrap is not installed; install it with `bash .ci/install-engine.sh`"
        )
    if os.geteuid() != 0:
        raise StateActError(
            "building the base image runs debootstrap, which needs root; run as root"
        )
    rootfs_cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="debootstrap-", dir=rootfs_cache))
    log_path = rootfs_cache / f"{DEBIAN_SUITE}-{key}.log"
    log(f"debootstrap {DEBIAN_SUITE} from {mirror} (log: {log_path})")
    try:
        command = ["debootstrap", "--variant=minbase"]
        if packages:
            command.append("--include=" + ",".join(packages))
        command += [DEBIAN_SUITE, str(work / "rootfs"), mirror]
        with open(log_path, "w") as out:
            if subprocess.run(command, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
                raise StateActError(
                    f"debootstrap failed; see {log_path} and check the mirror {mirror}"
                )
        partial = work / "rootfs.tar"
        # The downloaded .debs and package lists are a third of the tree and apt refetches lists.
        excludes = ["--exclude=./var/cache/apt/archives/*.deb", "--exclude=./var/lib/apt/lists/*"]
        tar = ["tar", "-C", str(work / "rootfs"), *excludes, "-cf", str(partial), "."]
        subprocess.run(tar, check=True)
        partial.replace(tarball)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tarball


def _import_rootfs(client, tarball: Path, log: Log) -> str:
    """Import the debootstrap tarball as `stateact-rootfs:<hash>` (kept, so rebuilds reuse it)."""
    import docker.errors

    ref = f"{ROOTFS_REPO}:{tarball.stem.rsplit('-', 1)[-1]}"
    try:
        client.images.get(ref)
        return ref
    except docker.errors.ImageNotFound:
        pass
    log(f"importing {tarball.name} as {ref}")
    repository, tag = ref.split(":")
    client.api.import_image_from_file(str(tarball), repository=repository, tag=tag)
    return ref


def _docker_build(client, context: Path, ref: str, build_args: dict[str, str], log: Log) -> None:
    """`docker build --network host` of `context`, logging steps; the full output goes to a file."""
    log_path = cache_dir() / "logs" / (ref.replace(":", "-") + ".log")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    error = None
    with open(log_path, "w") as out:
        stream = client.api.build(
            path=str(context),
            tag=ref,
            buildargs=build_args,
            network_mode="host",
            rm=True,
            forcerm=True,
            pull=False,
            decode=True,
        )
        for chunk in stream:
            text = chunk.get("stream", "")
            out.write(text)
            if text.startswith("Step "):
                log("  " + text.strip())
            if "error" in chunk:
                error = chunk["error"].strip()
                out.write(error + "\n")
    if error:
        raise StateActError(f"building {ref} failed ({error.splitlines()[-1]}); see {log_path}")
