"""`--ray` and its companions, shared by `suite` and `batch`."""

from __future__ import annotations

from harness.apps.ray.cluster import RayOptions
from harness.kernel.core import StateActError


def add_ray_options(parser) -> None:
    """Add --ray, --ray-retries, --ray-image-archive and --requests-per-minute to `parser`."""
    group = parser.add_argument_group("scale-out on a Ray cluster (pip install 'stateact[ray]')")
    group.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run each task as a Ray task on a cluster: HOST:PORT of its head, or `auto` "
        "(a running local cluster, else a new one with --parallel sandbox slots)",
    )
    group.add_argument(
        "--ray-retries",
        type=int,
        default=3,
        help="times a task whose node was lost starts again on another node (default 3)",
    )
    group.add_argument(
        "--ray-image-archive",
        metavar="PATH",
        help="a `docker save` tarball (same path on every node) to load where the sandbox image "
        "is missing; without it, such a node builds the image",
    )
    group.add_argument(
        "--requests-per-minute",
        type=float,
        help="model API requests per minute across the whole cluster (default: no shared limit)",
    )


def ray_options(args) -> RayOptions | None:
    """The parsed options, or None without --ray."""
    if not args.ray:
        for flag in ("ray_image_archive", "requests_per_minute"):
            if getattr(args, flag):
                raise StateActError(f"--{flag.replace('_', '-')} needs --ray.")
        return None
    if args.ray_retries < 0:
        raise StateActError("--ray-retries must be 0 or more.")
    if args.requests_per_minute is not None and args.requests_per_minute <= 0:
        raise StateActError("--requests-per-minute must be more than 0.")
    return RayOptions(
        address=args.ray.strip(),
        retries=args.ray_retries,
        image_archive=args.ray_image_archive,
        requests_per_minute=args.requests_per_minute,
    )
