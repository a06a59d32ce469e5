"""Turning raw process output into text a model can read, keeping memory bounded for huge
outputs."""

from __future__ import annotations

import codecs
import re

# CSI sequences (colors, cursor moves), OSC sequences (window titles) and two-byte escapes.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_CR_NEWLINE = re.compile(r"\r+\n")


def clean_terminal_text(text: str) -> str:
    """Drop escape sequences, NULs and other control noise; normalise line ends to \\n."""
    text = _ANSI.sub("", text)
    text = _CR_NEWLINE.sub("\n", text).replace("\r", "\n")
    return _CONTROL.sub("", text)


def _incomplete_suffix_start(text: str) -> int:
    """Where a suffix starts that may continue in the next chunk (a \\r or an unfinished escape)."""
    start = len(text)
    escape = text.rfind("\x1b", max(0, len(text) - 64))
    if escape != -1 and not _ANSI.match(text, escape):
        start = escape
    if text.endswith("\r"):
        start = min(start, len(text.rstrip("\r")))
    return start


class BoundedOutput:
    """Collects a stream of output chunks, keeping only the head and tail of at most `max_chars`.

    Everything in between is counted, not stored, so 10 MB of output costs no more memory than 30
    kB.
    """

    def __init__(self, max_chars: int):
        self.max_chars = max(0, max_chars)
        self._head_limit = self.max_chars // 2
        self._tail_limit = self.max_chars - self._head_limit
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._carry = ""
        self._head: list[str] = []
        self._head_len = 0
        self._tail = ""
        self.total_chars = 0

    def feed(self, data: bytes) -> None:
        text = self._carry + self._decoder.decode(data)
        cut = _incomplete_suffix_start(text)
        self._carry = text[cut:]
        self._add(clean_terminal_text(text[:cut]))

    def _add(self, text: str) -> None:
        if not text:
            return
        self.total_chars += len(text)
        if self._head_len < self._head_limit:
            taken = text[: self._head_limit - self._head_len]
            self._head.append(taken)
            self._head_len += len(taken)
            text = text[len(taken) :]
        if text and self._tail_limit:
            self._tail += text
            # Trim lazily so the copying stays linear in the output size.
            if len(self._tail) > 2 * self._tail_limit + 65536:
                self._tail = self._tail[-self._tail_limit :]

    def finish(self) -> tuple[str, int]:
        """The collected text (cut in the middle with a note if too long) and how many chars were
        cut."""
        self._add(clean_terminal_text(self._carry + self._decoder.decode(b"", final=True)))
        self._carry = ""
        head = "".join(self._head)
        if self.total_chars <= self.max_chars:
            return head + self._tail, 0
        tail = self._tail[-self._tail_limit :] if self._tail_limit else ""
        cut = self.total_chars - len(head) - len(tail)
        return f"{head}\n[... {cut:,} characters cut ...]\n{tail}", cut
