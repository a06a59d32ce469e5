"""A mock site's state, as OSWorld 2.0's web tasks use it: the setup seeds the shop's cart through
its `/api/state` from the benchmark's process, the agent works on the site from the machine, and
the evaluation reads the state back from the benchmark's process."""

import os

related_apps = ["terminal"]
domain = "web"
SHOP = f"http://shop.{os.environ.get('WEBSITE_HOST_SUFFIX', 'unset.invalid')}"
instruction = (
    f"The shop {SHOP}/ keeps a cart at {SHOP}/api/state?cookie=osworld2 (GET reads it, POST "
    "replaces it). Save the cart as it is now to ~/cart.txt, then pay: replace it with 'paid'."
)
config = {
    "config": [
        {
            "type": "site_state",
            "parameters": {"site": "shop", "cookie": "osworld2", "state": "cart: 3 items"},
        }
    ],
    "evaluator": {
        "checkpoints": [
            {
                "name": "the seeded cart was read from the machine",
                "weight": 1,
                "kind": "contains",
                "path": "/home/user/cart.txt",
                "expected": "cart: 3 items",
            },
            {
                "name": "the cart is paid",
                "weight": 1,
                "kind": "site_state",
                "site": "shop",
                "cookie": "osworld2",
                "expected": "paid",
            },
        ]
    },
}
