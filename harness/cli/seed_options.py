"""The control modes' ablation switches on the command line (`run`, `suite`, `batch`, `code`).

Each flag sets one field of the mode's config section; `RunConfig.options` records them all, so
two arms of an ablation land in separate `summary.json` `by_option` groups.
"""

from __future__ import annotations

from harness.kernel.core import StateActError
from harness.run.config import RunConfig

ON_OFF = ("on", "off")
LSTC_ABLATIONS = {
    "l2s": ("l2s", False),
    "s2l": ("s2l", False),
    "suppression": ("suppression", False),
    "abstraction": ("abstraction", "lines"),
    "refinement": ("refinement", False),
    "final-verification": ("final_verification", False),
}
"""`--lstc-without NAME` -> the `lstc` field and the value that removes the mechanism."""
STRUCTAGENT_ABLATIONS = {
    "verifier": ("verifier", "off"),
    "memory": ("memory", False),
    "bbon": ("judge", False),
}
"""`--structagent-without NAME` -> the `structagent` field and its ablated value."""


def add_seed_options(parser) -> None:
    """The seed modes' switches and `--no-stall`."""
    parser.add_argument(
        "--no-stall",
        action="store_true",
        help="turn off stall and loop detection in every mode (recorded as option `stall`)",
    )
    parser.add_argument(
        "--andor-grain",
        choices=("op", "subtask"),
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
        choices=("structured", "visual"),
        default="structured",
        help="structagent: the verifier that commits subgoals: structured probes with a model "
        "verifier they override (default) or the screenshot-only visual verifier",
    )
    parser.add_argument(
        "--structagent-without",
        action="append",
        default=[],
        metavar="MECHANISM",
        help=f"structagent: remove one mechanism (repeatable): {', '.join(STRUCTAGENT_ABLATIONS)}",
    )


def apply_seed_options(args, config: RunConfig) -> None:
    """Set the switches from `args` (bad names are one sentence, a `StateActError`)."""
    config.stall.enabled = not getattr(args, "no_stall", False)
    config.andor.grain = getattr(args, "andor_grain", "subtask")
    config.andor.repair = getattr(args, "andor_repair", "on") == "on"
    config.andor.alternatives = getattr(args, "andor_or", "on") == "on"
    config.structagent.verifier = getattr(args, "structagent_verifier", "structured")
    _ablate(config.lstc, "--lstc-without", getattr(args, "lstc_without", []), LSTC_ABLATIONS)
    _ablate(
        config.structagent,
        "--structagent-without",
        getattr(args, "structagent_without", []),
        STRUCTAGENT_ABLATIONS,
    )


def _ablate(section, flag: str, names: list[str], table: dict) -> None:
    for name in names:
        if name not in table:
            raise StateActError(
                f"{flag} {name!r} is not a mechanism; use one of {', '.join(table)}."
            )
        field, value = table[name]
        setattr(section, field, value)
