"""git for the gate model's shell: the repository's own config may not run the agent's programs.

git reads the repository's `.git/config` (and the files it includes) and `.gitattributes` and has
no switch to ignore them (Debian bookworm's git 2.39 predates `GIT_ATTR_SOURCE`), so an agent can
name a filter, textconv or external-diff driver there that runs its own program as soon as the gate
model calls `git status` or `git diff`. This wrapper lists the repository's config first (listing
runs nothing) and overrides, in git's command-scope environment (which wins over every config
file), each key that names a program with a harmless one of the same effect for honest work:

- `filter.<d>.clean`/`smudge` -> `cat` and `filter.<d>.process` -> empty (content as stored);
- `diff.<d>.textconv` -> `cat` (the file's own text); `diff.<d>.command` and `diff.external` -> a
  plain `diff -u` of the two sides;
- `merge.<d>.driver`, editors, ssh, askpass, credential helpers, gpg programs and aliases -> empty
  or `false` (they fail instead of running).

Installed as a shell function `git` in the gate model's bash (`bash_session.child_environment`);
a program that calls `/usr/bin/git` by its path bypasses it (docs/security.md). Standard library
only: it runs inside the sandbox.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

REAL_GIT = "/usr/bin/git"
PLAIN_DIFF = 'f() { diff -u --label "a/$1" --label "b/$1" "$2" "$5"; true; }; f'
"""An external diff command git runs as `CMD path old-file old-hex old-mode new-file …`."""
SAFE_VALUES = (
    (re.compile(r"filter\..+\.(clean|smudge)"), "cat"),
    (re.compile(r"filter\..+\.process"), ""),
    (re.compile(r"diff\..+\.textconv"), "cat"),
    (re.compile(r"diff\..+\.command|diff\.external"), PLAIN_DIFF),
    (re.compile(r"merge\..+\.driver"), "false"),
    (re.compile(r"core\.(sshcommand|gitproxy|askpass|editor)"), ""),
    (re.compile(r"(sequence\.editor|credential\.(.+\.)?helper|gpg\.(.+\.)?program)"), ""),
    (re.compile(r"(alias|pager)\..+"), ""),
)
GLOBAL_WITH_VALUE = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"}


def global_options(args: list[str]) -> list[str]:
    """The options before git's subcommand (they choose the repository: `-C repo`)."""
    taken, index = [], 0
    while index < len(args) and args[index].startswith("-"):
        taken.append(args[index])
        if args[index] in GLOBAL_WITH_VALUE and index + 1 < len(args):
            taken.append(args[index + 1])
            index += 1
        index += 1
    return taken


def overrides(args: list[str], env: dict[str, str]) -> dict[str, str]:
    """`GIT_CONFIG_KEY_n`/`VALUE_n` for every key of the repository's config that names a program
    (in the environment, not `-c key=value`: a subsection name may hold an `=`)."""
    listing = subprocess.run(
        [REAL_GIT, *global_options(args), "config", "--list", "--show-scope", "--name-only"]
        + ["--includes", "-z"],
        capture_output=True,
        timeout=30,
        env=env,
    )
    count = int(env.get("GIT_CONFIG_COUNT") or 0)
    added = {}
    fields = listing.stdout.decode("utf-8", "surrogateescape").split("\0")
    # scope, key, scope, key, ...: the harness's own (command scope) settings stay as they are.
    pairs = zip(fields[::2], fields[1::2], strict=False)
    for key in dict.fromkeys(key for scope, key in pairs if scope != "command"):
        value = next((safe for rule, safe in SAFE_VALUES if rule.fullmatch(key.lower())), None)
        if value is not None:
            added[f"GIT_CONFIG_KEY_{count}"], added[f"GIT_CONFIG_VALUE_{count}"] = key, value
            count += 1
    return added | {"GIT_CONFIG_COUNT": str(count)} if added else {}


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ)
    try:
        env.update(overrides(args, env))
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        sys.exit(f"git (guarded): could not read the repository's config: {exc}")
    os.execve(REAL_GIT, [REAL_GIT, *args], env)


if __name__ == "__main__":
    main()
