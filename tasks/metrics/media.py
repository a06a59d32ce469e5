"""Metrics over media and e-book files (OSWorld's others.py): ID3 tags of mp3 files and the text of
epub books. Oddities kept for comparable scores are listed in docs/osworld-fidelity.md.
"""

from __future__ import annotations

import difflib
import zipfile
from pathlib import Path
from typing import Any

import lxml.html

from harness.kernel.core import StateActError
from tasks.metrics.registry import metric
from tasks.metrics.rule_match import match_value_to_rule

# mutagen's EasyID3 keys for the common text frames (ID3v2.3 and v2.4 names).
EASY_ID3 = {
    "title": ("TIT2",),
    "artist": ("TPE1",),
    "album": ("TALB",),
    "albumartist": ("TPE2",),
    "genre": ("TCON",),
    "date": ("TDRC", "TYER"),
    "tracknumber": ("TRCK",),
    "discnumber": ("TPOS",),
    "composer": ("TCOM",),
    "copyright": ("TCOP",),
    "encodedby": ("TENC",),
    "lyricist": ("TEXT",),
    "length": ("TLEN",),
    "organization": ("TPUB",),
    "version": ("TIT3",),
    "language": ("TLAN",),
    "bpm": ("TBPM",),
    "isrc": ("TSRC",),
    "mood": ("TMOO",),
    "conductor": ("TPE3",),
    "arranger": ("TPE4",),
    "grouping": ("TIT1",),
}
ENCODINGS = {0: "latin-1", 1: "utf-16", 2: "utf-16-be", 3: "utf-8"}


def synchsafe(data: bytes) -> int:
    return (data[0] << 21) | (data[1] << 14) | (data[2] << 7) | data[3]


def id3_text_frames(path: str) -> dict[str, list[str]]:
    """The text frames (T***) of an mp3's ID3v2.3/2.4 tag; raises StateActError without a tag."""
    data = Path(path).read_bytes()
    if len(data) < 10 or data[:3] != b"ID3" or data[3] not in (3, 4):
        raise StateActError(f"{path} has no ID3v2.3 or v2.4 tag")
    version, flags, end = data[3], data[5], 10 + synchsafe(data[6:10])
    position = 10
    if flags & 0x40:  # an extended header precedes the frames
        size = synchsafe(data[10:14]) if version == 4 else int.from_bytes(data[10:14], "big") + 4
        position += size
    frames: dict[str, list[str]] = {}
    while position + 10 <= end:
        frame_id = data[position : position + 4].decode("latin-1")
        raw_size = data[position + 4 : position + 8]
        size = synchsafe(raw_size) if version == 4 else int.from_bytes(raw_size, "big")
        if not frame_id.strip("\0") or size <= 0:
            break
        body = data[position + 10 : position + 10 + size]
        position += 10 + size
        if frame_id.startswith("T") and frame_id != "TXXX" and body:
            encoding = ENCODINGS.get(body[0], "latin-1")
            text = body[1:].decode(encoding, errors="replace")
            frames[frame_id] = [v for v in text.split("\0") if v] or [""]
    return frames


@metric("check_mp3_meta")
def check_mp3_meta(result: str | None, meta: dict, **_: Any) -> float:
    """Each tag named in `meta` (EasyID3 names: title, artist, ...) matches its rule; a missing tag
    reads as "" and several values join with commas."""
    if result is None:
        return 0.0
    frames = id3_text_frames(result)
    for key, rule in meta.items():
        ids = EASY_ID3.get(key, ())
        values = next((frames[i] for i in ids if i in frames), None)
        value = ",".join(values) if values is not None else ""
        if not match_value_to_rule(value, rule):
            return 0.0
    return 1.0


def epub_texts(path: str) -> list[tuple[str, list[str]]]:
    """(name, lines) of the parts OSWorld compares: toc.ncx without navPoint lines, content.opf
    without dc:identifier lines, and every .html re-serialised by lxml; sorted by name."""
    parts = []
    try:
        with zipfile.ZipFile(path) as book:
            names = book.namelist()
            for name, drop in (("toc.ncx", "navPoint"), ("content.opf", "dc:identifier")):
                if name in names:
                    lines = book.read(name).decode().splitlines()
                    parts.append((name, [line for line in lines if drop not in line]))
            for name in names:
                if name.endswith(".html"):
                    if "/" in name:  # OSWorld writes it to a folder it never creates, and fails
                        raise StateActError(f"{path}: OSWorld cannot extract {name}")
                    raw = book.read(name).decode().replace("\n", "").replace("\r", "")
                    tree = lxml.html.fromstring(raw.encode())
                    pretty = lxml.html.tostring(tree, pretty_print=True, encoding="unicode")
                    parts.append((name, pretty.splitlines()))
    except zipfile.BadZipFile:
        return []
    return sorted(parts)


@metric("compare_epub")
def compare_epub(result: str | None, expected: str, **_: Any) -> float:
    """Mean line-diff similarity of the books' paired parts (see `epub_texts`), over the
    result's."""
    if result is None:
        return 0.0
    mine, gold = epub_texts(result), epub_texts(expected)
    total = sum(
        difflib.SequenceMatcher(a=a[1], b=b[1]).ratio() for a, b in zip(mine, gold, strict=False)
    )
    return total / len(mine) if mine else total
