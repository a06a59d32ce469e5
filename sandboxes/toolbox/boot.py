"""The first process of a Docker sandbox: root for a moment, then the toolbox as user `user`.

The container's command is `python3 -I -c <this file's text> SETTINGS_JSON`, under the engine's init
process. Before anything else the host writes the toolbox's files to its stdin as a tar (one line
with the byte count, then the bytes), so nothing can be mistaken for them: this process unpacks them
root-owned, prepares what only root may (the observer's user and home, the staging folder for
copies, OSWorld's sudo with --agent-sudo), then drops to `user` for good (groups, then gid, then
uid: the kernel clears every capability it held on that change) and serves the toolbox protocol on
the same stdin and stdout. One process instead of an archive upload and two engine execs makes a
sandbox answer about 0.2 s sooner, and nothing of the agent's exists yet while it runs as root.

Standard library only, and self-contained: it runs before the toolbox package exists in the sandbox.
"""

import io
import json
import os
import pwd
import shutil
import subprocess
import sys
import tarfile

MAX_HEADER_BYTES = 32
MAX_TOOLBOX_BYTES = 64 * 1024 * 1024


def fail(message):
    sys.stderr.write(f"stateact boot: {message}\n")
    sys.exit(3)


def read_exact(size):
    chunks, remaining = [], size
    while remaining:
        chunk = os.read(0, min(remaining, 1 << 20))
        if not chunk:
            fail("stdin closed before the toolbox's files arrived")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def receive_toolbox(target):
    """Unpack the tar the host sends first. Byte by byte up to the newline: a buffered read would
    swallow the first request that follows."""
    header = b""
    while not header.endswith(b"\n"):
        byte = os.read(0, 1)
        if not byte or len(header) > MAX_HEADER_BYTES:
            fail("no toolbox header on stdin")
        header += byte
    size = int(header)
    if not 0 < size <= MAX_TOOLBOX_BYTES:
        fail(f"a toolbox of {size} bytes")
    with tarfile.open(fileobj=io.BytesIO(read_exact(size))) as tar:
        tar.extractall(target, numeric_owner=True)


def run_as_root(script):
    done = subprocess.run(["/bin/bash", "-c", script], capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"{script.split()[0]}…: {(done.stderr or done.stdout).strip()[-300:]}")


def prepare(settings):
    """The observer's user (made once per image), its home emptied at every start (only it writes
    there), and the root-owned staging folder."""
    name, uid = settings["observer_user"], settings["observer_uid"]
    try:
        pwd.getpwnam(name)
    except KeyError:
        run_as_root(
            f"groupadd -g {uid} {name} && "
            f"useradd -u {uid} -g {uid} -M -d {settings['observer_home']} "
            f"-s /usr/sbin/nologin {name}"
        )
    home = settings["observer_home"]
    shutil.rmtree(home, ignore_errors=True)
    os.mkdir(home, 0o700)
    os.chown(home, uid, uid)
    os.makedirs(settings["staging_root"], exist_ok=True)
    os.chmod(settings["staging_root"], 0o711)
    if settings.get("grant_script"):
        run_as_root(settings["grant_script"])


def become(user):
    """Drop to `user` with its groups; afterwards no uid of this process is root."""
    entry = pwd.getpwnam(user)
    os.setgroups(os.getgrouplist(entry.pw_name, entry.pw_gid))
    os.setresgid(entry.pw_gid, entry.pw_gid, entry.pw_gid)
    os.setresuid(entry.pw_uid, entry.pw_uid, entry.pw_uid)
    if 0 in os.getresuid() or 0 in os.getresgid():
        fail("could not drop root")


def main():
    settings = json.loads(sys.argv[1])
    parent = settings["toolbox_parent"]
    receive_toolbox(os.path.dirname(parent))
    prepare(settings)
    become(settings["user"])
    os.chdir(parent)
    sys.path.insert(0, parent)
    from toolbox.server import main as serve

    serve(observer=settings["observer"])


main()
