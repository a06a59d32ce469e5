"""Fixtures of the WebArena tests."""

from __future__ import annotations

import pytest

from tasks.webarena.deployment import configure, use_judge


@pytest.fixture
def fresh_deployment():
    """No sites and no judge configured, before and after the test (both are process-wide)."""
    configure(None, 1)
    use_judge(None)
    yield
    configure(None, 1)
    use_judge(None)
