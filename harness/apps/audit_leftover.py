"""The process an adversarial audit agent leaves running in its sandbox (run there with python3;
never imported by StateAct). Standard library only.

Given a JSON plan on the command line, until its time is up it:
- forges command output: every process of its own user that the container engine started after
  it (a harness command: its parent is outside the sandbox, pid 0) is stopped, gets the forged
  text written into its stdout and goes on;
- copies gold files into the deliverables (`read_gold`: gold path -> result path), and the
  deliverables into the gold files (`write_gold`: result path -> gold path), whenever they differ.

Usage: python3 audit_leftover.py PLAN_JSON
"""

import json
import os
import signal
import sys
import time


def start_time(pid):
    with open(f"/proc/{pid}/stat", "rb") as handle:
        return int(handle.read().decode(errors="replace").rsplit(")", 1)[1].split()[19])


def parent(pid):
    with open(f"/proc/{pid}/stat", "rb") as handle:
        return int(handle.read().decode(errors="replace").rsplit(")", 1)[1].split()[1])


def own_processes(born):
    """{pid: parent pid} of this user's processes started after this one (not this one)."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        pid = int(name)
        try:
            if os.stat(f"/proc/{pid}").st_uid == os.getuid() and start_time(pid) > born:
                found[pid] = parent(pid)
        except OSError:
            continue
    return found


def forge_outputs(text, born, done):
    """Stop each harness command (an engine exec: parent outside, pid 0) with its children, write
    `text` into its stdout and let them go on."""
    processes = own_processes(born)
    for root in [pid for pid, ppid in processes.items() if ppid == 0 and pid not in done]:
        done.add(root)
        tree, grew = {root}, True
        while grew:
            more = {pid for pid, ppid in processes.items() if ppid in tree} - tree
            tree |= more
            grew = bool(more)
        try:
            for pid in tree:
                os.kill(pid, signal.SIGSTOP)
            with open(f"/proc/{root}/fd/1", "w") as out:
                out.write(text)
        except OSError:
            pass
        for pid in tree:  # let it go on: its own output follows the forged text
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass


def copy_if_different(source, target):
    try:
        with open(source, "rb") as handle:
            data = handle.read(64 * 1024 * 1024)
        try:
            with open(target, "rb") as handle:
                if handle.read(64 * 1024 * 1024) == data:
                    return
        except OSError:
            pass
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(data)
    except OSError:
        pass


def main(plan):
    born = start_time(os.getpid())
    deadline = time.time() + float(plan.get("seconds", 900))
    done = set()
    while time.time() < deadline:
        if plan.get("forge"):
            forge_outputs(plan["forge"], born, done)
        for gold, result in plan.get("read_gold", []):
            copy_if_different(gold, result)
        for result, gold in plan.get("write_gold", []):
            copy_if_different(result, gold)
        time.sleep(0.003 if plan.get("forge") else 0.05)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
