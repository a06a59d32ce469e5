"""Bounded handling of files the agent wrote, on the host.

Everything in a sandbox is the agent's and may be hostile: a 1 MiB zip whose member unpacks to a
GiB, a sparse file that is 70 GB long and costs nothing inside, an SQLite database whose table is a
recursive view. Whoever parses such a file on the host (the structural gate, probes, getters and
metrics) goes through this module: sizes are checked before reading (declared and actual), copies
stream to disk under a byte cap and keep holes as holes, SQLite opens read-only with a deadline,
a heap limit and a row cap, and at most a few KiB of any file's text reach a gap, a record or a
prompt.
"""

from __future__ import annotations

import os
import sqlite3
import time
import zipfile
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from .base import SandboxError

MiB = 1024 * 1024
COPY_LIMIT_BYTES = 1024 * MiB
"""Default cap on the bytes one copy-out may write to the host (a file's apparent size)."""
COPY_MEMBER_LIMIT = 100_000
"""Cap on the files and folders one copy-out of a folder may create."""
COPY_DEPTH_LIMIT = 64
"""Folders deeper than this below a copied-out folder are left out."""
TEXT_LIMIT = 2048
"""Characters of agent-written text one gap, finding or evidence line may carry."""
ZIP_MEMBER_LIMIT = 256 * MiB
ZIP_TOTAL_LIMIT = 512 * MiB
ZIP_MEMBERS_LIMIT = 20_000
SQLITE_DEADLINE_S = 10.0
SQLITE_ROW_LIMIT = 100_000
SQLITE_VALUE_LIMIT = 16 * MiB
SQLITE_HEAP_LIMIT = 256 * MiB
"""SQLite's hard heap limit for this process (one value for every connection, set once): a
recursive view that materializes rows fails with out-of-memory instead of taking the host's."""
_HOLE_CHUNK = 64 * 1024
_ZEROS = bytes(_HOLE_CHUNK)


class FileLimitError(SandboxError):
    """A file of the agent's is larger, deeper or slower than the harness will read."""


