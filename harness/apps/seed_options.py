"""The control modes' ablation switches as run options (`--no-stall`, `--andor-*`, `--lstc-without`,
`--structagent-*`): each sets one field of the mode's config section, and `RunConfig.options`
records them all, so two arms of an ablation land in separate `summary.json` `by_option` groups.
The command line's flags are `harness/cli/seed_options.py`; run configs and the Python API take
the same keys."""

from __future__ import annotations

from harness.kernel.core import StateActError, require_one_of
from harness.run.config import RunConfig

ON_OFF = ("on", "off")
GRAINS = ("op", "subtask")
VERIFIERS = ("structured", "visual")
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
    "auditor": ("auditor", False),
}
"""`--structagent-without NAME` -> the `structagent` field and its ablated value."""


def apply_seed_options(options, config: RunConfig) -> None:
    """Set the switches from the validated options (bad values are one sentence)."""
    config.stall.enabled = not options.no_stall
    require_one_of("--andor-grain", options.andor_grain, GRAINS)
    require_one_of("--andor-repair", options.andor_repair, ON_OFF)
    require_one_of("--andor-or", options.andor_or, ON_OFF)
    require_one_of("--structagent-verifier", options.structagent_verifier, VERIFIERS)
    require_one_of("--structagent-step-verifier", options.structagent_step_verifier, ON_OFF)
    config.andor.grain = options.andor_grain
    config.andor.repair = options.andor_repair == "on"
    config.andor.alternatives = options.andor_or == "on"
    config.structagent.verifier = options.structagent_verifier
    config.structagent.step_verifier = options.structagent_step_verifier == "on"
    _ablate(config.lstc, "--lstc-without", options.lstc_without, LSTC_ABLATIONS)
    _ablate(
        config.structagent,
        "--structagent-without",
        options.structagent_without,
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
