"""The control modes' ablation switches on the command line (`run`, `suite`, `batch`, `code`);
`harness/apps/seed_options.py` applies them to the run's config."""

from __future__ import annotations

from harness.apps.seed_options import (
    GRAINS,
    LSTC_ABLATIONS,
    ON_OFF,
    STRUCTAGENT_ABLATIONS,
    VERIFIERS,
)


def add_seed_options(parser) -> None:
    """The seed modes' switches and `--no-stall`."""
    parser.add_argument(
        "--no-stall",
        action="store_true",
        help="turn off stall and loop detection in every mode (recorded as option `stall`)",
    )
    parser.add_argument(
        "--andor-grain",
        choices=GRAINS,
        default="subtask",
        help="andor: an action node is one browser/GUI operation (op, the paper's grain) or a "
        "whole worker or specialist loop (subtask, default)",
    )
    parser.add_argument(
        "--andor-repair",
        choices=ON_OFF,
        default="on",
        help="andor: repair failed AND/OR nodes (off: the Repair ablation; default on)",
    )
    parser.add_argument(
        "--andor-or",
        choices=ON_OFF,
        default="on",
        help="andor: an OR node tries its next alternative after a failure (off: the OR "
        "ablation; default on)",
    )
    parser.add_argument(
        "--lstc-without",
        action="append",
        default=[],
        metavar="MECHANISM",
        help=f"lstc: remove one mechanism (repeatable): {', '.join(LSTC_ABLATIONS)}",
    )
    parser.add_argument(
        "--structagent-verifier",
        choices=VERIFIERS,
        default="structured",
        help="structagent: the verifier that commits subgoals: structured probes with a model "
        "verifier they override (default) or the screenshot-only visual verifier",
    )
    parser.add_argument(
        "--structagent-step-verifier",
        choices=ON_OFF,
        default="on",
        help="structagent: the low-level verifier after each actor step (complete / continue / "
        "no_effect / off_track / stuck), as in the paper (default on; off: the actor runs until "
        "it reports)",
    )
    parser.add_argument(
        "--structagent-without",
        action="append",
        default=[],
        metavar="MECHANISM",
        help=f"structagent: remove one mechanism (repeatable): {', '.join(STRUCTAGENT_ABLATIONS)}",
    )
