"""`bash`: a persistent shell in the sandbox (Anthropic's bash tool semantics)."""

from __future__ import annotations

from harness.kernel.core import ToolResult, ToolSpec

DEFAULT_TIMEOUT_S = 180.0


class BashTool:
    name = "bash"

    def __init__(self, sandbox, session: str = "default", timeout_s: float = DEFAULT_TIMEOUT_S):
        self.sandbox = sandbox
        self.session = session
        self.timeout_s = timeout_s

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=(
                "Run a command in a persistent bash shell inside the task's machine (user `user`, "
                "home /home/user). State (cwd, variables) persists between calls. A command that runs "
                "past its timeout is interrupted and its partial output returned. Use `restart: true` "
                "to get a fresh shell."
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
            self.sandbox.call("bash.restart", session=self.session)
            return ToolResult(output="The shell was restarted.")
        if not command or not command.strip():
            return ToolResult(error="Give a `command` to run (or `restart: true`).")
        result = self.sandbox.call(
            "bash.run",
            command=command,
            session=self.session,
            timeout=float(timeout or self.timeout_s),
        )
        footer = f"[exit code: {result['exit_code']}, cwd: {result['cwd']}]"
        if result.get("timed_out"):
            footer = f"[timed out; cwd: {result['cwd']}]"
        output = result["output"].rstrip("\n")
        return ToolResult(output=f"{output}\n{footer}" if output else footer)
