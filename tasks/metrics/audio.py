"""OSWorld's compare_audios (vlc.py): MFCC features of the two recordings aligned by dynamic time
warping, the mean cosine distance along the path turned into a similarity exp(-d).

It uses the same libraries as OSWorld (librosa, fastdtw, scipy), from the `audio` extra; they are
imported only when the metric runs, since they are heavy.
"""

from __future__ import annotations

import logging
import math

from harness.kernel.core import StateActError
from tasks.metrics.registry import metric

logger = logging.getLogger("tasks.metrics")


def load_samples(path: str):
    """librosa's samples of a file (mono, 22050 Hz), or None when it cannot be read or is empty."""
    import librosa

    try:
        samples, rate = librosa.load(path)
    except Exception as exc:  # noqa: BLE001 -- OSWorld treats any unreadable file as empty
        logger.info("compare_audios: %s cannot be read (%s)", path, exc)
        return None, None
    return (samples, rate) if samples.shape[0] else (None, None)


@metric("compare_audios")
def compare_audios(audio1: str | None, audio2: str | None, **_) -> float:
    """Similarity of two recordings in [0, 1]; two unreadable or empty files count as equal."""
    if not audio1 or not audio2:
        return 0.0
    try:
        import librosa
        from fastdtw import fastdtw
        from scipy.spatial.distance import cosine
    except ImportError:
        raise StateActError(
            "compare_audios needs librosa and fastdtw: pip install 'stateact[audio]'"
        ) from None
    (y1, sr1), (y2, sr2) = load_samples(audio1), load_samples(audio2)
    if y1 is None or y2 is None:
        return float(y1 is None and y2 is None)
    try:
        mfcc1 = librosa.feature.mfcc(y=y1, sr=sr1)
        mfcc2 = librosa.feature.mfcc(y=y2, sr=sr2)
    except Exception as exc:  # noqa: BLE001 -- OSWorld scores a failed extraction 0
        logger.info("compare_audios: no MFCCs (%s)", exc)
        return 0.0
    mfcc1 = librosa.util.normalize(mfcc1, axis=1)
    mfcc2 = librosa.util.normalize(mfcc2, axis=1)
    distance, path = fastdtw(mfcc1.T, mfcc2.T, dist=cosine)
    return float(math.exp(-distance / len(path))) if path else 0.0
