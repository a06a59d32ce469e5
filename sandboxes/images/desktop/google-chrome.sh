#!/bin/bash
# google-chrome [ARGS...]: Debian's Chromium under Chrome's name, so OSWorld's launch commands
# (`google-chrome --remote-debugging-port=1337`, then socat from 9222) work unchanged.
#
# The profile is Chrome's path, ~/.config/google-chrome, which OSWorld's setup steps and getters
# read and write (Preferences, Bookmarks, History, Cookies). Chromium refuses remote debugging on
# its default profile; this one is not its default, so the debugging port opens. The sandbox
# drops every capability, so Chromium's own sandbox cannot start (--no-sandbox); the flags after it
# keep an offline browser from calling home. Debian's launcher, running the binary under Chrome's
# name (`chrome`), so `pkill chrome` ends the browser as on OSWorld's VM (see the Dockerfile).
exec /usr/local/lib/chromium-as-chrome \
    --user-data-dir="$HOME/.config/google-chrome" \
    --no-sandbox \
    --disable-gpu \
    --no-first-run \
    --no-default-browser-check \
    --password-store=basic \
    --disable-background-networking \
    --disable-component-update \
    --disable-sync \
    "$@"
