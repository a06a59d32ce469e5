"""`stateact sandbox`: check an image by running a command or a shell in a fresh sandbox."""

from __future__ import annotations

import argparse
import subprocess
import sys

from harness.kernel.core import StateActError, require_one_of
from sandboxes import BACKENDS, SandboxConfig, open_sandbox
from sandboxes.docker_backend import docker_client, reap_orphans
from sandboxes.typed import NOT_STARTED

BACKEND_HELP = (
    "docker (default): a container with no network and memory/CPU/process limits; "
    "local: bubblewrap namespaces with no daemon — offline and with a private home, but it shares "
    "the host's /usr and kernel and limits only per-process memory (see the README)"
)


def register(subparsers) -> None:
    parser = subparsers.add_parser("sandbox", help="run a command or a shell in a fresh sandbox")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    exec_parser = actions.add_parser(
        "exec", help="run one command in a fresh sandbox, print its output, exit with its code"
    )
    _add_common(exec_parser)
    exec_parser.add_argument("--timeout", type=float, default=600, help="seconds (default 600)")
    exec_parser.add_argument("argv", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...]")
    exec_parser.set_defaults(handler=run_exec)

    shell_parser = actions.add_parser("shell", help="an interactive bash in a fresh sandbox")
    _add_common(shell_parser)
    shell_parser.set_defaults(handler=run_shell)

    reap_parser = actions.add_parser(
        "reap", help="remove sandboxes left behind by StateAct processes that no longer run"
    )
    reap_parser.set_defaults(handler=run_reap)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", default="docker", help=BACKEND_HELP)
    parser.add_argument(
        "--image", default="desktop", help="image name or reference (default desktop)"
    )
    parser.add_argument("--memory-mb", type=int, default=4096, help="memory limit (default 4096)")
    parser.add_argument(
        "--network", action="store_true", help="give the sandbox a network (off by default)"
    )


def _config(args) -> SandboxConfig:
    require_one_of("sandbox backend", args.backend, BACKENDS)
    return SandboxConfig(
        backend=args.backend, image=args.image, memory_mb=args.memory_mb, network=args.network
    )


def run_exec(args) -> int:
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise StateActError(
            "give the command to run after `--`, e.g. `stateact sandbox exec -- ls`."
        )
    with open_sandbox(_config(args)) as sandbox:
        code, output = sandbox.exec(argv, timeout=args.timeout)
    if code in (126, 127) and NOT_STARTED in output:
        # The wrapper could not start the command: say so in one sentence, not timeout's words.
        problem = "is not a command in the sandbox" if code == 127 else "cannot be run"
        print(f"stateact: error: {argv[0]} {problem}.", file=sys.stderr)
        return code
    sys.stdout.write(output)
    sys.stdout.flush()
    return code


def run_shell(args) -> int:
    with open_sandbox(_config(args)) as sandbox:
        return subprocess.call(sandbox.interactive_argv())


def run_reap(args) -> int:
    removed = reap_orphans(docker_client())
    print(f"removed {len(removed)} orphaned sandbox object(s)")
    return 0
