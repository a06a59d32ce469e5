#!/usr/bin/env bash
# Reference solution: group files by content hash, keep the first path in byte order, prune empty folders.
set -euo pipefail
cd /home/user/projects
find . -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 sha256sum -z | python3 -c '
import os, sys
seen, removed = set(), []
for record in sys.stdin.buffer.read().split(b"\0"):
    if not record:
        continue
    digest, path = record.decode().split("  ", 1)
    if digest in seen:
        removed.append(path)
        os.remove(path)
    seen.add(digest)
with open("/home/user/dupes_removed.txt", "w") as fh:
    fh.writelines(p + "\n" for p in sorted(removed, key=str.encode))
'
find . -mindepth 1 -type d -empty -delete
