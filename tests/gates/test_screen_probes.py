"""The `a11y_match` and `screen_region` probes on a real desktop sandbox: a Chromium window with a
red "Go" button is found in the accessibility tree and on the screenshot, and the honest twins (an
absent name, another colour, a probe with no desktop) answer False or None; bad specs are field
errors."""

from __future__ import annotations

import time

import pytest

from gates.probe_view import run_probe_read_only
from gates.probes import validate_probe
from harness.kernel.core import ToolError
from sandboxes import SandboxConfig, open_sandbox
from tests.conftest import require_image
from tests.desktop_helpers import ENV

PAGE = (
    "<!doctype html><title>Probe page</title><body style='margin:0;background:#fff'>"
    "<button style='position:fixed;left:0;top:0;width:100vw;height:100vh;"
    "background:#ff0000;border:0'>Go</button></body>"
)
CHROMIUM = (
    "chromium --no-sandbox --test-type --disable-gpu --no-first-run --force-renderer-accessibility "
    "--window-position=0,0 --start-maximized --app=file:///home/user/probe.html"
)


def test_bad_screen_probe_specs_name_their_field():
    with pytest.raises(ToolError, match="give at least one of role"):
        validate_probe({"kind": "a11y_match"})
    with pytest.raises(ToolError, match="`region` must be"):
        validate_probe({"kind": "screen_region", "region": [5, 5, 5, 9], "not_uniform": True})
    with pytest.raises(ToolError, match="give `mean_color` or `not_uniform`"):
        validate_probe({"kind": "screen_region", "region": [0, 0, 9, 9]})


def _answer(box, spec: dict):
    return run_probe_read_only(validate_probe(spec), box)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.desktop
def test_screen_probes_read_the_live_desktop(tmp_path):
    require_image("desktop")
    with open_sandbox(SandboxConfig(image="desktop", memory_mb=4096)) as box:
        missing = _answer(
            box, {"kind": "screen_region", "region": [0, 0, 9, 9], "not_uniform": True}
        )
        assert missing.verdict is None  # no desktop yet: inconclusive, not a crash
        width, height = box.config.display_size  # the size a run's desktop starts at
        code, out = box.exec(["stateact-desktop", "start", f"{width}x{height}"], timeout=120)
        assert code == 0, out
        box.exec(["bash", "-c", f"cat > /home/user/probe.html <<'EOF'\n{PAGE}\nEOF"], timeout=30)
        box.exec(["bash", "-c", ENV + f"({CHROMIUM} >/dev/null 2>&1 &)"], timeout=30)
        button = {"kind": "a11y_match", "role": "push-button", "name_contains": "Go"}
        deadline = time.monotonic() + 120
        while (found := _answer(box, button)).verdict is not True:
            assert time.monotonic() < deadline, found.evidence
            time.sleep(3)
        assert "push-button 'Go'" in found.evidence
        absent = _answer(box, {**button, "name_contains": "Stop"})
        assert absent.verdict is False and absent.evidence.startswith("0 matching")
        gone = _answer(box, {**button, "name_contains": "Stop", "expect_present": False})
        assert gone.verdict is True
        red = {"kind": "screen_region", "region": [50, 200, 250, 300], "mean_color": [255, 0, 0]}
        deadline = time.monotonic() + 60
        while (seen := _answer(box, red)).verdict is not True:
            assert time.monotonic() < deadline, seen.evidence
            time.sleep(2)
        assert _answer(box, {**red, "mean_color": [0, 0, 255]}).verdict is False
        flat = {"kind": "screen_region", "region": [50, 200, 250, 300], "not_uniform": False}
        assert _answer(box, flat).verdict is True
        with pytest.raises(ToolError, match=f"outside the {width}x{height} screen"):
            _answer(box, {**red, "region": [0, 0, 5000, 10]})
