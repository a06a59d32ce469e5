"""`python`: a persistent Python interpreter in the sandbox, for reading and writing program
state."""

from __future__ import annotations

from harness.kernel.core import ToolResult, ToolSpec
from sandboxes.toolbox.protocol import PythonRun
from sandboxes.typed import run

DEFAULT_TIMEOUT_S = 180.0


class PythonTool:
    name = "python"

    def __init__(self, sandbox, session: str = "default", timeout_s: float = DEFAULT_TIMEOUT_S):
        self.sandbox = sandbox
        self.session = session
        self.timeout_s = timeout_s

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=(
                "Run Python 3 code in a persistent interpreter inside the task's machine; "
                "variables and imports survive between calls. openpyxl, python-docx, "
                "python-pptx, lxml and sqlite3 are available. Prints and the value of a "
                "trailing expression are returned."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": "Python code to run."},
                    "timeout": {"type": "number", "description": "Seconds before interrupting."},
                },
                "required": ["code"],
            },
        )

    def __call__(self, code: str, timeout: float | None = None) -> ToolResult:
        request = PythonRun(code, timeout=float(timeout or self.timeout_s), session=self.session)
        result = run(self.sandbox, request)
        output = result.output
        if result.error:
            return ToolResult(error=(output + "\n" if output else "") + result.error)
        return ToolResult(output=output)
