"""Two files, one checkpoint each: evaluated inline after the first turn only the first is there
(0.5), after the second both (1.0)."""

related_apps = ["terminal"]
domain = "os"
instruction = "Write 'one' into ~/one.txt, then 'two' into ~/two.txt."
config = {
    "config": [{"type": "execute", "parameters": {"command": "rm -f ~/one.txt ~/two.txt"}}],
    "evaluator": {
        "checkpoints": [
            {
                "name": "one written",
                "weight": 1,
                "kind": "contains",
                "path": "/home/user/one.txt",
                "expected": "one",
            },
            {
                "name": "two written",
                "weight": 1,
                "kind": "contains",
                "path": "/home/user/two.txt",
                "expected": "two",
            },
        ]
    },
}
