"""Which of OSWorld's applications a task needs: its `related_apps` and the programs it launches.

Names are OSWorld's (`libreoffice_calc`, `chrome`, `vs_code`, …); the task files spell them in
several ways, which ALIASES folds together. An image says which it provides in its
`osworld-apps.txt` (sandboxes/images/apps.py).
"""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath

from tasks.schema import Task

ALIASES = {
    "libreoffice calc": "libreoffice_calc",
    "calc": "libreoffice_calc",
    "writer": "libreoffice_writer",
    "impress": "libreoffice_impress",
    "vscode": "vs_code",
    "code": "vs_code",
    "browser": "chrome",
    "google-chrome": "chrome",
    "google-chrome-stable": "chrome",
    # Ubuntu's default player in OSWorld's VM; the image's player of videos is VLC.
    "ubuntu_media_player": "vlc",
    # OSWorld 2.0's applications by the programs that start them.
    "freecadcmd": "freecad",
    "mscore3": "musescore3",
    "melt": "shotcut",
    "wpp": "wps",
    "wps office": "wps",
}
# Getters whose starting answer comes from an application of OSWorld's VM: there GNOME Videos is
# the default player, so "which player opens videos" reads it until the agent picks VLC. In an image
# whose only video player is VLC the checker finds the task done before it starts.
STATE_APPS = {"default_video_player": "totem"}
# Programs launch steps start that belong to the system rather than to an application.
SYSTEM_PROGRAMS = {"pkill", "killall", "bash", "sh", "sleep", "xdg-open", "python", "python3"}
# Shell words that only prepare the command after them (`cd DIR && app`, `nohup app`).
SHELL_PREFIXES = {"cd", "export", "set", "source", ".", "exec", "env", "nohup", "setsid", "true"}


def app_name(name: str) -> str:
    """OSWorld's canonical name for an application name or a launched program."""
    key = name.strip().lower()
    return ALIASES.get(key, key)


def launched_program(command: str | list) -> str | None:
    """The program a launch step starts, by its base name: the first word that is not a
    `VAR=value` assignment or a shell word preparing it (`cd DIR &&`, `nohup`)."""
    if isinstance(command, str):
        try:
            separated = command.replace("&&", ";").replace("||", ";").replace(";", " ; ")
            words = shlex.split(separated)
        except ValueError:
            words = command.split()
    else:
        words = [str(word) for word in command]
    skipping_arguments = False
    for word in words:
        if word in (";", "&", "|"):
            skipping_arguments = False
        elif skipping_arguments or ("=" in word and not word.startswith(("-", "/"))):
            continue
        elif word in SHELL_PREFIXES:
            skipping_arguments = word in ("cd", "export", "set", "source", ".")
        else:
            return PurePosixPath(word).name
    return None


def required_apps(task: Task) -> list[str]:
    """Every application the task names or launches, or whose state its checker reads, canonical
    names, in first-seen order."""
    names = [app_name(app) for app in task.related_apps]
    for step in (*task.config, *task.evaluator.postconfig):
        if step.type != "launch":
            continue
        program = launched_program(step.parameters.get("command", ""))
        if program and program not in SYSTEM_PROGRAMS:
            names.append(app_name(program))
    for spec in (*task.evaluator.aligned("result"), *task.evaluator.aligned("expected")):
        for item in spec if isinstance(spec, list) else [spec]:
            if isinstance(item, dict) and item.get("type") in STATE_APPS:
                names.append(STATE_APPS[item["type"]])
    return list(dict.fromkeys(names))


def missing_apps(task: Task, provided: set[str] | dict[str, str]) -> list[str]:
    """The applications the task needs that `provided` lacks."""
    return [name for name in required_apps(task) if name not in provided]
