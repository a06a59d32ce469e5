"""Lint: no import inside a function may cross from one layer unit to another.

The units are the entries of the layers contract in pyproject.toml (`[tool.importlinter]`). A
function-level import that crosses units hides a dependency from the contract (or dodges a cycle);
lazy imports stay allowed within one unit and for third-party packages.
Usage: python .ci/function_imports.py [ROOT]   (exit 1 and one line per offence when any is found)
"""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path


def layer_units(pyproject: Path) -> tuple[list[str], list[str]]:
    config = tomllib.loads(pyproject.read_text())["tool"]["importlinter"]
    units = []
    for contract in config["contracts"]:
        for layer in contract.get("layers", ()):
            units += [name.strip() for name in layer.replace(":", "|").split("|")]
    return config["root_packages"], sorted(units, key=len, reverse=True)


def unit_of(module: str, units: list[str]) -> str | None:
    return next((u for u in units if module == u or module.startswith(u + ".")), None)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
        base = ".".join([*parts, base] if base else parts)
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def offences(root: Path) -> list[str]:
    packages, units = layer_units(root / "pyproject.toml")
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            module = module_name(path, root)
            own = unit_of(module, units)
            tree = ast.parse(path.read_text(), str(path))
            for func in ast.walk(tree):
                if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for node in ast.walk(func):
                    if not isinstance(node, ast.Import | ast.ImportFrom):
                        continue
                    names = imported(node, module, path.name == "__init__.py")
                    others = {unit_of(n, units) for n in names} - {None, own}
                    if others:
                        where = f"{path.relative_to(root)}:{node.lineno}"
                        found.append(f"{where}: {module} imports {names[0]} inside a function")
    return sorted(set(found))


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    found = offences(root)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
