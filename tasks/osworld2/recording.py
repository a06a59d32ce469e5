"""The guest's screen recording (`/start_recording`, `/end_recording`), made on the host: the
sandbox's screenshots, taken at a steady rate, encoded by the host's ffmpeg into an MP4 (the
format OSWorld's `recording.mp4` has). Nothing runs in the sandbox besides the screenshots the
harness takes anyway, so the agent can neither stop nor doctor the recording.

The frame rate is low (`FRAMES_PER_S`): a screenshot of the sandbox costs tens of milliseconds,
and OSWorld 2.0's video judges look at what happened, not at motion.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from harness.kernel.core import StateActError

log = logging.getLogger(__name__)

FRAMES_PER_S = 2.0
MAX_SECONDS = 4 * 3600.0
"""A recording stops by itself after four hours (OSWorld 2.0's longest runs' order)."""
ENCODE_TIMEOUT_S = 300.0


class ScreenRecorder:
    """One recording at a time into `folder`/recording.mp4; `grab()` gives a PNG of the screen."""

    def __init__(self, grab: Callable[[], bytes], folder: Path, fps: float = FRAMES_PER_S):
        self.grab = grab
        self.path = Path(folder) / "recording.mp4"
        self.fps = fps
        self.encoder: subprocess.Popen | None = None
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        self.frames = 0

    @property
    def recording(self) -> bool:
        return self.encoder is not None

    def start(self) -> None:
        if self.recording:
            raise StateActError("a recording is already running")
        ffmpeg = shutil.which("ffmpeg")
        if ffmpeg is None:
            raise StateActError("recording needs ffmpeg on the host (make setup installs it)")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.unlink(missing_ok=True)
        self.encoder = subprocess.Popen(
            [ffmpeg, "-loglevel", "error", "-y", "-f", "png_pipe", "-framerate", str(self.fps)]
            + ["-i", "-", "-c:v", "libx264", "-pix_fmt", "yuv420p"]
            + ["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", str(self.path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.stopping.clear()
        self.frames = 0
        self.thread = threading.Thread(target=self._frames, daemon=True, name="osworld2-record")
        self.thread.start()

    def _frames(self) -> None:
        started = time.monotonic()
        while not self.stopping.is_set() and time.monotonic() - started < MAX_SECONDS:
            due = started + self.frames / self.fps
            self.stopping.wait(max(0.0, due - time.monotonic()))
            try:
                frame = self.grab()
                self.encoder.stdin.write(frame)
                self.frames += 1
            except (StateActError, OSError) as exc:
                log.warning("recording frame %d: %s", self.frames, exc)
                if isinstance(exc, OSError):
                    return  # the encoder is gone

    def stop(self) -> Path:
        """End the recording; the MP4's path. StateActError when none was running or none came."""
        if not self.recording:
            raise StateActError("no recording is running")
        self.stopping.set()
        self.thread.join(timeout=30)
        encoder, self.encoder = self.encoder, None
        try:  # closes the encoder's input (the end of the frames) and waits for the file
            _, errors = encoder.communicate(timeout=ENCODE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            encoder.kill()
            encoder.communicate()
            raise StateActError("encoding the recording took too long") from None
        if encoder.returncode != 0 or not self.path.is_file() or not self.frames:
            detail = errors.decode(errors="replace").strip()[-200:] or "no frames"
            raise StateActError(f"the recording could not be encoded: {detail}")
        return self.path

    def close(self) -> None:
        if self.recording:
            try:
                self.stop()
            except StateActError as exc:
                log.warning("recording left at close: %s", exc)
