#!/bin/bash
# Run LibreOffice once at image build time, as the sandbox's user, the way OSWorld's VM has run it:
# a first start registers the bundled extensions and writes the profile's caches, which otherwise
# every sandbox's first Calc pays for (measured: its window mapped 0.5-0.7 s later). The pre-seeded
# settings (registrymodifications.xcu) are put back afterwards, so only caches are kept: no recent
# document, no window state, no lock file.
set -euo pipefail

profile="$HOME/.config/libreoffice/4/user"
seeded=$(mktemp)
cp "$profile/registrymodifications.xcu" "$seeded"

Xvfb :99 -screen 0 1280x720x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
for _ in $(seq 100); do DISPLAY=:99 xdotool getdisplaygeometry >/dev/null 2>&1 && break; sleep 0.1; done

DISPLAY=:99 soffice --calc --norestore --nologo >/dev/null 2>&1 &
DISPLAY=:99 timeout 120 xdotool search --sync --onlyvisible --name 'LibreOffice Calc' >/dev/null
sleep 3  # its caches are written once the window is up
pkill -f soffice.bin || true
for _ in $(seq 100); do pgrep -f soffice.bin >/dev/null || break; sleep 0.1; done
kill "$xvfb"

cp "$seeded" "$profile/registrymodifications.xcu"
rm -f "$seeded" "$profile/.lock" "$HOME/.config/libreoffice/4/.lock"
rm -rf "$profile/backup" /tmp/.X99-lock /tmp/.X11-unix/X99
test -d "$profile/extensions"
