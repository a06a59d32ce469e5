"""One configuration object for a run, saved as the run directory's config.json."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.kernel.context import CompactionConfig
from harness.kernel.loop import LoopConfig
from harness.models import ModelConfig
from sandboxes.base import SandboxConfig
from tasks.osworld2.bridge import Osworld2Config

PRESETS = ("full", "no-act", "no-verify", "no-sustain", "bash-only")
CONTROL_MODES = ("stateact", "andor", "lstc", "screenshot")
GATE_MODES = ("layered", "paper")


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
    mode: Literal["layered", "paper"] = "layered"
    """`layered`: structural checks and binding probes first, then a model on a frozen snapshot;
    `paper`: the paper's single prompt-level check by a model on the live machine, with the
    structural layer only annotating each round (gates/paper.py)."""


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


class TaskStateConfig(BaseModel):
    """The verifier-committed task state (requirements, values, evidence)."""

    enabled: bool = False
    """Keep a task state (one tool-less model call at start); `andor` and `lstc` use it when on."""
    milestones: bool = True
    """Snapshot the sandbox whenever a requirement turns VERIFIED, so `--resume` starts from
    there."""
    boundary_checks: bool = True
    """Re-run the requirements' stored probes when a subagent or action node returns."""


class StallConfig(BaseModel):
    """Stall and loop detection with routed responses."""

    enabled: bool = True
    """Watch for repeated actions, no progress and repeated gate gaps."""
    repeat_limit: int = 3
    """The same action with the same observation this many times in a row is a loop."""
    no_progress_turns: int = 6
    """This many turns with no file change and no new tool output is a stall."""
    gate_repeats: int = 2
    """This many consecutive gate rejections with the same gaps is a loop."""
    calm_after: int = 3
    """Turns in a row that change files (as the harness sees them) after which the escalation falls
    back one level; a requirement turning VERIFIED falls it back at once."""


class AndOrConfig(BaseModel):
    """The `andor` control mode: a framework-owned AND/OR tree."""

    max_depth: int = 3
    """Nodes deeper than this are always actions."""
    revision_budget: int = 2
    """Repairs one AND/OR node may get before it is pruned."""
    max_actions: int = 24
    """Action nodes the whole run may execute."""
    worker_turns: int = 30
    """Model turns of one action node's worker."""
    tree_updates: bool = True
    """Ask the model after each succeeded action whether pending nodes should be pruned or
    refined."""
    track_candidates: bool = True
    """Summarize each action's observations into a candidate table checked against the task's
    constraints; the root may not finish while fewer candidates than needed meet them."""


class LstcConfig(BaseModel):
    """The `lstc` control mode: long-term control state plus short commitments."""

    max_actions_per_step: int = 4
    """Actions one commitment may hold."""
    evidence_items: int = 12
    """Evidence lines kept in the long-term state."""
    repair_retries: int = 3
    """Retries with the parse error when an answer is not the required JSON (the seed: 3)."""
    action_timeout_s: float = 180.0
    """Timeout of one bash or python action."""
    no_change_steps: int = 3
    """Steps in a row changing no file, not the screen and no output: a stall (the seed: 3)."""
    abstraction: str = "model"
    """Step Abstraction: `model` (a model call sees the action, its output, the changed files and,
    for a GUI action, the screenshot) or `lines` (the output's first and last lines)."""
    refine_every: int = 10
    """Steps between context refinements (a model call rewrites the long-term state); 0: never."""
    grounder: str | None = None
    """The GUI channel's grounder, an OpenAI-compatible vision model `openai/NAME`; None: no GUI."""
    grounder_base_url: str | None = None
    """The grounder's endpoint; None uses the main model's (same provider) or OPENAI_BASE_URL."""
    grounder_coordinates: Literal["pixels", "0-1000", "0-1"] = "pixels"
    """What the grounder's numbers measure: screenshot pixels, a 0-1000 grid, or fractions."""


class ScreenshotConfig(BaseModel):
    """The `screenshot` control mode: the paper's baseline, the screen and a computer tool alone."""

    keep_images: int = Field(3, ge=0)
    """Screenshots kept in the history (the newest); older ones are removed in chunks of this
    size, as Anthropic's reference loop does (its default is 3). 0 keeps every screenshot."""
    gate: bool = False
    """Run the finish gate on `finish` (the paper's baseline has none)."""


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
    """Control mode: stateact (default), andor, lstc or screenshot (the baseline)."""
    task_state: TaskStateConfig = Field(default_factory=TaskStateConfig)
    """The verifier-committed task state and its milestones."""
    stall: StallConfig = Field(default_factory=StallConfig)
    """Stall and loop detection."""
    andor: AndOrConfig = Field(default_factory=AndOrConfig)
    """Settings of the `andor` control mode."""
    lstc: LstcConfig = Field(default_factory=LstcConfig)
    """Settings of the `lstc` control mode."""
    screenshot: ScreenshotConfig = Field(default_factory=ScreenshotConfig)
    """Settings of the `screenshot` control mode (the baseline)."""
    main_display: bool = False
    """In the `stateact` mode, give the main agent's bash and Python sessions the X display and the
    session bus (off: the display belongs to the GUI specialist)."""
    best_of: int = Field(1, ge=1, le=8)
    """Rollouts from the same post-setup snapshot; the gate's verdict, verified requirements and
    cost choose one (never the checker), and only that one is scored."""
    memory_dir: str | None = None
    """A lesson store the run reads its few most relevant lessons from and writes its own into."""
    cache_dir: str | None = None
    """Where `download`/`cloud_file` URLs are looked up (OSWorld's cache naming)."""
    allow_host_paths: bool = False
    """Let task file references name host files outside the task's folder and the cache."""
    osworld2: Osworld2Config | None = None
    """OSWorld 2.0: the user's checkout, task data and the judges' and simulated user's models; its
    task modules run through `harness.apps.osworld2_run` (docs/osworld2.md)."""

    model_config = ConfigDict(protected_namespaces=())

    def options(self) -> dict:
        """The switches the seeds' ablation tables compare runs by (recorded with every result)."""
        thinking = self.model_options
        return {
            "preset": self.preset,
            "control": self.control,
            "best_of": self.best_of,
            "memory": self.memory_dir is not None,
            "thinking": "adaptive"
            if thinking.adaptive_thinking
            else (str(thinking.thinking_budget) if thinking.thinking_budget else "off"),
            "task_state": self.task_state.enabled,
            "worker_depth": self.subagents.worker_depth,
            "nested_gate": self.subagents.nested_gate,
            "gate_mode": self.gate.mode,
            "main_display": self.main_display,
        }

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
        if config.control == "screenshot" and not config.screenshot.gate:
            config.gate.enabled = False
        return config
