"""API keys and auth headers never reach a run record.

Every key a model is made with (from `--api-key`, the provider's environment variable or an
auth-like extra header) is remembered here, and everything the run records write passes through
`redact`, so a key that turns up in an error message, a model's text or a tool result is blanked
out as well.
"""

from __future__ import annotations

import json
import re
import threading

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8
"""Shorter values (a local server's dummy `none`) are too likely to occur by chance to blank out."""
AUTH_HEADER = re.compile(r"auth|key|token|secret|cookie|password|signature", re.IGNORECASE)

_secrets: set[str] = set()
_lock = threading.Lock()


def remember(value: str | None) -> None:
    """Treat `value` as a secret from now on (in this process)."""
    if not value or len(value) < MIN_SECRET_LENGTH:
        return
    with _lock:
        _secrets.add(value)
        _secrets.add(json.dumps(value)[1:-1])  # as it appears inside a JSON string


def remember_headers(headers: dict[str, str] | None) -> None:
    """Remember the values of auth-like headers."""
    for name, value in (headers or {}).items():
        if AUTH_HEADER.search(name):
            remember(value)


def redact(text: str) -> str:
    """`text` with every remembered secret replaced by [redacted]."""
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    """A copy of `headers` with auth-like values replaced by [redacted]."""
    return {name: REDACTED if AUTH_HEADER.search(name) else v for name, v in headers.items()}
