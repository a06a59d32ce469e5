"""Two phases: write a report, then extend it; a rule checkpoint and a judge checkpoint."""

related_apps = ["terminal"]
domain = "os"
instruction = "Write 'alpha' into ~/report.txt."


def get_phases():
    first = {
        "instruction": "Write 'alpha' into ~/report.txt.",
        "config": [
            {
                "type": "upload_file",
                "parameters": {"path": "/home/user/notes.txt", "content": "the word is alpha\n"},
            },
            {"type": "execute", "parameters": {"command": "touch ~/phase-one-ready"}},
        ],
        "evaluator": {
            "checkpoints": [
                {
                    "name": "report has alpha",
                    "weight": 3,
                    "kind": "contains",
                    "path": "/home/user/report.txt",
                    "expected": "alpha",
                },
                {
                    "name": "judge likes it",
                    "weight": 1,
                    "kind": "judge",
                    "path": "/home/user/report.txt",
                    "question": "Does this report say alpha?",
                },
            ]
        },
    }
    second = {
        "instruction": "Append 'beta' to ~/report.txt.",
        "config": [{"type": "execute", "parameters": {"command": "touch ~/phase-two-ready"}}],
        "evaluator": {
            "checkpoints": [
                {
                    "name": "report has beta",
                    "weight": 1,
                    "kind": "contains",
                    "path": "/home/user/report.txt",
                    "expected": "beta",
                },
            ]
        },
    }
    return [first, second]
