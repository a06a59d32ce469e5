"""vm_screen_size and vm_window_size in a live desktop sandbox, scored by is_vlc_fullscreen."""

from __future__ import annotations

import pytest

from sandboxes import SandboxConfig, open_sandbox
from tasks.getters import GetterContext, SandboxSource, run_getter
from tasks.metrics import get_metric
from tasks.setup import SOURCE_DESKTOP
from tests.conftest import require_image


def test_is_vlc_fullscreen_compares_both_sizes():
    full = get_metric("is_vlc_fullscreen")
    assert full({"width": 1280, "height": 720}, {"width": 1280, "height": 720}) == 1.0
    assert full({"width": 1280, "height": 720}, {"width": 400, "height": 300}) == 0.0
    assert full(None, {"width": 1, "height": 1}) == 0.0


@pytest.mark.docker
@pytest.mark.desktop
def test_window_and_screen_sizes_in_the_desktop(tmp_path):
    require_image("desktop")
    with open_sandbox(SandboxConfig(image="desktop", display_size=(1024, 768))) as sandbox:
        code, output = sandbox.exec(["bash", "-c", "stateact-desktop start 1024x768"], timeout=90)
        assert code == 0, output
        ctx = GetterContext(
            task=None, source=SandboxSource(sandbox), cache_dir=None, work_dir=tmp_path
        )
        assert run_getter({"type": "vm_screen_size"}, ctx) == {"width": 1024, "height": 768}
        spec = {"type": "vm_window_size", "app_class_name": "XMESSAGE"}
        assert run_getter(spec, ctx) is None  # no such window yet
        # Client-chosen geometries, so the check does not depend on the window manager's timing.
        for geometry, full in (("400x300", 0.0), ("1024x768", 1.0)):
            start = (
                "pkill -x xmessage; while pgrep -x xmessage; do sleep 0.1; done; "
                f"setsid nohup xmessage -geometry {geometry} hi >/dev/null 2>&1"
                " </dev/null & for i in $(seq 50); do xdotool search --class '^xmessage$' && break;"
                " sleep 0.2; done"
            )
            code, output = sandbox.exec(["bash", "-c", SOURCE_DESKTOP + start], timeout=30)
            assert code == 0, output
            window = run_getter(spec, ctx)
            width, height = map(int, geometry.split("x"))
            assert window == {"width": width, "height": height}
            screen = run_getter({"type": "vm_screen_size"}, ctx)
            assert get_metric("is_vlc_fullscreen")(screen, window) == full
