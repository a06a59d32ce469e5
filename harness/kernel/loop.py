"""The tool loop every StateAct agent runs: ask the model, run its tool calls, repeat until a
tool ends it.

The message list is the trajectory: each model turn and each batch of tool results is appended to
it and to the run record as it happens. Control flow is by exceptions: a tool raises `Finished`,
a budget check raises `BudgetExceeded`. The run's other parts (plan, task state, stall watch,
compaction) join at the named points of `LoopHook`; building a request has no side effects.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from harness.kernel.core import BudgetExceeded, Finished, Model, Tool, ToolError, ToolResult, Usage
from harness.kernel.records import RunRecord

log = logging.getLogger(__name__)

TOOLSET_KEY = "_toolset_name"  # set on tool_use blocks by the Anthropic client for toolset members
TOOLSET_NOT_RUN = "Not executed: an earlier computer action in this turn failed."
NO_TOOL_NUDGE = (
    "No tool was called. Keep working with the tools; when the work is done, call `{finish}`."
)
CUT_NUDGE = (
    "Your reply was cut off at the output limit (max_tokens). Continue from where it stopped, or "
    "call a tool."
)
CUT_CALL = (
    "Not run: your reply was cut off at the output limit (max_tokens) while writing this call, so "
    "its input is incomplete. Send it again in smaller parts (write a long file in several steps)."
)
MAX_CUT_REPLIES = 3  # cut replies in a row before the loop gives up and reports it


class LoopConfig(BaseModel):
    """Limits of one agent loop."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    max_turns: int = Field(150, ge=1)
    """Model turns this agent may take."""
    max_cost_usd: float | None = Field(None, ge=0)
    """Stop when the whole run (all agents) has cost this much."""
    max_wall_s: float | None = Field(None, ge=0)
    """Stop when the whole run has taken this many seconds."""


@dataclass
class RunStats:
    """Counters shared by every agent of one run (main agent, subagents, gate)."""

    usage: Usage = field(default_factory=Usage)
    model_turns: int = 0
    main_turns: int = 0
    tool_uses: int = 0
    delegations: int = 0
    gui_steps: int = 0
    started: float = field(default_factory=time.monotonic)
    on_turn: Callable[[RunStats], None] | None = None

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started


@dataclass(kw_only=True)
class RunScope:
    """What every agent of one run shares: the counters its budgets are checked against and the
    record its events go to. The run layer's `RunContext` is one; a lone loop gets a fresh one."""

    stats: RunStats = field(default_factory=RunStats)
    """Counters every agent of the run adds to."""
    record: RunRecord | None = None
    """The run directory's record; None writes nothing."""


class LoopHook:
    """A part of a run that joins the tool loop at named points; override the ones you need."""

    def before_request(self, loop: ToolLoop) -> None:
        """Before each model request (after the budget check): may act, e.g. compact the history."""

    def note(self, loop: ToolLoop) -> str:
        """Text riding on the next request's newest user turn. Pure: a request may be built
        twice."""
        return ""

    def after_tool_results(self, loop: ToolLoop) -> None:
        """After a turn's results (or the no-tool nudge) joined the history and the loop goes on:
        may act (call the sandbox, run a worker) or end the loop by raising `Finished`."""


class NoteHook(LoopHook):
    """A hook that only adds a note, from a function of no arguments (a plan, a task state)."""

    def __init__(self, render: Callable[[], str]):
        self.render = render

    def note(self, loop: ToolLoop) -> str:
        return self.render()


