#!/bin/sh
# Install the Debian packages listed in $1 (one a line, `#` comments) without their recommends,
# then drop apt's lists and caches so the layer keeps only the packages. One call per layer of
# osworld2/Dockerfile.
set -eu
apt-get update
grep -v '^[[:space:]]*#' "$1" | xargs apt-get install -y --no-install-recommends
apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin "$1"
