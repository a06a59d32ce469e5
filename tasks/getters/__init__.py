"""OSWorld getters. Importing this package registers every getter in `registry.GETTERS`."""

from tasks.getters import apps, chrome, chrome_live, desktop, files, web  # noqa: F401
from tasks.getters.registry import (
    GETTERS,
    GetterContext,
    RootDirSource,
    SandboxSource,
    StateSource,
    as_list,
    getter,
    run_getter,
    work_path,
)

__all__ = [
    "GETTERS",
    "GetterContext",
    "RootDirSource",
    "SandboxSource",
    "StateSource",
    "as_list",
    "getter",
    "run_getter",
    "work_path",
]