class ToolLoop:
    """One agent: a model, its tools, its history, and the limits it runs under."""

    def __init__(
        self,
        model: Model,
        tools: list[Tool],
        system: str,
        *,
        agent: str = "main",
        config: LoopConfig | None = None,
        scope: RunScope | None = None,
        hooks: list[LoopHook] = (),
    ):
        """The loop's `finish_tool` (named when the model answers without a tool call) is the tool
        whose class sets `ends_loop = True` (`finish`, the gate's `verdict`, a specialist's
        `report`)."""
        self.model = model
        self.tools = {tool.name: tool for tool in tools}
        self.specs = [tool.spec() for tool in tools]
        self.system = system
        self.agent = agent
        self.config = config or LoopConfig()
        scope = scope or RunScope()
        self.stats = scope.stats
        self.record = scope.record
        self.hooks = list(hooks)
        enders = [name for name, tool in self.tools.items() if getattr(tool, "ends_loop", False)]
        self.finish_tool = enders[0] if enders else "finish"
        self.messages: list[dict] = []
        self.turns = 0
        self.cut_replies = 0
        self.last_prompt_tokens = 0
        self.tool_counts: Counter[str] = Counter()

    def run(self, task: str | list[dict]) -> Finished | BudgetExceeded:
        """Run until a tool ends the loop or a budget runs out; returns that exception."""
        if not self.messages:
            content = [{"type": "text", "text": task}] if isinstance(task, str) else task
            self.messages.append({"role": "user", "content": content})
            self._record("task", content=content)
        while True:
            try:
                self.step()
            except (Finished, BudgetExceeded) as end:
                self._record("end", status=end.status, message=end.message)
                return end

    def step(self) -> None:
        self._check_budgets()
        for hook in self.hooks:
            hook.before_request(self)
        reply = self.model.complete(self.system, self.request_messages(), self.specs)
        self.turns += 1
        self.last_prompt_tokens = reply.usage.prompt_tokens
        self.stats.usage.add(reply.usage)
        self.stats.model_turns += 1
        if self.agent == "main":
            self.stats.main_turns += 1
        self.messages.append({"role": "assistant", "content": reply.content})
        self._record("model_turn", turn=self.turns, content=reply.content, usage=vars(reply.usage))
        if self.stats.on_turn:
            self.stats.on_turn(self.stats)
        cut = self._check_cut(reply)
        if not reply.tool_uses:
            nudge = CUT_NUDGE if cut else NO_TOOL_NUDGE.format(finish=self.finish_tool)
            self._append_user([{"type": "text", "text": nudge}])
            self._after_tool_results()
            return
        # A reply cut while writing a call ends in that call, whose input is then incomplete.
        cut_call = (
            reply.content[-1] if cut and reply.content[-1].get("type") == "tool_use" else None
        )
        results, ended, failed_toolsets = [], None, set()
        for block in reply.tool_uses:
            if block is cut_call:
                results.append(_result_block(block, ToolResult(error=CUT_CALL)))
                continue
            if ended is not None:
                results.append(
                    _result_block(block, ToolResult(error="Not run: the task already ended."))
                )
                continue
            toolset = block.get(TOOLSET_KEY)
            if toolset and toolset in failed_toolsets:
                # A toolset batch runs in order and stops at its first failure (Anthropic's
                # contract).
                results.append(_result_block(block, ToolResult(error=TOOLSET_NOT_RUN)))
                continue
            try:
                result = self.execute(block)
                results.append(_result_block(block, result))
                if toolset and result.error is not None:
                    failed_toolsets.add(toolset)
            except Finished as finished:
                results.append(
                    _result_block(block, ToolResult(output=finished.message or finished.status))
                )
                ended = finished
        self._append_user(results)
        if ended is not None:
            raise ended
        self._after_tool_results()

    def execute(self, block: dict) -> ToolResult:
        """Run one tool call; every problem the model can fix comes back as an error result."""
        self.stats.tool_uses += 1
        name, params = block.get("name"), block.get("input")
        self.tool_counts[str(name)] += 1
        tool = self.tools.get(name)
        if tool is None:
            return ToolResult(
                error=f"Unknown tool {name!r}; the tools are: {', '.join(self.tools)}."
            )
        if not isinstance(params, dict) or "__invalid_arguments__" in params:
            raw = params.get("__invalid_arguments__") if isinstance(params, dict) else params
            return ToolResult(
                error=f"The arguments for {name} were not a JSON object: {str(raw)[:300]}"
            )
        try:
            inspect.signature(tool.__call__).bind(**params)
        except TypeError as exc:
            return ToolResult(error=f"Bad arguments for {name}: {exc}.")
        try:
            return tool(**params)
        except ToolError as exc:
            return ToolResult(error=str(exc))

    def request_messages(self) -> list[dict]:
        """The history as sent: the hooks' notes (plan, task state, stall response) ride on the
        newest user turn only, so earlier turns stay byte-identical and the provider's prompt
        cache hits."""
        note = "\n".join(text for text in (hook.note(self) for hook in self.hooks) if text)
        if not note:
            return self.messages
        last = self.messages[-1]
        with_note = {**last, "content": [*last["content"], {"type": "text", "text": note}]}
        return [*self.messages[:-1], with_note]

    def _check_cut(self, reply) -> bool:
        """Whether `reply` was cut at the output limit; recorded, and too many in a row end the
        loop."""
        if reply.stop_reason != "max_tokens":
            self.cut_replies = 0
            return False
        self.cut_replies += 1
        self._record("output_cut", turn=self.turns, in_a_row=self.cut_replies)
        log.warning("%s: reply %d was cut at the output limit", self.agent, self.turns)
        if self.cut_replies >= MAX_CUT_REPLIES:
            raise BudgetExceeded(
                "output_limit",
                f"{self.agent}'s replies were cut at the output limit (max_tokens) "
                f"{self.cut_replies} times in a row; raise the model's max_tokens",
            )
        return True

    def _after_tool_results(self) -> None:
        for hook in self.hooks:
            hook.after_tool_results(self)

    def _append_user(self, content: list[dict]) -> None:
        self.messages.append({"role": "user", "content": content})
        self._record("tool_results", content=content)

    def _check_budgets(self) -> None:
        if self.turns >= self.config.max_turns:
            raise BudgetExceeded(
                "turn_limit", f"{self.agent} reached its {self.config.max_turns}-turn limit"
            )
        check_run_budgets(self.config, self.stats)

    def _record(self, event: str, **data) -> None:
        if self.record:
            self.record.append(event, agent=self.agent, **data)


def check_run_budgets(config: LoopConfig, stats: RunStats) -> None:
    """Raise BudgetExceeded when the whole run (all agents) is out of money or time."""
    if config.max_cost_usd is not None and stats.usage.cost_usd >= config.max_cost_usd:
        raise BudgetExceeded("cost_limit", f"the run reached its ${config.max_cost_usd} cost limit")
    if config.max_wall_s is not None and stats.elapsed_s >= config.max_wall_s:
        raise BudgetExceeded(
            "time_limit", f"the run reached its {config.max_wall_s:.0f} s time limit"
        )


def _result_block(tool_use: dict, result: ToolResult) -> dict:
    block = {
        "type": "tool_result",
        "tool_use_id": tool_use.get("id", ""),
        "content": result.to_blocks(),
        "is_error": result.error is not None,
    }
    if tool_use.get(TOOLSET_KEY):  # toolset members' results must echo their toolset
        block[TOOLSET_KEY] = tool_use[TOOLSET_KEY]
    return block
