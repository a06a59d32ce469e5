"""Which of OSWorld's applications an image provides, from its declared list `osworld-apps.txt`.

The list is part of the image definition (beside packages.txt), so the dry run's verdict follows
what the image installs rather than a table kept somewhere else. An image built FROM another has
what that one has: its declared list adds to its parent's (`osworld2` declares only what it adds to
`desktop`), and a name it lists again takes its own description.
"""

from __future__ import annotations

from pathlib import Path

from harness.kernel.core import StateActError
from sandboxes.images.build import PARENTS, definitions_dir

APPS_FILE = "osworld-apps.txt"


def parse_apps(text: str) -> dict[str, str]:
    """`name: what provides it` lines (comments and blank lines skipped) as {name: provider}."""
    apps: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, provider = line.partition(":")
        apps[name.strip().lower()] = provider.strip()
    return apps


def definition_name(image: str) -> str:
    """The definition an image name or reference comes from: `stateact-desktop:ab12` → `desktop`."""
    return image.split(":")[0].removeprefix("stateact-")


def declared_apps(image: str, definitions: Path | str | None = None) -> dict[str, str]:
    """The applications `image` declares, with those of the images it is built on; StateActError
    when the image has no definition."""
    name = definition_name(image)
    folder = definitions_dir(definitions) / name
    if not folder.is_dir():
        raise StateActError(f"there is no image definition named {image!r} in {folder.parent}.")
    parent = PARENTS.get(name)
    apps = declared_apps(parent, definitions) if parent else {}
    path = folder / APPS_FILE
    if path.is_file():
        apps.update(parse_apps(path.read_text(encoding="utf-8")))
    return apps
