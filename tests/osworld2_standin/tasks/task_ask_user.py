"""The agent must ask the user which colour to write; the simulated user knows it."""

related_apps = ["terminal", "chrome"]
domain = "os"
instruction = "Ask the user for their favourite colour and write it into ~/colour.txt."
user_simulator = {"persona": "You are the user. Your favourite colour is teal."}
PALETTE = "file:///home/user/palette.html"
config = {
    "config": [
        {
            "type": "upload_file",
            "parameters": {"path": "/home/user/palette.html", "content": "<h1>Colours</h1>\n"},
        },
        {
            "type": "launch",
            "parameters": {"command": ["google-chrome", "--remote-debugging-port=1337"]},
        },
        {
            "type": "launch",
            "parameters": {
                "command": "socat tcp-listen:9222,fork tcp:localhost:1337",
                "shell": True,
            },
        },
        {"type": "chrome_open_tabs", "parameters": {"urls_to_open": [PALETTE]}},
    ],
    "evaluator": {
        "checkpoints": [
            {
                "name": "colour written",
                "weight": 1,
                "kind": "contains",
                "path": "/home/user/colour.txt",
                "expected": "teal",
            },
            {"name": "palette open", "weight": 1, "kind": "chrome_tab", "expected": PALETTE},
        ]
    },
}
