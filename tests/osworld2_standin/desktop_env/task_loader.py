"""Loads a task module (`task_<id>.py`) as an object with its module-level names."""

import importlib.util
import types


def load_task_from_file(path):
    spec = importlib.util.spec_from_file_location("standin_task", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    task = types.SimpleNamespace(**{k: v for k, v in vars(module).items() if not k.startswith("_")})
    return task
