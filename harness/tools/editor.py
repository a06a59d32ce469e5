"""`str_replace_based_edit_tool`: view, create and edit files in the sandbox (Anthropic's
editor)."""

from __future__ import annotations

from dataclasses import fields

from harness.kernel.core import ToolResult, ToolSpec
from sandboxes.toolbox.protocol import EditorRun
from sandboxes.typed import run

EDIT_COMMANDS = ("view", "create", "str_replace", "insert", "undo_edit")

EDITOR_OPTIONS = {f.name for f in fields(EditorRun)} - {"command", "path"}
"""The editor's own parameters; others a model adds are not sent (the toolbox ignored them)."""


class EditorTool:
    name = "str_replace_based_edit_tool"

    def __init__(self, sandbox, commands: tuple[str, ...] = EDIT_COMMANDS):
        self.sandbox = sandbox
        self.commands = commands

    def spec(self) -> ToolSpec:
        read_only = self.commands == ("view",)
        return ToolSpec(
            name=self.name,
            description=(
                "View files and directories (read-only)."
                if read_only
                else "View, create and edit text files. `view` shows numbered lines (or a "
                "directory listing); `create` writes a new file; `str_replace` replaces text that "
                "occurs exactly once; `insert` adds text after a line; `undo_edit` reverts the "
                "last edit. Paths are absolute."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "command": {"type": "string", "enum": list(self.commands)},
                    "path": {"type": "string", "description": "Absolute path."},
                    "file_text": {"type": "string"},
                    "old_str": {"type": "string"},
                    "new_str": {"type": "string"},
                    "insert_line": {"type": "integer"},
                    "insert_text": {"type": "string"},
                    "view_range": {"type": "array", "items": {"type": "integer"}},
                },
                "required": ["command", "path"],
            },
            # The native editor cannot be limited to `view`, so the gate's read-only editor is a
            # plain tool.
            native_type=None if read_only else "text_editor_20250728",
        )

    def __call__(self, command: str, path: str, **params) -> ToolResult:
        if command not in self.commands:
            return ToolResult(
                error=f"The command {command!r} is not available here; use one of: "
                f"{', '.join(self.commands)}."
            )
        given = {name: value for name, value in params.items() if name in EDITOR_OPTIONS}
        return ToolResult(output=run(self.sandbox, EditorRun(command, path, **given)).output)
