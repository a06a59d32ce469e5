"""`stateact view OUT`: serve a suite's report and its runs' trajectories on the loopback, live."""

from __future__ import annotations

import sys
import time

from harness.apps.viewer import serve


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "view",
        help="serve a suite's report and trajectories on 127.0.0.1, refreshing while it runs",
        description="Serve OUT (a suite directory, or one run directory) on a loopback address: "
        "the report rebuilt from results.jsonl on every request, each run's trajectory page "
        "(the checker's metrics, the gate rounds, why it failed), and the screenshots. Pages "
        "reload themselves when the run writes new results. Ctrl-C stops the server.",
    )
    parser.add_argument("out", metavar="OUT", help="a suite directory or a run directory")
    parser.add_argument(
        "--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=7575, help="port (default 7575; 0 picks a free one)"
    )
    parser.set_defaults(handler=run)


def run(args) -> int:
    server = serve(args.out, args.host, args.port)
    host, port = server.server_address[:2]
    print(f"serving {args.out} at http://{host}:{port}/ (Ctrl-C stops)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
        return 0
    finally:
        server.shutdown()
