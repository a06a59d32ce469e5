"""One configuration object for a run, saved as the run directory's config.json."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.kernel.context import CompactionConfig
from harness.kernel.loop import LoopConfig
from harness.models import ModelConfig
from sandboxes.base import SandboxConfig
from tasks.osworld2.bridge import Osworld2Config

GATE_MODES = ("layered", "paper")
MAX_BEST_OF = 8
"""The most rollouts `best_of` allows (the CLI's `--best-of` reads this bound)."""

PRESETS: dict[str, dict[str, object]] = {
    "full": {},
    "no-act": {"main.computer": True},
    "no-verify": {"gate.enabled": False},
    "no-sustain": {"compaction.enabled": False},
    "bash-only": {"main.tools": "bash", "gate.enabled": False, "subagents.enabled": []},
}
"""The paper's ablations, each a named set of switches (`section.field` -> value) that
`RunConfig.with_preset` sets; the code reads the switches, never the preset's name."""


def mode_options(config: RunConfig) -> dict:
    """The control modes' behaviour switches (each seed's ablations), recorded for every run."""
    andor, lstc, struct = config.andor, config.lstc, config.structagent
    return {
        "stall": config.stall.enabled,
        "andor_grain": andor.grain,
        "andor_repair": andor.repair,
        "andor_or": andor.alternatives,
        "andor_candidates": andor.track_candidates,
        "lstc_l2s": lstc.l2s,
        "lstc_s2l": lstc.s2l,
        "lstc_suppression": lstc.suppression,
        "lstc_abstraction": lstc.abstraction,
        "lstc_refinement": lstc.refinement,
        "lstc_final_verification": lstc.final_verification,
        "structagent_verifier": struct.verifier,
        "structagent_memory": struct.memory,
        "structagent_judge": struct.judge,
        "structagent_step_verifier": struct.step_verifier,
        "structagent_auditor": struct.auditor,
    }


MODE_OPTIONS = (
    "stall",
    "andor_grain",
    "andor_repair",
    "andor_or",
    "andor_candidates",
    "lstc_l2s",
    "lstc_s2l",
    "lstc_suppression",
    "lstc_abstraction",
    "lstc_refinement",
    "lstc_final_verification",
    "structagent_verifier",
    "structagent_memory",
    "structagent_judge",
    "structagent_step_verifier",
    "structagent_auditor",
)
"""The names `mode_options` records (the summary's `by_option` tables read them)."""

FORBID = ConfigDict(extra="forbid", use_attribute_docstrings=True)
"""Every config model: an unknown key is an error, each field's docstring is its description."""


class GateConfig(BaseModel):
    """The narration-blind finish gate."""

    model_config = FORBID

    enabled: bool = True
    """Run the gate on `finish` (the `no-verify` ablation turns it off)."""
    model: str | None = None
    """Model spec for the gate; None uses the agent's model."""
    max_rejections: int = Field(3, ge=0)
    """Rejection rounds before the run ends as `gate_rejected`."""
    max_turns: int = Field(30, ge=1)
    """Model turns the gate may take in one round."""
    mode: Literal[GATE_MODES] = "layered"
    """`layered`: structural checks and binding probes first, then a model on a frozen snapshot;
    `paper`: the paper's single prompt-level check by a model on the live machine, with the
    structural layer only annotating each round (gates/paper.py)."""


class MainAgentConfig(BaseModel):
    """What the default mode's main agent acts with."""

    model_config = FORBID

    tools: Literal["code", "bash"] = "code"
    """`code`: bash, python, the editor, view_image and (with compaction) plan; `bash`: bash and
    finish only (the `bash-only` ablation)."""
    computer: bool = False
    """The main agent holds the `computer` tool itself and `delegate` offers no `gui` specialist
    (the `no-act` ablation: the screen is not handed to a specialist)."""


class SubagentConfig(BaseModel):
    """Delegation to fresh-context specialists."""

    model_config = FORBID

    enabled: list[Literal["worker", "gui", "web"]] = Field(
        default_factory=lambda: ["worker", "gui", "web"]
    )
    """Which specialists `delegate` may start."""
    max_turns: int = Field(50, ge=1)
    """Model turns of one delegation."""
    worker_depth: Literal[1, 2] = 1
    """1 = flat delegation; 2 lets a worker delegate to a worker (the depth ablation)."""
    nested_gate: bool = False
    """Give workers a finish gate of their own (the nested ablation)."""


class TaskStateConfig(BaseModel):
    """The verifier-committed task state (requirements, values, evidence)."""

    model_config = FORBID

    enabled: bool = False
    """Keep a task state (one tool-less model call at start); `andor` and `lstc` use it when on."""
    milestones: bool = True
    """Snapshot the sandbox whenever a requirement turns VERIFIED, so `--resume` starts from
    there."""
    boundary_checks: bool = True
    """Re-run the requirements' stored probes when a subagent or action node returns."""


class StallConfig(BaseModel):
    """Stall and loop detection with routed responses."""

    model_config = FORBID

    enabled: bool = True
    """Watch for repeated actions, no progress and repeated gate gaps."""
    repeat_limit: int = Field(3, ge=2)
    """The same action with the same observation this many times in a row is a loop."""
    no_progress_turns: int = Field(6, ge=1)
    """This many turns with no file change and no new tool output is a stall."""
    gate_repeats: int = Field(2, ge=1)
    """This many consecutive gate rejections with the same gaps is a loop."""
    calm_after: int = Field(3, ge=1)
    """Turns in a row that change files (as the harness sees them) after which the escalation falls
    back one level; a requirement turning VERIFIED falls it back at once."""


class AndOrConfig(BaseModel):
    """The `andor` control mode: a framework-owned AND/OR tree."""

    model_config = FORBID

    max_depth: int = Field(3, ge=0)
    """Nodes deeper than this are always actions."""
    revision_budget: int = Field(2, ge=0)
    """Repairs one AND/OR node may get before it is pruned."""
    max_actions: int = Field(24, ge=1)
    """Action nodes the whole run may execute."""
    worker_turns: int = Field(30, ge=1)
    """Model turns of one action node's worker."""
    tree_updates: bool = True
    """Ask the model after each succeeded action whether pending nodes should be pruned or
    refined."""
    track_candidates: bool = True
    """Summarize each action's observations into the summarizer's representations (interaction
    history, progress, notes, constraints, observation, action history, and the candidate table
    checked against the constraints); the root may not finish while fewer candidates than needed
    meet them."""
    grain: Literal["op", "subtask"] = "subtask"
    """What one action node is: `op`, one browser or GUI operation chosen by one model call (the
    paper's grain); `subtask`, a whole worker or specialist loop of up to `worker_turns` turns."""
    repair: bool = True
    """Repair a failed AND/OR node while its revision budget lasts (off: the Repair ablation)."""
    alternatives: bool = True
    """An OR node tries its next alternative when one fails (off: the OR ablation; the first
    alternative run is the only one)."""


class LstcConfig(BaseModel):
    """The `lstc` control mode: long-term control state plus short commitments."""

    model_config = FORBID

    max_actions_per_step: int = Field(4, ge=1)
    """Actions one commitment may hold."""
    evidence_items: int = Field(12, ge=1)
    """Evidence lines kept in the long-term state."""
    repair_retries: int = Field(3, ge=0)
    """Retries with the parse error when an answer is not the required JSON (the seed: 3)."""
    action_timeout_s: float = Field(180.0, gt=0)
    """Timeout of one bash or python action."""
    no_change_steps: int = Field(3, ge=1)
    """Steps in a row changing no file, not the screen and no output: a stall (the seed: 3)."""
    abstraction: Literal["model", "lines"] = "model"
    """Step Abstraction: `model` (a model call sees the action, its output, the changed files and,
    for a GUI action, the screenshot) or `lines` (the output's first and last lines)."""
    refine_min: int = Field(5, ge=1)
    """Context refinement runs on an evidence-backed advance once this many steps are not yet
    summarized (the seed: 5)."""
    refine_max: int = Field(20, ge=1)
    """... and at the latest after this many unsummarized steps, advance or not (the seed: 20)."""
    refinement: bool = True
    """Context refinement on (off: the `w/o refinement` ablation)."""
    l2s: bool = True
    """Long-to-Short planning: the planner sees the long-term state, the screen and domain notes
    and compares candidate proposals (off: it sees the task and the last feedback only)."""
    s2l: bool = True
    """Short-to-Long control: a proposed subgoal is adopted only when its step's evidence shows
    progress (off: adopted before execution and kept whatever happens)."""
    suppression: bool = True
    """Refuse repeated equivalent actions before they run, at the seed's thresholds (GUI decision
    3 planner calls, GUI action-result 5, bash or python action-result 3)."""
    final_verification: bool = True
    """With the gate off, `done` goes to Final Verification (history plus first and last
    screenshots, PASS/FAIL); off: `done` is taken at its word (the `w/o Final Verification` arm)."""
    planner_screenshot: bool = True
    """Show the planner the current screenshot when the run has a screen."""
    screenshot_scale: float = Field(0.5, gt=0, le=1)
    """Downscaling of the planner's and the final verifier's screenshots."""
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


class StructAgentConfig(BaseModel):
    """The `structagent` control mode: planner -> actor -> verifier over the unified state."""

    model_config = FORBID

    verifier: Literal["structured", "visual", "off"] = "structured"
    """Who commits a subgoal: `structured` (stored and verifier-written probes, a model verifier
    whose claim a determinate probe overrides), `visual` (the model verifier on the screenshot
    alone, the paper's visual-only verifier), `off` (the actor's report commits its targets: the
    `w/o verifier` ablation)."""
    memory: bool = True
    """Read the lesson store's lessons into the planner's state when `--memory` is given (off:
    the `w/o memory` ablation)."""
    step_verifier: bool = True
    """After each actor step that can change the screen or the files, the low-level verifier
    compares before and after (complete / continue / no_effect / off_track / stuck), as the paper's
    actor loop does (off: the actor runs until it reports)."""
    auditor: bool = True
    """When the finish gate is off, a DONE the structured gate accepted is audited by a separate
    model over the final state (PASS/FAIL); off: the structured gate alone decides."""
    judge: bool = True
    """Under `--best-of`, a judge compares the finished rollouts' final states (off: the fixed
    ranking, which also decides when the judge cannot)."""
    judge_model: str | None = None
    """Model spec of the best-of-N judge; None: the gate's model, else the agents'."""
    actor_turns: int = Field(20, ge=1)
    """Model turns the actor may take on one subgoal."""
    max_subgoals: int = Field(30, ge=1)
    """Subgoals the planner may issue in one run."""
    max_done_refusals: int = Field(4, ge=1)
    """DONE claims refused before the run ends as `done_refused`."""


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
    main: MainAgentConfig = Field(default_factory=MainAgentConfig)
    """The main agent's tools (the ablations' switches)."""
    preset: Literal[tuple(PRESETS)] = "full"
    """The ablation whose switches `with_preset` sets: full, no-act, no-verify, no-sustain,
    bash-only (recorded with the result as its label)."""
    control: str = Field("stateact", min_length=1)
    """Control mode: stateact (default), andor, lstc, screenshot (the baseline) or another name
    registered in `harness/control/registry.py` (which checks it when the run starts)."""
    task_state: TaskStateConfig = Field(default_factory=TaskStateConfig)
    """The verifier-committed task state and its milestones."""
    stall: StallConfig = Field(default_factory=StallConfig)
    """Stall and loop detection."""
    andor: AndOrConfig = Field(default_factory=AndOrConfig)
    """Settings of the `andor` control mode."""
    lstc: LstcConfig = Field(default_factory=LstcConfig)
    """Settings of the `lstc` control mode."""
    structagent: StructAgentConfig = Field(default_factory=StructAgentConfig)
    """Settings of the `structagent` control mode."""
    screenshot: ScreenshotConfig = Field(default_factory=ScreenshotConfig)
    """Settings of the `screenshot` control mode (the baseline)."""
    main_display: bool = False
    """In the `stateact` mode, give the main agent's bash and Python sessions the X display and the
    session bus (off: the display belongs to the GUI specialist)."""
    best_of: int = Field(1, ge=1, le=MAX_BEST_OF)
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
    sites: str | None = None
    """The WebArena sites file (`--sites FILE`, docs/webarena.md)."""
    judge_model: str | None = None
    """The model judging WebArena's `fuzzy_match` answers (`--judge-model SPEC`)."""

    model_config = ConfigDict(
        extra="forbid", use_attribute_docstrings=True, protected_namespaces=()
    )

    @property
    def cache_path(self) -> Path | None:
        """`cache_dir` as a path (None: no cache)."""
        return Path(self.cache_dir) if self.cache_dir else None

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
            "gate": self.gate.enabled,
            "sustain": self.compaction.enabled,
            "main_tools": self.main.tools,
            "main_computer": self.main.computer,
            "delegation": [*self.subagents.enabled],
            "worker_depth": self.subagents.worker_depth,
            "nested_gate": self.subagents.nested_gate,
            "gate_mode": self.gate.mode,
            "main_display": self.main_display,
            **mode_options(self),
        }

    @model_validator(mode="after")
    def _set_preset_switches(self) -> RunConfig:
        return self._apply_preset()

    def with_preset(self) -> RunConfig:
        """A copy with the preset's switches set (again: `preset` may have been assigned after
        the config was built)."""
        return self.model_copy(deep=True)._apply_preset()

    def _apply_preset(self) -> RunConfig:
        for path, value in PRESETS[self.preset].items():
            *sections, name = path.split(".")
            target = self
            for section in sections:
                target = getattr(target, section)
            setattr(target, name, copy.deepcopy(value))
        if self.main.computer:  # the screen is the main agent's own: no GUI specialist
            self.subagents.enabled = [n for n in self.subagents.enabled if n != "gui"]
        if self.control == "screenshot" and not self.screenshot.gate:  # the baseline's default
            self.gate.enabled = False
        return self
