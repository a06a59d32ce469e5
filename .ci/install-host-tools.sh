#!/bin/bash
# Install the Debian tools StateAct's checkers run on the host (as root): Tesseract for the OCR metric
# compare_image_text, ffmpeg for compare_videos (and OSWorld 2.0's ffprobe checks and recordings), ImageMagick (OSWorld 2.0's `identify` checks), and Chromium, in which the report tests open the
# pages (through Playwright). Idempotent: installs only what is missing.
set -euo pipefail

PACKAGES=(tesseract-ocr tesseract-ocr-eng ffmpeg chromium imagemagick)

fail() { echo "install-host-tools: $*" >&2; exit 1; }

missing=()
for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
[ "$(id -u)" -eq 0 ] || fail "run this script as root to install ${missing[*]}."
echo "install-host-tools: installing ${missing[*]}"
if ! apt-cache show "${missing[@]}" >/dev/null 2>&1; then
    apt-get update -qq || fail "apt-get update failed; check the Debian mirror in /etc/apt/sources.list.d."
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || fail "apt-get install ${missing[*]} failed."
