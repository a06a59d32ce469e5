"""Model-written text shown on a terminal or in HTML: control characters made visible, never obeyed.

A model (or a task file) can put terminal escape sequences, carriage returns or bidirectional
overrides into its text; printed as they are, they recolour or rewrite the terminal or reorder
what a reader sees. `visible` writes each such character as a `\\xNN` / `\\uNNNN` escape instead.
"""

from __future__ import annotations

import re

from harness.kernel.secrets import redact

_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_CONTROL_AND_LINES = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def _escaped(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object, keep_lines: bool = False) -> str:
    """`text` with control characters escaped and known keys blanked; `keep_lines` leaves newlines
    and tabs as they are."""
    pattern = _CONTROL if keep_lines else _CONTROL_AND_LINES
    return pattern.sub(_escaped, redact(str(text)))
