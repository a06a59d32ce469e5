"""The `screenshot` control mode: the paper's baseline, a model that sees the desktop only through
screenshots and acts only through a computer tool.

Its tools are the GUI specialist's `computer` tool (Anthropic's computer-use tool type for Claude
models, the same actions as a function tool for others; its scaling is the specialist's) and
`finish` (with `infeasible`). No bash, Python, editor, specialists or plan. It runs on the same
desktop sandbox, task setup and checkers as every other mode. The first message holds a screenshot
and the instruction, as OSWorld's Claude agent sends them; only the newest screenshots stay in the
history (`ImageWindow`). The finish gate is off unless `screenshot.gate` turns it on
(`RunConfig.with_preset`); it is the only review, with no task state or leaf guard.
"""

from __future__ import annotations

from pathlib import Path

from harness.kernel.core import BudgetExceeded, Finished, image_block
from harness.kernel.loop import LoopHook, ToolLoop
from harness.run.context import RunContext
from harness.tools import FinishTool
from subagents import ComputerTool, Desktop

from .finish import gate_review
from .memory import with_lessons
from .registry import control_mode

PROMPT = Path(__file__).resolve().parents[1] / "prompts" / "screenshot_agent.md"
REMOVED_IMAGE = "[an older screenshot was removed from the history]"


class ImageWindow(LoopHook):
    """Keeps the newest `keep` screenshots of the history (Anthropic's reference loop's
    `only_n_most_recent_images`): older ones are replaced by a short text, in chunks of `keep`, so
    the history's prefix changes only every `keep` screenshots and the provider's prompt cache keeps
    hitting in between. `keep` 0 keeps them all."""

    def __init__(self, keep: int):
        self.keep = keep
        self.removed = 0

    def before_request(self, loop: ToolLoop) -> None:
        if self.keep <= 0:
            return
        slots = list(_image_slots(loop.messages))
        excess = len(slots) - self.keep
        excess -= excess % self.keep
        for content, index in slots[:excess]:
            content[index] = {"type": "text", "text": REMOVED_IMAGE}
        self.removed += max(0, excess)


def _image_slots(messages: list[dict]):
    """(content list, index) of every image in the user turns, oldest first (tool results too)."""
    for message in messages:
        if message["role"] != "user":
            continue
        for block in message["content"]:
            if block.get("type") == "image":
                yield message["content"], message["content"].index(block)
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                inner = block["content"]
                for index, item in enumerate(inner):
                    if item.get("type") == "image":
                        yield inner, index


class ScreenshotController:
    """Runs the baseline agent for one task; `run` returns `Finished` or `BudgetExceeded`."""

    def __init__(self, context: RunContext, review=None):
        """`review` is the finish gate's (None: no gate, the baseline's default)."""
        self.context = context
        config = context.config
        self.desktop = Desktop(context.sandbox, tuple(config.sandbox.display_size))
        self.computer = ComputerTool(self.desktop, context.model.name, context.stats)
        self.window = ImageWindow(config.screenshot.keep_images)
        self.loop = ToolLoop(
            context.model,
            [self.computer, *context.extra_tools, FinishTool(self.steps_taken, review)],
            PROMPT.read_text(encoding="utf-8"),
            agent="main",
            config=config.loop,
            scope=context,
            hooks=[self.window],
        )

    def steps_taken(self) -> int:
        return sum(n for name, n in self.loop.tool_counts.items() if name != "finish")

    def run(self, resume: bool = False, since_event_index: int = 0) -> Finished | BudgetExceeded:
        """Start from a screenshot and the instruction. A resumed run starts the loop again: the
        baseline keeps no state besides its history of screenshots."""
        screen = self.desktop.screenshot(self.computer.scale.declared)
        instruction = with_lessons(self.context)
        end = self.loop.run([image_block(screen), {"type": "text", "text": instruction}])
        if self.context.record is not None and self.window.removed:
            self.context.record.append(
                "screenshots_trimmed", agent="harness", removed=self.window.removed
            )
        return end


@control_mode("screenshot")
class ScreenshotMode:
    """`--control screenshot`: the baseline's loop; `finish` reviews only when `screenshot.gate`."""

    def run(self, context: RunContext) -> Finished | BudgetExceeded:
        controller = ScreenshotController(context, gate_review(context))
        return controller.run(resume=context.resume, since_event_index=context.since_event_index)
