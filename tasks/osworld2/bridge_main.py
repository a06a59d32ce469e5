"""Runs inside the user's OSWorld-V2 environment (its interpreter, its dependencies) and drives the
benchmark's own code for one task, answering StateAct over JSON lines. Standard library only: it
must start under whatever Python the checkout was installed with, and it imports nothing of
StateAct.

    python bridge_main.py CHECKOUT       (requests on stdin, answers on the original stdout)

Requests: {"op": "describe", "task_file"} (the task's instruction, phases and applications,
with no machine: for a dry run), {"op": "load", "task_file", "endpoint", "screen", "cache_dir"},
{"op": "setup", "phase"}, {"op": "evaluate", "phase"}, {"op": "ask", "question"}, {"op":
"close"}. Each answer is {"ok": true, …} or {"ok": false, "error": "<one sentence>"}.

What the benchmark's code prints goes to stderr, so nothing it writes can pass for an answer. The
benchmark's judge and user-simulator calls are wrapped so that each one (inputs, answer, error) is
reported with the verdict: a judge that failed or answered nothing makes the evaluation an error
upstream might have turned into a silent 0.
"""

import importlib
import json
import os
import sys
import traceback

JUDGE_MODULE = "desktop_env.evaluators.model_client"
JUDGE_FUNCTIONS = ("generate_text", "generate_chat")
SIMULATOR_MODULE = "desktop_env.user_simulator"
OPERATIONS = ("describe", "load", "setup", "evaluate", "ask", "close")


class Bridge:
    def __init__(self, checkout):
        sys.path.insert(0, checkout)
        self.env = None
        self.task = None
        self.phases = []
        self.simulator = None
        self.judge_calls = []

    # the benchmark's pieces ----------------------------------------------------------------------
    def wrap_judges(self):
        try:
            module = importlib.import_module(JUDGE_MODULE)
        except ImportError:
            return
        for name in JUDGE_FUNCTIONS:
            original = getattr(module, name, None)
            if callable(original) and not getattr(original, "_stateact_wrapped", False):
                setattr(module, name, self.recorded(name, original))

    def recorded(self, name, function):
        def call(*args, **kwargs):
            entry = {"function": name, "inputs": _jsonable({"args": args, "kwargs": kwargs})}
            self.judge_calls.append(entry)
            try:
                answer = function(*args, **kwargs)
            except Exception as exc:
                entry["error"] = f"{type(exc).__name__}: {exc}"
                raise
            entry["answer"] = _jsonable(answer)
            if answer is None or (isinstance(answer, str) and not answer.strip()):
                entry["error"] = "the judge answered nothing"
            return answer

        call._stateact_wrapped = True
        return call

    def read_task(self, task_file):
        loader = importlib.import_module("desktop_env.task_loader")
        self.task = loader.load_task_from_file(task_file)
        get_phases = getattr(self.task, "get_phases", None)
        self.phases = list(get_phases()) if callable(get_phases) else [self.task]

    def describe(self, request):
        self.read_task(request["task_file"])
        return self.summary(has_user=bool(getattr(self.task, "user_simulator", None)))

    def summary(self, has_user):
        return {
            "instruction": _phase_value(self.phases[0], "instruction", self.task),
            "phases": [_phase_value(p, "instruction", self.task) for p in self.phases],
            "related_apps": list(getattr(self.task, "related_apps", []) or []),
            "domain": getattr(self.task, "domain", None),
            "has_user": has_user,
        }

    def load(self, request):
        self.wrap_judges()
        self.read_task(request["task_file"])
        desktop_env = importlib.import_module("desktop_env.desktop_env")
        width, height = request.get("screen") or (1920, 1080)
        self.env = desktop_env.DesktopEnv(
            provider_name="remote",
            path_to_vm=request["endpoint"],
            action_space="pyautogui",
            screen_size=(int(width), int(height)),
            headless=True,
            os_type="Ubuntu",
            require_a11y_tree=False,
            cache_dir=request.get("cache_dir") or "cache",
        )
        simulator = getattr(self.task, "user_simulator", None)
        if simulator:
            module = importlib.import_module(SIMULATOR_MODULE)
            self.simulator = module.LLMUserSimulator(simulator)
        return self.summary(has_user=self.simulator is not None)

    def phase(self, request):
        index = int(request.get("phase", 0))
        if not 0 <= index < len(self.phases):
            raise ValueError(f"phase {index} does not exist (the task has {len(self.phases)})")
        return self.phases[index]

    def setup(self, request):
        self.env.reset(task_config=_task_config(self.phase(request)))
        return {}

    def evaluate(self, request):
        self.phase(request)
        self.judge_calls = []
        result = self.env.evaluate()
        details = result if isinstance(result, dict) else None
        score = result.get("score") if isinstance(result, dict) else result
        return {"score": float(score), "details": _jsonable(details), "judges": self.judge_calls}

    def ask(self, request):
        if self.simulator is None:
            return {"answer": None}
        return {"answer": str(self.simulator.respond(str(request["question"])))}

    def close(self, request):
        if self.env is not None and hasattr(self.env, "close"):
            self.env.close()
        return {}


def _phase_value(phase, name, task):
    if isinstance(phase, dict):
        return phase.get(name, getattr(task, name, None))
    return getattr(phase, name, getattr(task, name, None))


def _task_config(phase):
    """What `DesktopEnv.reset(task_config=…)` takes: a phase's `config` dict, or the phase itself
    when it is already the dict OSWorld's reset reads."""
    if isinstance(phase, dict):
        return phase
    config = getattr(phase, "task_config", None) or getattr(phase, "config", None)
    if not isinstance(config, dict):
        raise TypeError("the task (or phase) gives no task_config dict for DesktopEnv.reset")
    return config


def _jsonable(value):
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)[:2000]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bridge_main.py CHECKOUT")
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the benchmark's prints go to stderr
    sys.stdout = sys.stderr
    bridge = Bridge(sys.argv[1])
    for line in sys.stdin:
        request = {}
        try:
            request = json.loads(line)
            if request.get("op") not in OPERATIONS:
                raise ValueError(f"unknown operation {request.get('op')!r}")
            answer = {"ok": True, **getattr(bridge, request["op"])(request)}
        except Exception as exc:
            traceback.print_exc()
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
        if request.get("op") == "close":
            break


if __name__ == "__main__":
    main()
