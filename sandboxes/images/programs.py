"""Which programs an image provides, from its declared list `programs.txt`: the commands on the
sandbox's PATH, one per line, beside the image's other definition files.

The dry run reads the list (tasks/programs.py finds what a task's commands run), so its verdict
follows the image without starting it. The list is written from the built image
(`python -m sandboxes.images.programs NAME`) and a test compares it with the image, so it cannot
drift from what the image holds.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path

from harness.kernel.core import StateActError
from sandboxes.images.apps import definition_name
from sandboxes.images.build import definitions_dir, docker_client, image_ref

PROGRAMS_FILE = "programs.txt"
PATH_FOLDERS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
LIST_SCRIPT = (
    "for folder in " + " ".join(PATH_FOLDERS) + "; do "
    'for file in "$folder"/*; do [ -f "$file" ] && [ -x "$file" ] && echo "${file##*/}"; done; '
    "done | LC_ALL=C sort -u"
)
"""Shell text, run in the image, that lists the executable files on its PATH."""


def declared_programs(image: str, definitions: Path | str | None = None) -> set[str] | None:
    """The programs `image` declares, or None when its definition has no list (not checked)."""
    path = definitions_dir(definitions) / definition_name(image) / PROGRAMS_FILE
    return _read_programs(path.resolve())


@lru_cache(maxsize=16)
def _read_programs(path: Path) -> set[str] | None:
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def image_programs(image_ref: str) -> list[str]:
    """The programs on the PATH of a built image (a throwaway container with no network)."""
    from docker.errors import DockerException

    try:
        output = docker_client().containers.run(
            image_ref, ["bash", "-c", LIST_SCRIPT], network_mode="none", remove=True
        )
    except DockerException as exc:
        raise StateActError(f"listing the programs of {image_ref} failed: {exc}") from None
    return output.decode().split()


def main(argv: list[str]) -> int:
    """`python -m sandboxes.images.programs NAME`: NAME's programs.txt from its built image."""
    name = definition_name(argv[0])
    programs = image_programs(image_ref(name))
    path = definitions_dir(None) / name / PROGRAMS_FILE
    header = (
        f"# The programs on the {name} image's PATH: python -m sandboxes.images.programs {name}\n"
    )
    path.write_text(header + "\n".join(programs) + "\n", encoding="utf-8")
    print(f"{path}: {len(programs)} programs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
