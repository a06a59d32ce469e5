"""Two phases whose setups each append a line to a log, and a report written over both: a run
stopped inside the second phase and resumed must end with each setup's line once and each
report line once (`equals` checkpoints)."""

related_apps = ["terminal"]
domain = "os"
instruction = "Write 'alpha' into ~/report.txt."


def _equals(name, path, expected, weight=1):
    return {"name": name, "weight": weight, "kind": "equals", "path": path, "expected": expected}


def get_phases():
    first = {
        "instruction": "Write 'alpha' into ~/report.txt.",
        "config": [{"type": "execute", "parameters": {"command": "echo one >> ~/setup-log.txt"}}],
        "evaluator": {
            "checkpoints": [_equals("report is alpha", "/home/user/report.txt", "alpha\n")]
        },
    }
    second = {
        "instruction": "Append 'beta', then 'gamma', to ~/report.txt.",
        "config": [{"type": "execute", "parameters": {"command": "echo two >> ~/setup-log.txt"}}],
        "evaluator": {
            "checkpoints": [
                _equals("report", "/home/user/report.txt", "alpha\nbeta\ngamma\n", weight=2),
                _equals("each setup once", "/home/user/setup-log.txt", "one\ntwo\n"),
            ]
        },
    }
    return [first, second]
