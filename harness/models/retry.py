"""One retry policy for every provider: back off on rate limits and overloads, fail fast on bad
requests.

The SDKs' own retry loops are switched off (`max_retries=0`) so that every wait is ours and shows
in the log.
"""

from __future__ import annotations

import email.utils
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from harness.kernel.core import StateActError
from harness.models.throttle import before_request

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_WAIT_S = 60.0
"""No single wait is longer than this, whatever the server asks for."""


def retry_after_seconds(headers: Any) -> float | None:
    """The wait a response asks for in `retry-after-ms` or `retry-after` (seconds or an HTTP
    date)."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def api_error_message(body: Any, fallback: str) -> str:
    """The human message inside a provider's error body (Anthropic and OpenAI shapes)."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str) and inner:
            return inner
    return fallback


def is_retryable_status(status: int) -> bool:
    # 408 and 409 are what the SDKs themselves retry besides rate limits and server errors.
    return status in (408, 409, 429) or status >= 500


@dataclass
class Retrier:
    """Calls a provider function, retrying transient failures with exponential backoff and
    jitter."""

    provider: str
    """Name used in messages, such as `Anthropic API`."""
    max_retries: int = 6
    """Retries after the first attempt before giving up."""
    base_delay_s: float = 1.0
    """First backoff step when the server names no wait; doubles on each retry."""
    sleep: Callable[[float], None] = field(default=time.sleep)
    """How to wait; tests replace it to record the waits."""

    def call(self, fn: Callable[[], T], status_error: type, connection_error: type) -> T:
        """Run `fn`, retrying 408/409/429/5xx and connection errors, raising StateActError
        otherwise."""
        attempt = 0
        while True:
            try:
                before_request()  # a shared request budget, when a runner installed one
                return fn()
            except status_error as exc:
                status = exc.status_code
                message = api_error_message(getattr(exc, "body", None), str(exc))
                headers = exc.response.headers if exc.response is not None else None
                if not is_retryable_status(status) or self._server_forbids_retry(headers):
                    raise StateActError(
                        f"{self.provider} rejected the request ({status}): {message}"
                    ) from None
                if attempt >= self.max_retries:
                    raise StateActError(
                        f"{self.provider} still answered {status} ({message}) after "
                        f"{self.max_retries} retries; try again later"
                    ) from None
                wait = retry_after_seconds(headers)
                reason = f"status {status}"
            except connection_error as exc:
                if attempt >= self.max_retries:
                    raise StateActError(
                        f"{self.provider} could not be reached after {self.max_retries} retries: "
                        f"{exc}"
                    ) from None
                wait = None
                reason = f"connection error ({exc})"
            if wait is None:
                wait = self.base_delay_s * 2**attempt * random.uniform(0.5, 1.0)
            wait = min(wait, MAX_WAIT_S)
            attempt += 1
            log.warning(
                "%s: %s; waiting %.2f s before retry %d of %d",
                self.provider,
                reason,
                wait,
                attempt,
                self.max_retries,
            )
            self.sleep(wait)

    @staticmethod
    def _server_forbids_retry(headers: Any) -> bool:
        return headers is not None and str(headers.get("x-should-retry", "")).lower() == "false"
