"""A mock site's page: the agent saves it; its host name is built from WEBSITE_HOST_SUFFIX, as the
benchmark's `build_website_url` builds it (the suite's services answer under it)."""

import os

related_apps = ["terminal"]
domain = "web"
SITE = f"http://mailhub.{os.environ.get('WEBSITE_HOST_SUFFIX', 'unset.invalid')}:8000/hello.txt"
instruction = f"Save the page {SITE} as ~/site.txt."
config = {
    "config": [],
    "evaluator": {
        "checkpoints": [
            {
                "name": "page saved",
                "weight": 1,
                "kind": "contains",
                "path": "/home/user/site.txt",
                "expected": "mailhub is up",
            },
        ]
    },
}
