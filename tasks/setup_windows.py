"""Shell text for OSWorld's window steps (activate, close) and for waiting on a launched
program's window, run by `tasks.setup` inside the sandbox's desktop session."""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath

WINDOW_WAIT_S = 30
"""How long an activate_window step waits for its window: the launch step before it only started
the program (Chrome or LibreOffice take seconds to map a window on a loaded machine)."""


# The image's `google-chrome` is Chromium (google-chrome.sh), whose windows end in "- Chromium"
# where Chrome's end in "- Google Chrome"; a step naming Chrome's window finds Chromium's.
WINDOW_TITLE_ALIASES = {"Google Chrome": "Chromium"}


def window_names(name: str) -> list[str]:
    """`name` and the title the image's stand-in program gives the same window."""
    names = [name]
    for title, stand_in in WINDOW_TITLE_ALIASES.items():
        if title in name:
            names.append(name.replace(title, stand_in))
    return names


def window_activate_script(
    name: str, strict: bool, by_class: bool, wait_s: int = WINDOW_WAIT_S
) -> str:
    """Shell text that raises the first window matching `name`, waiting up to `wait_s` seconds
    for it to appear; fails if none does.

    A loose title search falls back on the window class: OSWorld's tasks activate 'Terminal',
    whose title is `user@host: ~` on Ubuntu as here, and the class `gnome-terminal` names it.
    """
    flag = "--class" if by_class else "--name"
    searches = []
    for title in window_names(name):
        pattern = shlex.quote(f"^{_regex_escape(title)}$" if strict else _regex_escape(title))
        searches.append(f"xdotool search --onlyvisible {flag} {pattern}")
        if not strict and not by_class:
            searches.append(f"xdotool search --onlyvisible --class {pattern}")
    search = "{ " + "; ".join(searches) + "; }"
    return (
        f"deadline=$((SECONDS + {int(wait_s)})); until wid=$({search} 2>/dev/null | head -n1); "
        f'[ -n "$wid" ] || [ $SECONDS -ge $deadline ]; do sleep 0.5; done; '
        f'if [ -n "$wid" ]; then xdotool windowactivate --sync "$wid"; '
        f"else wmctrl {'-x ' if by_class else ''}-a {shlex.quote(name)}; fi"
    )


def window_close_script(name: str, strict: bool, by_class: bool) -> str:
    flag = "--class" if by_class else "--name"
    searches = []
    for title in window_names(name):
        pattern = shlex.quote(f"^{_regex_escape(title)}$" if strict else _regex_escape(title))
        searches.append(f"xdotool search {flag} {pattern}")
    return (
        f"wid=$({{ {'; '.join(searches)}; }} 2>/dev/null | head -n1); "
        f'if [ -n "$wid" ]; then xdotool windowclose "$wid"; '
        f"else wmctrl {'-x ' if by_class else ''}-c {shlex.quote(name)}; fi"
    )


def _regex_escape(text: str) -> str:
    # xdotool takes POSIX extended regexes; escape their metacharacters.
    return "".join("\\" + c if c in ".^$*+?()[]{}|\\" else c for c in text)


# Programs whose launch opens a window the next steps act on (OSWorld's VM shows it at once; here
# it can take seconds under load, and a pyautogui step sent before it is lost).
GUI_PROGRAMS = {
    *("libreoffice", "soffice", "gimp", "vlc", "thunderbird", "code", "nautilus"),
    *("google-chrome", "google-chrome-stable", "chromium", "gnome-terminal"),
}
VISIBLE_WINDOWS = "xdotool search --onlyvisible --name '' 2>/dev/null | sort"


def opens_a_window(program: str | None) -> bool:
    return program is not None and PurePosixPath(program).name in GUI_PROGRAMS


WINDOW_POLL_S = 0.1
"""Between looks for a window: a setup step is done this much sooner on average than at 0.5 s, for
one xdotool process each time."""


def new_window_script(before: str, wait_s: int = WINDOW_WAIT_S) -> str:
    """Shell text that waits up to `wait_s` seconds for a visible window not in `before` (the
    output of VISIBLE_WINDOWS taken before the launch); fails if none comes."""
    return (
        f"before={shlex.quote(before)}; deadline=$((SECONDS + {int(wait_s)})); "
        f'until [ -n "$(comm -13 <(printf "%s" "$before") <({VISIBLE_WINDOWS}))" ]; do '
        f"[ $SECONDS -ge $deadline ] && exit 1; sleep {WINDOW_POLL_S}; done"
    )


def titled_window_script(title_part: str, wait_s: int = WINDOW_WAIT_S) -> str:
    """Shell text that waits up to `wait_s` seconds for a visible window whose title contains
    `title_part`; fails if none comes. LibreOffice maps a blank frame titled "LibreOffice 7.4"
    first and names it after the document once the document has loaded (about a second later):
    a document is open when its window bears its name."""
    pattern = shlex.quote(_regex_escape(title_part))
    return (
        f"deadline=$((SECONDS + {int(wait_s)})); "
        f"until xdotool search --onlyvisible --name {pattern} >/dev/null 2>&1; do "
        f"[ $SECONDS -ge $deadline ] && exit 1; sleep {WINDOW_POLL_S}; done"
    )
