"""Runs inside the isolated process of check_python_file_by_test_suite (never imported by StateAct):
OSWorld's import-and-call of the test function, with its scoring of the return value.

Usage: python -I python_test_runner.py FOLDER TEST_FILE FUNCTION_NAME MARKER
"""

import importlib.util
import json
import os
import sys


def score(folder: str, test_file: str, name: str) -> float:
    os.chdir(folder)
    sys.path.insert(0, folder)
    try:
        spec = importlib.util.spec_from_file_location("stateact_test_suite", test_file)
        module = importlib.util.module_from_spec(spec)
        sys.modules["stateact_test_suite"] = module
        spec.loader.exec_module(module)
        test = getattr(module, name, None)
        if not callable(test):
            return 0.0
        result = test()
    except BaseException:  # noqa: BLE001 -- whatever the test does, it scores 0 when it fails
        return 0.0
    if isinstance(result, bool):
        return 1.0 if result else 0.0
    if isinstance(result, int | float):
        return max(0.0, min(1.0, float(result)))
    return 1.0 if bool(result) else 0.0


if __name__ == "__main__":
    folder, test_file, name, marker = sys.argv[1:5]
    value = score(folder, test_file, name)
    sys.stdout.flush()
    print(f"\n{marker}{json.dumps(value)}", flush=True)
