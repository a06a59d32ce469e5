"""Names are data: how a path, a file name or any other agent-written text is shown to a model.

Everything the agent controls (file and folder names, document titles, texts a check quotes) is put
into the gate's messages as one JSON string literal: quotes, backslashes and control characters are
escaped by JSON, and the characters JSON leaves alone but a reader (or a model) may misread are
escaped too: `<` and `>` (so no name can open or close one of the harness's `<...>` blocks), C1
controls, line and paragraph separators, and the bidirectional overrides and isolates that make
text display in another order than it is stored. The result is still valid JSON: decoding it gives
the exact name back.
"""

from __future__ import annotations

import json
import re

ESCAPED = re.compile(
    "[<>&\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]"
)


def _escape(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def quoted(text: object) -> str:
    """`text` as a JSON string literal that no reader can take for markup or reordered text."""
    return ESCAPED.sub(_escape, json.dumps(str(text), ensure_ascii=False))
