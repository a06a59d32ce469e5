"""`bash`: a persistent shell in the sandbox (Anthropic's bash tool semantics).

What the model reads follows Anthropic's reference bash tool (the computer-use demo's) where that
is sound: a restart answers "tool has been restarted.", a call without a command is the error
"no command provided.", and a timeout is an error that starts "timed out: bash has not returned
in N seconds". Unlike the reference, the timed-out command is interrupted and the shell stays
usable, its partial output is shown, and every result ends with its exit code and cwd
(docs/editor.md lists the differences).
"""

from __future__ import annotations

from harness.kernel.core import ToolResult, ToolSpec
from sandboxes.toolbox.protocol import BashRestart, BashRun
from sandboxes.typed import run

DEFAULT_TIMEOUT_S = 180.0
RESTARTED = "tool has been restarted."
NO_COMMAND = "no command provided."


class BashTool:
    name = "bash"

    def __init__(
        self,
        sandbox,
        session: str = "default",
        timeout_s: float = DEFAULT_TIMEOUT_S,
        local_imports: bool = False,
    ):
        self.sandbox = sandbox
        self.session = session
        self.timeout_s = timeout_s
        # Only asked for when set: an observer session whose python imports from its cwd.
        self.local_imports = local_imports or None

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=(
                "Run a command in a persistent bash shell inside the task's machine (user `user`, "
                "home /home/user). State (cwd, variables) persists between calls. A command "
                "that runs past its timeout is interrupted and its partial output returned. "
                "Use `restart: true` to get a fresh shell."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The bash command to run."},
                    "restart": {"type": "boolean", "description": "Restart the shell instead."},
                    "timeout": {"type": "number", "description": "Seconds before interrupting."},
                },
            },
            native_type="bash_20250124",
        )

    def __call__(
        self, command: str | None = None, restart: bool = False, timeout: float | None = None
    ) -> ToolResult:
        if restart:
            run(self.sandbox, BashRestart(session=self.session, local_imports=self.local_imports))
            return ToolResult(output=RESTARTED)
        if not command or not command.strip():
            return ToolResult(error=NO_COMMAND)
        request = BashRun(
            command,
            timeout=float(timeout or self.timeout_s),
            session=self.session,
            local_imports=self.local_imports,
        )
        result = run(self.sandbox, request)
        output = result.output.rstrip("\n")
        if result.timed_out:
            # The toolbox ends the output with the "timed out: ..." sentence.
            return ToolResult(error=f"{output}\n[cwd: {result.cwd}]")
        footer = f"[exit code: {result.exit_code}, cwd: {result.cwd}]"
        return ToolResult(output=f"{output}\n{footer}" if output else footer)
