"""`stateact image`: build the sandbox images (no registry needed) and list what is built."""

from __future__ import annotations

import argparse
import time

from rich.console import Console
from rich.table import Table

from harness.kernel.core import StateActError
from sandboxes.images.build import (
    DEFAULT_IMAGES,
    IMAGE_NAMES,
    build_image,
    docker_client,
    image_ref,
    image_size,
)


def register(subparsers) -> argparse.ArgumentParser:
    """Add the `image` command (subcommands `build` and `list`) to an argparse subparsers object."""
    parser = subparsers.add_parser(
        "image",
        help="build or list the sandbox images",
        description="Build the sandbox images from their definitions (no registry needed) or "
        "list them.",
    )
    actions = parser.add_subparsers(dest="image_command", metavar="{build,list}")
    build = actions.add_parser(
        "build",
        help="build images that are missing or out of date",
        description="Build images whose definitions changed since the last build; each builds "
        "the one it is made FROM first (`osworld2` on `desktop` on `base`).",
    )
    build.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"images to build: {', '.join(IMAGE_NAMES)} (default: {' and '.join(DEFAULT_IMAGES)})",
    )
    build.add_argument(
        "--force", action="store_true", help="rebuild even when an up-to-date image exists"
    )
    actions.add_parser(
        "list",
        help="show each image's ref, whether it is built and its size",
        description="Show each image's ref (tagged by a hash of its inputs), whether it is built "
        "and its size.",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Carry out `stateact image build|list`; returns the exit code."""
    command = getattr(args, "image_command", None)
    if command == "build":
        return build_command(args.names or list(DEFAULT_IMAGES), force=args.force)
    if command == "list":
        return list_command()
    raise StateActError(
        "say what to do with images: `stateact image build [NAME...]` or `stateact image list`"
    )


def build_command(names: list[str], *, force: bool = False, console: Console | None = None) -> int:
    """Build `names` (each after the one it builds on), printing progress and each image's build
    time."""
    console = console or Console(stderr=True)
    unknown = [name for name in names if name not in IMAGE_NAMES]
    if unknown:
        raise StateActError(f"unknown image {unknown[0]!r}; choose from {', '.join(IMAGE_NAMES)}")
    client = docker_client()
    for name in sorted(dict.fromkeys(names), key=IMAGE_NAMES.index):
        started = time.monotonic()
        ref = build_image(name, force=force, log=console.print, client=client)
        console.print(f"{ref} ready in {time.monotonic() - started:.0f} s")
    return 0


def list_command(console: Console | None = None) -> int:
    """Print a table of the images: ref, whether it is built, and its size."""
    console = console or Console()
    client = docker_client()
    table = Table("image", "ref", "built", "size")
    for name in IMAGE_NAMES:
        ref = image_ref(name)
        size = image_size(client, ref)
        built = "yes" if size is not None else "no"
        table.add_row(name, ref, built, _human_size(size) if size is not None else "-")
    console.print(table)
    return 0


def _human_size(size: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} GB"
