"""One configuration object for a run, saved as the run directory's config.json."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from sandboxes.base import SandboxConfig

from .context import CompactionConfig
from .loop import LoopConfig
from .models import ModelConfig

PRESETS = ("full", "no-act", "no-verify", "no-sustain", "bash-only")
CONTROL_MODES = ("stateact",)


class GateConfig(BaseModel):
    """The narration-blind finish gate."""

    enabled: bool = True
    """Run the gate on `finish` (the `no-verify` ablation turns it off)."""
    model: str | None = None
    """Model spec for the gate; None uses the agent's model."""
    max_rejections: int = 3
    """Rejection rounds before the run ends as `gate_rejected`."""
    max_turns: int = 30
    """Model turns the gate may take in one round."""


class SubagentConfig(BaseModel):
    """Delegation to fresh-context specialists."""

    enabled: list[str] = Field(default_factory=lambda: ["worker", "gui", "web"])
    """Which specialists `delegate` may start."""
    max_turns: int = 50
    """Model turns of one delegation."""
    worker_depth: int = 1
    """1 = flat delegation; 2 lets a worker delegate to a worker (the depth ablation)."""
    nested_gate: bool = False
    """Give workers a finish gate of their own (the nested ablation)."""


class RunConfig(BaseModel):
    """Everything that decides how one task is run."""

    model: str = "anthropic/claude-sonnet-4-5"
    """Model spec PROVIDER/NAME for the main agent and, by default, every other agent."""
    model_options: ModelConfig = Field(default_factory=ModelConfig)
    """How to call the model (tokens, retries, prices, endpoint)."""
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    """Where the task runs."""
    loop: LoopConfig = Field(default_factory=LoopConfig)
    """Main-agent budgets: turns, cost, wall time."""
    compaction: CompactionConfig = Field(default_factory=CompactionConfig)
    """Context compaction near the window limit."""
    gate: GateConfig = Field(default_factory=GateConfig)
    """The finish gate."""
    subagents: SubagentConfig = Field(default_factory=SubagentConfig)
    """Fresh-context specialists."""
    preset: str = "full"
    """One of the paper's ablations: full, no-act, no-verify, no-sustain, bash-only."""
    control: str = "stateact"
    """Control mode."""
    cache_dir: str | None = None
    """Where `download`/`cloud_file` URLs are looked up (OSWorld's cache naming)."""

    model_config = ConfigDict(protected_namespaces=())

    def with_preset(self) -> RunConfig:
        """A copy with the preset's switches applied."""
        config = self.model_copy(deep=True)
        if config.preset == "no-verify":
            config.gate.enabled = False
        elif config.preset == "no-sustain":
            config.compaction.enabled = False
        elif config.preset == "bash-only":
            config.gate.enabled = False
            config.subagents.enabled = []
        elif config.preset == "no-act":
            config.subagents.enabled = [name for name in config.subagents.enabled if name != "gui"]
        return config
