"""Which programs a task's commands run: its setup and postconfig `execute` and `launch` steps and
the `command` of its checks' getters (`vm_command_line` and the like), so the dry run can name a
program the image lacks (`bc` in 3ce045a0's check) instead of calling the task runnable.

Shell text is read word by word (shlex, with the shell's operators split off): the first word of
each simple command, past assignments, keywords and wrappers (`sudo`, `timeout 10`, `nohup`), is
the program; `bash -c TEXT` is read inside. Shell builtins and keywords, `$VARIABLE` programs and
scripts named by a path outside the system's folders (`./setup.sh`, a downloaded `eval.sh` run as
`bash eval.sh`) are not programs an image provides, so they are left out.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

from tasks.schema import Task

BUILTINS = {
    *("alias", "bg", "break", "builtin", "cd", "command", "continue", "declare", "disown", "echo"),
    *("eval", "exec", "exit", "export", "false", "fg", "getopts", "hash", "help", "history"),
    *("jobs", "kill", "let", "local", "printf", "pwd", "read", "readonly", "return", "set"),
    *("shift", "shopt", "source", "test", "times", "trap", "true", "type", "typeset", "ulimit"),
    *("umask", "unalias", "unset", "wait", ".", ":", "[", "[[", "]]", "]"),
}
KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "in"}
LOOP_HEADERS = {"for", "case", "select", "function"}
"""Keywords whose words up to the next separator are not a command (`for f in *.txt; do`)."""
SEPARATORS = {";", "&", "&&", "|", "||", "|&", "(", ")", ";;", "\n"}
REDIRECTIONS = {"<", ">", ">>", "<<", "<<<", ">&", "<&", "&>", ">|"}
WRAPPERS = {"sudo", "nohup", "setsid", "env", "nice", "stdbuf", "time", "xargs", "exec", "command"}
"""Programs that run the command after them (their own options are skipped)."""
VALUED_WRAPPERS = {"timeout": 1}
"""Wrappers followed by a value before the command (`timeout 10 gsettings …`)."""
SHELLS = {"bash", "sh", "dash"}
SYSTEM_FOLDERS = ("/usr/", "/bin/", "/sbin/", "/opt/")


def split_substitutions(text: str) -> tuple[str, list[str]]:
    """`$( … )` and backtick command substitutions (quoted or not) taken out of `text`: the text
    with a placeholder word in their place, and their insides."""
    outer, inners, index = [], [], 0
    while index < len(text):
        if text.startswith("$(", index) and not text.startswith("$((", index):
            depth, end = 1, index + 2
            while end < len(text) and depth:
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                end += 1
            inners.append(text[index + 2 : end - 1])
            outer.append("$SUBSTITUTION")
            index = end
        elif text[index] == "`":
            end = text.find("`", index + 1)
            end = len(text) if end < 0 else end
            inners.append(text[index + 1 : end])
            outer.append("$SUBSTITUTION")
            index = end + 1
        else:
            outer.append(text[index])
            index += 1
    return "".join(outer), inners


def command_words(text: str) -> list[str]:
    """Shell text as words with the operators split off; [] when the quoting is broken."""
    text = text.replace("\n", " ; ")
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return []


def shell_programs(text: str) -> Iterator[str]:
    """The programs a line of shell runs."""
    text, inners = split_substitutions(text)
    for inner in inners:
        yield from shell_programs(inner)
    words = command_words(text)
    expecting, skip_to_separator, wrapper_values = True, False, 0
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word in SEPARATORS:
            expecting, skip_to_separator, wrapper_values = True, False, 0
            continue
        if skip_to_separator or not expecting:
            if word in ("do", "then") and skip_to_separator:
                expecting, skip_to_separator = True, False
            continue
        if word in REDIRECTIONS:
            index += 1  # the file after it
            continue
        if wrapper_values:
            wrapper_values -= 1
            continue
        if word in KEYWORDS or ("=" in word and not word.startswith(("-", "/", "="))):
            continue
        if word in LOOP_HEADERS:
            skip_to_separator = True
            continue
        if word.startswith("-"):  # a wrapper's option
            continue
        name = program_name(word)
        if name in WRAPPERS:
            continue
        if name in VALUED_WRAPPERS:
            wrapper_values = VALUED_WRAPPERS[name]
            continue
        expecting = False
        if name is None or name in BUILTINS:
            continue
        yield name
        if name in SHELLS and index + 1 < len(words) and words[index] == "-c":
            yield from shell_programs(words[index + 1])


def program_name(word: str) -> str | None:
    """The program a command word names, or None for a variable or a script outside the
    system's folders."""
    if not word or word.startswith("$"):
        return None
    if "/" in word:
        return PurePosixPath(word).name if word.startswith(SYSTEM_FOLDERS) else None
    return word


def argv_programs(command: list) -> Iterator[str]:
    """The programs an argument vector runs: its first word (and a shell's `-c` text)."""
    words = [str(word) for word in command]
    name = program_name(words[0]) if words else None
    if name is None:
        return
    if name in SHELLS or name in WRAPPERS or name in VALUED_WRAPPERS:
        yield from shell_programs(shlex.join(words))
    elif name not in BUILTINS:
        yield name


def command_programs(command: Any, shell: bool) -> Iterator[str]:
    if isinstance(command, str):
        yield from shell_programs(command)
    elif isinstance(command, list) and command:
        if shell:  # OSWorld joins a list with spaces before handing it to the shell
            yield from shell_programs(" ".join(str(word) for word in command))
        else:
            yield from argv_programs(command)


def task_commands(task: Task) -> Iterator[tuple[Any, bool]]:
    """(command, through a shell) of every execute or launch step and every getter with a
    `command`."""
    for step in (*task.config, *task.evaluator.postconfig):
        if step.type in ("execute", "command", "launch"):
            params = step.parameters
            yield params.get("command"), params.get("shell", False) in (True, "true", "True")
    for spec in (*task.evaluator.aligned("result"), *task.evaluator.aligned("expected")):
        for item in spec if isinstance(spec, list) else [spec]:
            if isinstance(item, dict) and "command" in item:
                yield item["command"], item.get("shell", False) in (True, "true", "True")


def required_programs(task: Task) -> list[str]:
    """Every program the task's commands run (the first word of python's `-c` code is python
    itself), in first-seen order."""
    names: dict[str, None] = {}
    for command, shell in task_commands(task):
        for name in command_programs(command, shell):
            names.setdefault(name, None)
    return list(names)


def missing_programs(task: Task, programs: set[str]) -> list[str]:
    """The programs the task runs that are not in `programs` (an image's declared list)."""
    return [name for name in required_programs(task) if name not in programs]


ROOT_STATE = {
    "timedatectl": "its check reads the system time zone (timedatectl), which only root sets",
    "getent": "its check reads the system's user accounts (getent), which only root creates",
}
"""Programs whose answer in a check is system state that only root can change: a task whose
check runs one needs the agent to have OSWorld's sudo."""


def root_reasons(task: Task) -> list[str]:
    """Why a right answer to `task` needs root in the sandbox (empty when it does not)."""
    found: dict[str, None] = {}
    for spec in (*task.evaluator.aligned("result"), *task.evaluator.aligned("expected")):
        for item in spec if isinstance(spec, list) else [spec]:
            if isinstance(item, dict) and "command" in item:
                shell = item.get("shell", False) in (True, "true", "True")
                for name in command_programs(item["command"], shell):
                    if name in ROOT_STATE:
                        found.setdefault(ROOT_STATE[name], None)
    return list(found)
