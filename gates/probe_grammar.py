"""What a `shell_command` probe may run: a positive grammar per allowed program.

Each program lists the options known to only read (with whether they take a value) and how many
operands it takes; anything else is refused, so an option nobody thought of (`sort -o`, `find
-fprint`, `xxd -r`, `sqlite3 .shell`, GNU's abbreviations such as `--out`) never passes. The program
is a bare name (looked up on the observer's fixed PATH) or a path in /usr/bin or /bin.
`check_argv` returns None for an allowed argv, else one sentence naming what was refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SYSTEM_BIN = ("/usr/bin/", "/bin/")
SHELL_METACHARACTERS = re.compile(r"[|;&<>`$]|\$\(")
NUMBER = re.compile(r"-\d+")


@dataclass(frozen=True)
class Grammar:
    """The read-only command lines of one program."""

    flags: str = ""
    """Short options without a value (letters)."""
    valued: str = ""
    """Short options that take a value (attached or the next argument)."""
    long_flags: frozenset = frozenset()
    """Long options without a value."""
    long_valued: frozenset = frozenset()
    """Long options that take a value (`--x=v` or `--x v`)."""
    max_operands: int | None = None
    """At most this many operands (None: any number)."""
    must_have: frozenset = frozenset()
    """At least one of these options must be present (a listing mode)."""
    operand_prefix: str = ""
    """Every operand must start with this (date: only `+FORMAT`, never a time to set)."""


def _set(*names: str) -> frozenset:
    return frozenset(names)


GREP = Grammar(
    flags="EFGPivwxclLnhHoqsrRaIzU",
    valued="efmABCd",
    long_flags=_set("--count", "--ignore-case", "--invert-match", "--line-number", "--recursive"),
    long_valued=_set("--include", "--exclude", "--exclude-dir", "--max-count", "--regexp"),
)
GRAMMARS: dict[str, Grammar] = {
    "ls": Grammar(
        flags="aAbBcCdfFgGhHiklLmnNopqQrRsStuUvxXZ1",
        long_flags=_set("--all", "--almost-all", "--human-readable", "--recursive", "--full-time"),
        long_valued=_set("--sort", "--time-style", "--format", "--time"),
    ),
    "cat": Grammar(flags="AbeEnstTuv"),
    "head": Grammar(flags="qvz", valued="nc", long_valued=_set("--lines", "--bytes")),
    "tail": Grammar(flags="qvz", valued="nc", long_valued=_set("--lines", "--bytes")),
    "grep": GREP,
    "egrep": GREP,
    "stat": Grammar(flags="LftZ", valued="c", long_valued=_set("--format", "--printf")),
    "file": Grammar(
        flags="bihLzkNE", long_flags=_set("--mime", "--mime-type", "--mime-encoding", "--brief")
    ),
    "wc": Grammar(flags="lwcmL", long_flags=_set("--lines", "--words", "--bytes", "--chars")),
    "du": Grammar(
        flags="sahcbkmLxl0",
        valued="d",
        long_flags=_set("--summarize", "--human-readable", "--apparent-size"),
        long_valued=_set("--max-depth"),
    ),
    "md5sum": Grammar(flags="btcz", long_flags=_set("--check", "--quiet", "--status", "--tag")),
    "sha256sum": Grammar(flags="btcz", long_flags=_set("--check", "--quiet", "--status", "--tag")),
    "pgrep": Grammar(flags="flaxcnoiv", valued="uUgGPst"),
    "which": Grammar(flags="a"),
    "diff": Grammar(
        flags="uqcrNiwbBsyatTEZ",
        valued="UCW",
        long_flags=_set("--brief", "--recursive", "--unified", "--strip-trailing-cr"),
    ),
    "cmp": Grammar(flags="bls", valued="in", long_flags=_set("--silent", "--quiet")),
    "readlink": Grammar(flags="femnqsvz", long_flags=_set("--canonicalize")),
    "realpath": Grammar(flags="emLPqsz", long_valued=_set("--relative-to", "--relative-base")),
    "date": Grammar(
        flags="uRI",
        valued="dr",
        long_valued=_set("--date", "--reference", "--rfc-3339"),
        operand_prefix="+",
    ),
    "id": Grammar(flags="ugGnrz"),
    "od": Grammar(flags="bcdfiloxsv", valued="AtNjwS"),
    "sort": Grammar(flags="nrufbdgMhVsczC", valued="kt", long_valued=_set("--key")),
    "uniq": Grammar(flags="cduizD", valued="fsw", max_operands=1),
    "cut": Grammar(
        flags="sz", valued="dfcb", long_flags=_set("--complement"), long_valued=_set("--fields")
    ),
    "tr": Grammar(flags="dscCt", max_operands=2),
    "basename": Grammar(flags="az", valued="s"),
    "dirname": Grammar(flags="z"),
    # xxd IN OUT writes OUT, and -r turns a dump back into a file: one operand, no -r.
    "xxd": Grammar(flags="pubiaEeC", valued="lscgon", max_operands=1),
    # unzip without a listing mode extracts: one of -l, -v, -t, -Z or -p is required, nothing else.
    "unzip": Grammar(flags="lvtZpq1shmz", must_have=_set("-l", "-v", "-t", "-Z", "-p")),
}
FIND_OPTIONS = {"-H", "-L", "-P"}
FIND_NO_VALUE = {
    "-print",
    "-print0",
    "-ls",
    "-empty",
    "-true",
    "-false",
    "-prune",
    "-quit",
    "-readable",
    "-writable",
    "-executable",
    "-nouser",
    "-nogroup",
    "-depth",
    "-xdev",
    "-mount",
    "-follow",
    "-daystart",
    "-noleaf",
    "-ignore_readdir_race",
    "-not",
    "!",
    "(",
    ")",
    ",",
    "-a",
    "-o",
    "-and",
    "-or",
}
FIND_ONE_VALUE = {
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-newer",
    "-anewer",
    "-cnewer",
    "-used",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-samefile",
    "-maxdepth",
    "-mindepth",
    "-regextype",
    "-printf",
    "-fstype",
}
FIND_NEWER_XY = re.compile(r"-newer[aBcm][aBcmt]")
SQLITE_FLAGS = {
    "-readonly",
    "-safe",
    "-header",
    "-noheader",
    "-csv",
    "-json",
    "-line",
    "-list",
    "-column",
    "-box",
    "-markdown",
    "-table",
    "-tabs",
    "-html",
    "-quote",
    "-batch",
    "-bail",
    "-nofollow",
}
SQLITE_VALUED = {"-separator", "-newline", "-nullvalue"}
SQLITE_DOT_COMMANDS = {
    ".tables",
    ".schema",
    ".indexes",
    ".indices",
    ".headers",
    ".mode",
    ".dbinfo",
    ".fullschema",
    ".databases",
    ".show",
    ".nullvalue",
    ".separator",
    ".width",
    ".count",
    ".print",
}
SQL_READ = re.compile(r"\s*(select|with|pragma\s+table_info|explain)\b", re.I)
# The shell's own SQL functions that touch files or run programs (-safe disables them too).
SQL_HARMFUL = re.compile(
    r"\b(writefile|readfile|edit|load_extension|fts3_tokenizer|zipfile|zipfile_cds)\s*\(", re.I
)
GSETTINGS_READS = {"get", "list-keys", "list-schemas", "list-recursively", "range", "describe"}
DPKG_QUERIES = {"-l", "-L", "-s", "-S", "--list", "--listfiles", "--status", "--search"}


def check_argv(argv: list[str]) -> str | None:
    """None when `argv` is a read-only command line this grammar knows, else why it is refused."""
    program_path = argv[0]
    program = program_path.rsplit("/", 1)[-1]
    if "/" in program_path and (
        not program_path.startswith(SYSTEM_BIN) or ".." in program_path.split("/")
    ):
        return f"{program_path!r} is not a system program; give its bare name (e.g. {program!r})"
    for arg in argv[1:]:
        if SHELL_METACHARACTERS.search(arg):
            return (
                f"argument {arg!r} has shell metacharacters; pipes, redirects and substitutions "
                "are not allowed"
            )
    special = {"find": _check_find, "sqlite3": _check_sqlite, "gsettings": _check_gsettings}
    if program == "test":
        return None  # `test` only evaluates its operands
    if program in special:
        return special[program](argv[1:])
    if program == "dpkg":
        if len(argv) < 2 or argv[1] not in DPKG_QUERIES or any(a.startswith("-") for a in argv[2:]):
            return f"dpkg may only query, with one of {', '.join(sorted(DPKG_QUERIES))}"
        return None
    grammar = GRAMMARS.get(program)
    if grammar is None:
        allowed = sorted([*GRAMMARS, "find", "sqlite3", "gsettings", "dpkg", "test"])
        return f"{program!r} is not an allowed read-only program ({', '.join(allowed)})"
    return _check_options(program, grammar, argv[1:])


def _check_options(program: str, grammar: Grammar, args: list[str]) -> str | None:
    operands, seen, index = [], set(), 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            operands += args[index:]
            break
        if arg.startswith("--"):
            name, has_value, _ = arg.partition("=")
            if name in grammar.long_flags and not has_value:
                continue
            if name in grammar.long_valued:
                index += 0 if has_value else 1
                continue
            return f"{program} {name} is not a known read-only option"
        if NUMBER.fullmatch(arg):
            continue  # an old-style count (`head -5`)
        if arg.startswith("-") and len(arg) > 1:
            for position, letter in enumerate(arg[1:], start=1):
                seen.add(f"-{letter}")
                if letter in grammar.valued:
                    index += 0 if position < len(arg) - 1 else 1
                    break
                if letter not in grammar.flags:
                    return f"{program} -{letter} is not a known read-only option"
            continue
        operands.append(arg)
    if index > len(args) and args:
        return f"{program} {args[-1]} needs a value"
    if grammar.max_operands is not None and len(operands) > grammar.max_operands:
        return (
            f"{program} takes at most {grammar.max_operands} file operand(s) here "
            "(another one would be written to)"
        )
    if grammar.operand_prefix and not all(o.startswith(grammar.operand_prefix) for o in operands):
        return f"{program} operands must start with {grammar.operand_prefix!r}"
    if grammar.must_have and not grammar.must_have & seen:
        return f"{program} needs one of {', '.join(sorted(grammar.must_have))} (it would write)"
    return None


def _check_find(args: list[str]) -> str | None:
    index = 0
    while index < len(args) and args[index] in FIND_OPTIONS:
        index += 1
    while (
        index < len(args) and not args[index].startswith("-") and args[index] not in FIND_NO_VALUE
    ):
        index += 1  # starting points
    while index < len(args):
        token = args[index]
        index += 1
        if token in FIND_NO_VALUE:
            continue
        if token in FIND_ONE_VALUE or FIND_NEWER_XY.fullmatch(token):
            if index >= len(args):
                return f"find {token} needs a value"
            index += 1
            continue
        return f"find {token} is not a known read-only test or action"
    return None


def _check_sqlite(args: list[str]) -> str | None:
    if "-readonly" not in args or "-safe" not in args:
        return "sqlite3 probes must pass -readonly and -safe"
    index, operands = 0, []
    while index < len(args):
        arg = args[index]
        index += 1
        if arg in SQLITE_FLAGS:
            continue
        if arg in SQLITE_VALUED:
            index += 1
            continue
        if arg.startswith("-"):
            return f"sqlite3 {arg} is not a known read-only option"
        operands.append(arg)
    if not operands:
        return "sqlite3 needs a database file"
    for command in operands[1:]:
        text = command.strip()
        if text.startswith("."):
            word = text.split()[0]
            if word not in SQLITE_DOT_COMMANDS or "\n" in text:
                return f"sqlite3 {word} is not an allowed read-only dot-command"
        elif not SQL_READ.match(text) or ";" in text.rstrip(";") or SQL_HARMFUL.search(text):
            return "sqlite3 SQL must be one SELECT (or WITH, EXPLAIN) without file functions"
    return None


def _check_gsettings(args: list[str]) -> str | None:
    if not args or args[0] not in GSETTINGS_READS or any(a.startswith("-") for a in args):
        return f"gsettings may only read, with one of {', '.join(sorted(GSETTINGS_READS))}"
    return None
