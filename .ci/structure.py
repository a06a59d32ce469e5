"""Lint: no import circle among the project's modules, no function over 80 lines, none with more
than 6 parameters.

Circles: every import of a project module (at module level, at the bottom of a file or inside a
function; not under `if TYPE_CHECKING:`) is an arrow from the importing file to the imported one;
files that reach each other through arrows form a circle. A package's `__init__.py` that imports
its members is an arrow like any other, so a member must not import back from its package's
`__init__.py` (it imports the sibling module that defines the name, as `tasks/metrics/` does).

Sizes: a function's lines run from its `def` (decorators excluded) to its last line; its parameters
are all of them except `self`/`cls`, `*args` and `**kwargs` counted as one each. `ALLOWED`
names the few functions whose size is their purpose, each with its reason; `DEBT` the known ones
still to mend.
Usage: python .ci/structure.py [ROOT]   (exit 1 and one line per offence when any is found)
"""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

MAX_LINES = 80
MAX_PARAMS = 6

_API = "the Python API: its keyword options are the CLI's flags (docs/python-api.md)"
_TABLE = "a table of data (one entry per case or format), not logic"
ALLOWED: dict[str, str] = {
    "harness/api.py:make_config": _API,
    "harness/api.py:run_task": _API,
    "harness/api.py:run_suite": _API,
    "harness/api.py:run_batch": _API,
    "harness/api.py:run_code": _API,
    "harness/cli/run.py:add_run_options": "a CLI option builder: one add_argument per flag",
    "harness/apps/mcp_server.py:editor": "an MCP tool: its parameters are the tool's schema",
    "tasks/metrics/documents.py:compare_docx_files": "an OSWorld metric: OSWorld's option names",
    "gates/bench/cases.py:build_cases": _TABLE,
    "gates/bench/formats.py:kits": _TABLE,
    "bench/sandbox_bench.py:rows": "a table of measured rows, each beside its plain baseline",
}
"""`path:function` -> why it may be longer than MAX_LINES or wider than MAX_PARAMS."""

_MERGE = "waits for the branch in flight on this file (suite scripting / hardening)"
_WIDE7 = "one parameter over; to be grouped in a request object"
DEBT: dict[str, str] = {
    "harness/apps/suite_discovery.py:dry_run": _MERGE,
    "harness/apps/suite.py:run_suite": _MERGE,
    "harness/apps/suite.py:__init__": _MERGE,
    "harness/apps/ray/suite.py:run_suite_task": _MERGE,
    "harness/apps/ray/suite.py:run_suite_on_ray": _MERGE,
    "tasks/setup.py:run_setup": _MERGE,
    "tasks/support.py:dry_run_record": _MERGE,
    "harness/runner.py:run_task": "its keywords are called from about 35 places across branches",
    "harness/kernel/loop.py:__init__": _WIDE7,
    "gates/gate.py:__init__": _WIDE7,
    "gates/laid_out.py:gate_laid_out": _WIDE7,
    "gates/structural.py:_check_file": _WIDE7,
}
"""Known offences still to mend, each with why it waits; the list may only shrink (an entry that
no longer offends is reported, so it is removed)."""


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(inner) for stmt in node.body for inner in ast.walk(stmt)}
    return skipped


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".")
        parts = parts[: len(parts) - node.level + (1 if is_package else 0)]
        base = ".".join([*parts, base] if base else parts)
    return [f"{base}.{alias.name}" for alias in node.names] + [base]


def import_graph(root: Path, packages: list[str]) -> dict[str, set[str]]:
    """module -> the project modules it imports (each `from a import b` resolves to the module
    `a.b` when there is one, else to `a`)."""
    files = {
        module_name(p, root): p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))
    }
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        tree = ast.parse(path.read_text(), str(path))
        skipped = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom) or id(node) in skipped:
                continue
            targets = _targets(node, name, path.name == "__init__.py")
            if isinstance(node, ast.ImportFrom):
                *members, base = targets
                found = [m for m in members if m in files]
                # names that are not modules come from `base` itself
                targets = found + ([base] if len(found) < len(members) else [])
            graph[name] |= {t for t in targets if t in files and t != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _param_count(args: ast.arguments) -> int:
    names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    names = names[1:] if names[:1] in (["self"], ["cls"]) else names
    return len(names) + (args.vararg is not None) + (args.kwarg is not None)


def size_offences(root: Path, packages: list[str]) -> list[str]:
    found, excused = [], set()
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root)
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                key = f"{rel}:{node.name}"
                lines = node.end_lineno - node.lineno + 1
                params = _param_count(node.args)
                if lines <= MAX_LINES and params <= MAX_PARAMS:
                    continue
                if key in ALLOWED or key in DEBT:
                    excused.add(key)
                    continue
                found.append(
                    f"{rel}:{node.lineno}: {node.name} has {lines} lines and {params} parameters"
                    f" (at most {MAX_LINES} and {MAX_PARAMS})"
                )
    stale = sorted((set(ALLOWED) | set(DEBT)) - excused)
    return found + [f"{key}: listed in .ci/structure.py but no longer offends" for key in stale]


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    config = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]
    packages = [*config["root_packages"], "bench"]
    found = [f"import circle: {' <-> '.join(c)}" for c in circles(import_graph(root, packages))]
    found += size_offences(root, packages)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
