"""The agent must ask the user which colour to write; the simulated user knows it."""

related_apps = ["terminal"]
domain = "os"
instruction = "Ask the user for their favourite colour and write it into ~/colour.txt."
user_simulator = {"persona": "You are the user. Your favourite colour is teal."}
config = {
    "config": [],
    "evaluator": {
        "checkpoints": [
            {
                "name": "colour written",
                "weight": 1,
                "kind": "contains",
                "path": "/home/user/colour.txt",
                "expected": "teal",
            },
        ]
    },
}
