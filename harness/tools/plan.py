"""`plan`: a checklist kept outside the message history and shown to the model again every turn."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.kernel.core import ToolError, ToolResult, ToolSpec

STATUSES = ("pending", "in_progress", "done", "blocked")
MARKS = {"pending": "[ ]", "in_progress": "[~]", "done": "[x]", "blocked": "[!]"}
MAX_ITEMS = 50


@dataclass
class Plan:
    """The externalized plan: what the agent means to do and how far it got."""

    items: list[dict] = field(default_factory=list)

    def render(self) -> str:
        if not self.items:
            return "(no plan yet: call `plan` to write a checklist)"
        return "\n".join(f"{MARKS[item['status']]} {item['text']}" for item in self.items)


class PlanTool:
    name = "plan"

    def __init__(self, plan: Plan, on_change=None):
        self.plan = plan
        self.on_change = on_change

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=(
                "Write or update your checklist (replaces the whole list). It is kept outside the "
                "conversation and shown to you every turn, so it survives context compaction. Keep "
                "items concrete: the artifact, the check that shows it is done."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "text": {"type": "string"},
                                "status": {"type": "string", "enum": list(STATUSES)},
                            },
                            "required": ["text", "status"],
                        },
                    }
                },
                "required": ["items"],
            },
        )

    def __call__(self, items: list) -> ToolResult:
        if not isinstance(items, list) or len(items) > MAX_ITEMS:
            raise ToolError(f"`items` must be a list of at most {MAX_ITEMS} checklist entries.")
        cleaned = []
        for index, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                raise ToolError(f"items[{index}] needs a `text` string and a `status`.")
            status = item.get("status", "pending")
            if status not in STATUSES:
                raise ToolError(f"items[{index}].status must be one of: {', '.join(STATUSES)}.")
            cleaned.append({"text": item["text"].strip(), "status": status})
        self.plan.items = cleaned
        if self.on_change:
            self.on_change(self.plan)
        return ToolResult(output="Plan updated:\n" + self.plan.render())