class ParseError(Exception):
    """The parser run by `bounded_call` raised; the message names the original exception."""


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    """`text` cut to `limit` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters not shown]"


class CappedFile:
    """Writes a stream to an open host file descriptor, refusing to pass `cap` bytes; runs of
    zeros become holes (seeked over), so a sparse file stays sparse on the host."""

    def __init__(self, fd: int, cap: int, label: str):
        self.fd, self.cap, self.label = fd, cap, label
        self.written = 0

    def write(self, data: bytes) -> None:
        if self.written + len(data) > self.cap:
            raise FileLimitError(
                f"{self.label} is larger than the limit of {self.cap // MiB:,} MiB the harness "
                "copies out of a sandbox."
            )
        for start in range(0, len(data), _HOLE_CHUNK):
            piece = data[start : start + _HOLE_CHUNK]
            if piece == _ZEROS[: len(piece)]:
                os.lseek(self.fd, len(piece), os.SEEK_CUR)
            else:
                os.write(self.fd, piece)
        self.written += len(data)

    def finish(self) -> None:
        """Fix the length (a trailing hole is only a seek until the file is truncated to it)."""
        os.ftruncate(self.fd, self.written)


def copy_stream(source, fd: int, cap: int, label: str, chunk: int = 1024 * 1024) -> int:
    """Copy the readable `source` into `fd` under `cap` (holes kept); returns the bytes copied."""
    out = CappedFile(fd, cap, label)
    while data := source.read(chunk):
        out.write(data)
    out.finish()
    return out.written


class ChunkReader:
    """A file-like reader over an iterator of byte chunks (a streamed HTTP body), for tarfile's
    streaming mode: nothing is held beyond one chunk."""

    def __init__(self, chunks: Iterable[bytes]):
        self._chunks: Iterator[bytes] = iter(chunks)
        self._chunk = b""
        self._offset = 0

    def read(self, size: int = -1) -> bytes:
        parts, wanted = [], size
        while wanted != 0:
            if self._offset >= len(self._chunk):
                chunk = next(self._chunks, None)
                if chunk is None:
                    break
                self._chunk, self._offset = chunk, 0
                continue
            end = len(self._chunk) if wanted < 0 else min(len(self._chunk), self._offset + wanted)
            parts.append(self._chunk[self._offset : end])
            if wanted > 0:
                wanted -= end - self._offset
            self._offset = end
        return b"".join(parts)


def zip_problem(path: Path) -> str | None:
    """Why the zip package at `path` is too large to unpack (its central directory's declared
    sizes; Python's zipfile never yields more than a member declares), or None."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return None  # not a zip: the format check speaks for it
    if len(members) > ZIP_MEMBERS_LIMIT:
        return f"the package holds {len(members):,} members, more than {ZIP_MEMBERS_LIMIT:,}"
    largest = max(members, key=lambda m: m.file_size, default=None)
    if largest is not None and largest.file_size > ZIP_MEMBER_LIMIT:
        return (
            f"its member {clip(largest.filename, 200)!r} unpacks to {largest.file_size:,} bytes, "
            f"more than the limit of {ZIP_MEMBER_LIMIT // MiB} MiB"
        )
    total = sum(m.file_size for m in members)
    if total > ZIP_TOTAL_LIMIT:
        return f"it unpacks to {total:,} bytes, more than the limit of {ZIP_TOTAL_LIMIT // MiB} MiB"
    return None


def check_zip(path: Path, label: str) -> None:
    """Raise FileLimitError when `path` is a zip package too large to unpack."""
    problem = zip_problem(path)
    if problem:
        raise FileLimitError(f"{label} is not read: {problem}.")


def read_member(archive: zipfile.ZipFile, name: str, limit: int) -> bytes:
    """At most `limit` bytes of member `name` (actually read, whatever the header says)."""
    with archive.open(name) as member:
        return member.read(limit)


@contextmanager
def open_sqlite(path: Path, deadline_s: float = SQLITE_DEADLINE_S) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the agent's database `path` whose statements stop at a deadline
    (a recursive view or a query that never ends raises FileLimitError) and whose values are
    bounded in size; triggers cannot fire, since nothing can be written."""
    connection = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True, timeout=1.0)
    with closing(connection):
        connection.execute(f"PRAGMA hard_heap_limit={SQLITE_HEAP_LIMIT}")
        connection.execute("PRAGMA temp_store=MEMORY")  # a huge sort may not spill to host disk
        connection.execute("PRAGMA query_only=ON")
        connection.execute("PRAGMA trusted_schema=OFF")
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, SQLITE_VALUE_LIMIT)
        deadline = time.monotonic() + deadline_s
        connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        try:
            yield connection
        except MemoryError:
            raise FileLimitError(
                f"the database {Path(path).name} needed more than "
                f"{SQLITE_HEAP_LIMIT // MiB} MiB of memory to answer; it was not read."
            ) from None
        except sqlite3.OperationalError as exc:
            if "interrupt" in str(exc) and time.monotonic() > deadline:
                raise FileLimitError(
                    f"the query on {Path(path).name} ran past its {deadline_s:g} s deadline "
                    "(a recursive or endless view?); it was stopped."
                ) from None
            raise


def sqlite_rows(
    connection: sqlite3.Connection, query: str, params=(), max_rows: int = SQLITE_ROW_LIMIT
) -> list[tuple]:
    """All rows of `query`, or FileLimitError when there are more than `max_rows`."""
    cursor = connection.execute(query, params)
    rows = cursor.fetchmany(max_rows + 1)
    if len(rows) > max_rows:
        raise FileLimitError(f"the query returned more than {max_rows:,} rows; it was not read.")
    return rows


PARSE_MEMORY_BYTES = 1024 * MiB
PARSE_TIMEOUT_S = 60.0


def bounded_call(fn, *args, memory: int = PARSE_MEMORY_BYTES, timeout_s: float = PARSE_TIMEOUT_S):
    """`fn(*args)` in a forked child whose address space may grow by at most `memory` bytes and
    that is killed after `timeout_s`; its picklable return value, or FileLimitError when it ran
    out of either (a parser fed a hostile file must not take the harness's memory or time)."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_bounded_child, args=(send, memory, fn, args), daemon=True)
    child.start()
    send.close()
    try:
        if not receive.poll(timeout_s):
            raise FileLimitError(f"reading the file took longer than {timeout_s:g} s; stopped.")
        try:
            outcome, value = receive.recv()
        except EOFError:
            raise FileLimitError(
                f"reading the file needed more than {memory // MiB:,} MiB of memory; stopped."
            ) from None
    finally:
        receive.close()
        if child.is_alive():
            child.kill()
        child.join()
    if outcome == "limit":
        raise FileLimitError(value)
    if outcome == "error":
        raise ParseError(value)
    return value


def _bounded_child(send, memory: int, fn, args) -> None:
    import resource

    with open("/proc/self/statm") as statm:
        current = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (current + memory, current + memory))
    try:
        send.send(("ok", fn(*args)))
    except MemoryError:
        send.send(("limit", f"reading the file needed more than {memory // MiB:,} MiB of memory."))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as one sentence
        send.send(("error", clip(f"{type(exc).__name__}: {exc}", 500)))
    finally:
        send.close()
