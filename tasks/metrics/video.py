"""OSWorld's compare_videos (vlc.py): two videos agree frame by frame by perceptual hash.

OSWorld decodes with OpenCV and hashes with imagehash's pHash; StateAct decodes with Debian's
`ffmpeg` (installed by `make setup`/.ci) and computes the same pHash with numpy: grey, 32x32
Lanczos, 2-D DCT-II, the 8x8 low frequencies against their median. docs/osworld-fidelity.md notes
the difference.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from PIL import Image

from harness.kernel.core import StateActError
from tasks.metrics.documents import file_metric

HASH_SIZE = 8
HASH_SOURCE = HASH_SIZE * 4
FFMPEG_TIMEOUT_S = 300


def dct_matrix(n: int) -> np.ndarray:
    """scipy.fftpack's unnormalised DCT-II as a matrix: y = M @ x."""
    k, i = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return 2 * np.cos(np.pi * k * (2 * i + 1) / (2 * n))


DCT = dct_matrix(HASH_SOURCE)


def phash(image: Image.Image) -> np.ndarray:
    """imagehash's pHash bits of an image (64 booleans)."""
    small = image.convert("L").resize((HASH_SOURCE, HASH_SOURCE), Image.Resampling.LANCZOS)
    pixels = np.asarray(small, dtype=float)
    low = (DCT @ pixels @ DCT.T)[:HASH_SIZE, :HASH_SIZE]
    return (low > np.median(low)).flatten()


def frame_size(path: str, ffprobe: str) -> tuple[int, int]:
    done = subprocess.run(
        [ffprobe, "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height"]
        + ["-of", "json", path],
        capture_output=True,
        text=True,
        timeout=FFMPEG_TIMEOUT_S,
    )
    streams = json.loads(done.stdout or "{}").get("streams") or []
    if done.returncode != 0 or not streams:
        return 0, 0
    return int(streams[0]["width"]), int(streams[0]["height"])


def frames(path: str, limit: int) -> Iterator[Image.Image]:
    """Up to `limit` decoded frames, in order, each as an RGB image (none for an unreadable
    file)."""
    ffmpeg, ffprobe = shutil.which("ffmpeg"), shutil.which("ffprobe")
    if ffmpeg is None or ffprobe is None:
        raise StateActError(
            "compare_videos needs ffmpeg: install Debian's ffmpeg (make setup does)"
        )
    if not Path(path).is_file():
        return
    width, height = frame_size(path, ffprobe)
    if not width or not height:
        return
    command = [ffmpeg, "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough"]
    command += ["-frames:v", str(limit), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    size = width * height * 3
    # Frames are read one at a time, so a long or large video never sits in memory whole.
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as decoder:
        watchdog = threading.Timer(FFMPEG_TIMEOUT_S, decoder.kill)  # a stuck decoder ends the video
        watchdog.start()
        try:
            while len(frame := decoder.stdout.read(size)) == size:
                yield Image.frombytes("RGB", (width, height), frame)
        finally:
            watchdog.cancel()
            decoder.kill()


@file_metric("compare_videos", files=2)
def compare_videos(
    video1: str, video2: str, max_frames_to_check: int = 100, threshold: int = 5
) -> float:
    """The first `max_frames_to_check` frames pair up (a video ending first fails); more than
    `threshold` frames whose hashes differ in more than `threshold` bits fail."""
    first = frames(video1, max_frames_to_check + 1)
    second = frames(video2, max_frames_to_check + 1)
    mismatches = 0
    for _ in range(max_frames_to_check):
        frame1, frame2 = next(first, None), next(second, None)
        if frame1 is None or frame2 is None:
            return float(frame1 is None and frame2 is None)
        if int(np.count_nonzero(phash(frame1) != phash(frame2))) > threshold:
            mismatches += 1
            if mismatches > threshold:
                return 0.0
    return 1.0
