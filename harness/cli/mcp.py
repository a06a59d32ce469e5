"""`stateact mcp`: serve StateAct's sandboxes (and the finish gate as `check`) to an MCP client
over stdio."""

from __future__ import annotations

from harness.apps.mcp_server import IMAGES, ServerSettings, serve
from harness.apps.sandbox_options import add_warm_option
from harness.kernel.core import StateActError, require_one_of
from harness.models import ModelConfig, endpoint_provider, make_model
from sandboxes import BACKENDS
from sandboxes.pool import check_warm


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="run an MCP server (stdio) exposing sandboxes and the finish gate",
        description="Serve over stdio: sandbox_create, sandbox_close, bash, python, editor, "
        "view_image, write_file, read_file and check (the narration-blind gate). Sandboxes belong "
        "to the client session and are removed when it ends. Configure it in an MCP client as the "
        "command `stateact mcp --gate-model PROVIDER/NAME`.",
    )
    parser.add_argument("--gate-model", help="model spec `check` uses when a call names none")
    parser.add_argument(
        "--base-url", help="gate model API endpoint (else ANTHROPIC_BASE_URL / OPENAI_BASE_URL)"
    )
    parser.add_argument(
        "--api-key", help="gate model API key (else ANTHROPIC_API_KEY / OPENAI_API_KEY)"
    )
    parser.add_argument(
        "--sandbox",
        default="docker",
        help=f"default backend: {', '.join(BACKENDS)} (default docker)",
    )
    parser.add_argument(
        "--image", default="desktop", help="default image: base or desktop (default desktop)"
    )
    parser.add_argument(
        "--memory-mb", type=int, default=4096, help="memory limit per sandbox (default 4096)"
    )
    parser.add_argument(
        "--network", action="store_true", help="let clients ask for sandboxes with a network"
    )
    parser.add_argument(
        "--max-sandboxes",
        type=int,
        default=4,
        help="live sandboxes the server holds at once (default 4)",
    )
    add_warm_option(parser)
    parser.set_defaults(handler=run)


def run(args) -> int:
    require_one_of("sandbox backend", args.sandbox, BACKENDS)
    require_one_of("image", args.image, IMAGES)
    if args.max_sandboxes < 1:
        raise StateActError("--max-sandboxes must be at least 1.")
    check_warm(args.warm, args.sandbox)
    if (args.base_url or args.api_key) and not endpoint_provider(args.gate_model):
        raise StateActError(
            "--base-url and --api-key belong to the gate model's provider; pass --gate-model "
            "anthropic/… or openai/… with them."
        )
    options = ModelConfig(
        base_url=args.base_url, api_key=args.api_key, provider=endpoint_provider(args.gate_model)
    )
    if args.gate_model:
        make_model(
            args.gate_model, options
        )  # a bad spec or missing key fails now, not on the first check
    settings = ServerSettings(
        backend=args.sandbox,
        image=args.image,
        gate_model=args.gate_model,
        model_options=options,
        memory_mb=args.memory_mb,
        network=args.network,
        max_sandboxes=args.max_sandboxes,
        warm=args.warm,
    )
    serve(settings)
    return 0
