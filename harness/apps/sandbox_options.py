"""The sandbox's screen and the agent's rights in it: `--screen WxH` and `--agent-sudo` on `run`,
`suite` and `batch` (and `code`, which shares their options); the warm pool's `--warm N` on
`suite`, `batch` and `mcp`."""

from __future__ import annotations

import re

from harness.kernel.core import StateActError
from harness.run.config import RunConfig
from sandboxes.base import OSWORLD_SCREEN, SandboxConfig
from sandboxes.pool import PoolConfig, check_warm

SCREEN = re.compile(r"^(\d{3,5})x(\d{3,5})$")
SCREEN_LIMITS = ((640, 7680), (480, 4320))
"""Sizes Xvfb and the screenshot pipeline are used with: from VGA to 8K."""


def add_sandbox_options(parser) -> None:
    width, height = OSWORLD_SCREEN
    parser.add_argument(
        "--screen",
        metavar="WxH",
        help=f"the desktop's screen size (default {width}x{height}, OSWorld's); the GUI "
        "specialist's screenshots are scaled to what the model sees and its clicks mapped back",
    )
    parser.add_argument(
        "--agent-sudo",
        action="store_true",
        help="give the agent's user OSWorld's sudo (password `password`): it can then be root in "
        "its sandbox, so checks that run programs inside the sandbox trust less (see "
        "docs/osworld-setup.md); tasks that need root are otherwise unsupported",
    )


def parse_screen(text: str) -> tuple[int, int]:
    """`1920x1080` -> (1920, 1080); StateActError naming the accepted form otherwise."""
    match = SCREEN.match(text.strip().lower())
    (low_w, high_w), (low_h, high_h) = SCREEN_LIMITS
    if match:
        width, height = int(match[1]), int(match[2])
        if low_w <= width <= high_w and low_h <= height <= high_h:
            return width, height
    raise StateActError(
        f"--screen must look like 1920x1080, from {low_w}x{low_h} to {high_w}x{high_h}; "
        f"got {text!r}."
    )


def apply_sandbox_options(screen: str | None, agent_sudo: bool, config: RunConfig) -> None:
    if screen is not None:
        config.sandbox.display_size = parse_screen(screen)
    config.sandbox.agent_sudo = agent_sudo
    if config.sandbox.agent_sudo and config.sandbox.backend != "docker":
        raise StateActError("--agent-sudo needs the docker backend (--sandbox docker).")


def add_warm_option(parser) -> None:
    """`--warm N` on `suite`, `batch` and `mcp` (sandboxes/pool.py)."""
    parser.add_argument(
        "--warm",
        type=int,
        default=0,
        metavar="N",
        help="keep N sandboxes started ahead (the desktop up), one handed to each next task and "
        "replaced in the background; each is used by one task only (default 0: none; docker "
        "backend; docs/scale-out.md)",
    )


def pool_config(
    warm, sandbox: SandboxConfig, ray: object = None, desktop: bool = True
) -> PoolConfig | None:
    """The warm pool `--warm` asks for (None for 0), checked: a whole number, the docker
    backend, and not with `--ray` (the pool lives in this process, the tasks on the nodes)."""
    size = check_warm(warm, sandbox.backend)
    if size and ray is not None:
        raise StateActError("--warm runs on the local runner only; leave out --ray or --warm.")
    return PoolConfig(size, sandbox, desktop=desktop) if size else None
