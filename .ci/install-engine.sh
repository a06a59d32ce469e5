#!/bin/bash
# Install and start the Docker engine StateAct's sandboxes need, on a fresh Debian machine (as root).
# Idempotent: installs only missing packages and starts dockerd only when `docker info` fails.
# The daemon runs with no bridge and no NAT, so it never creates docker0 or private-range addresses;
# sandboxes use network_mode "none" and image builds use `--network host`.
set -euo pipefail

LOG=/var/log/stateact-dockerd.log
# `make lint` runs shellcheck on the shell scripts; npm, g++, make and libkrb5-dev build the desktop
# image's VS Code (code-server) bundle on the host.
PACKAGES=(docker.io debootstrap bubblewrap shellcheck npm g++ make libkrb5-dev)
WAIT_S=60

fail() { echo "install-engine: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "run this script as root (it installs packages and starts dockerd)."

missing=()
for package in "${PACKAGES[@]}"; do
    # An npm already on the PATH will do (a machine's Node.js from elsewhere ships its own npm, and
    # Debian's npm package would conflict with it).
    if [ "$package" = npm ] && command -v npm >/dev/null; then
        continue
    fi
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "install-engine: installing ${missing[*]}"
    # Update the lists only when apt does not know the packages yet (a fresh machine has none).
    if ! apt-cache show "${missing[@]}" >/dev/null 2>&1; then
        apt-get update -qq || fail "apt-get update failed; check the Debian mirror in /etc/apt/sources.list.d."
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || fail "apt-get install ${missing[*]} failed; see the apt output above."
fi

# The Makefile keeps Python in a virtual environment; Debian's python3 needs python3-venv for that.
if ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
    echo "install-engine: installing python3-venv"
    apt-get update -qq || fail "apt-get update failed; check the Debian mirror in /etc/apt/sources.list.d."
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null \
        || fail "apt-get install python3-venv failed."
fi

if docker info >/dev/null 2>&1; then
    echo "install-engine: the Docker engine is already running"
    exit 0
fi

command -v dockerd >/dev/null || fail "dockerd is missing although docker.io is installed; reinstall docker.io."
echo "install-engine: starting dockerd (log: $LOG)"
nohup dockerd --bridge=none --iptables=false --ip-masq=false >>"$LOG" 2>&1 </dev/null &
dockerd_pid=$!

for _ in $(seq "$WAIT_S"); do
    if docker info >/dev/null 2>&1; then
        echo "install-engine: the Docker engine is running (dockerd pid $dockerd_pid)"
        exit 0
    fi
    kill -0 "$dockerd_pid" 2>/dev/null || fail "dockerd exited; last lines of $LOG: $(tail -3 "$LOG" | tr '\n' ' ')"
    sleep 1
done
fail "the Docker engine did not answer within ${WAIT_S}s; see $LOG."
