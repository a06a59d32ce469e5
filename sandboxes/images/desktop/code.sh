#!/bin/bash
# code [--list-extensions | --install-extension X | ... | [-g] PATH[:LINE]...]: VS Code's command.
#
# The workbench is code-server (VS Code's open-source build served over HTTP) shown in a Chromium
# app window titled "Visual Studio Code". Its user data is VS Code's: settings and keybindings in
# ~/.config/Code/User, extensions in ~/.vscode/extensions. Extension commands run code-server's
# CLI directly; anything else starts the server (once, on 127.0.0.1 only, no password: the
# sandbox has no other user) and opens the folder of the first path in a window.
set -u
NODE=/opt/code-server/node/bin/node
SERVER=/opt/code-server/lib/node_modules/code-server/out/node/entry.js
PORT=${STATEACT_CODE_PORT:-8137}
STATE=/tmp/stateact-code
DATA=(--user-data-dir "$HOME/.config/Code" --extensions-dir "$HOME/.vscode/extensions")

healthy() { curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null; }
server() { "$NODE" "$SERVER" "${DATA[@]}" "$@"; }

for arg in "$@"; do
    case $arg in
        --list-extensions|--install-extension|--uninstall-extension|--show-versions \
            |--version|-v|--help|-h)
            server "$@"; exit $? ;;
    esac
done

paths=()
for arg in "$@"; do
    case $arg in -*) ;; *) paths+=("$arg") ;; esac
done

mkdir -p "$STATE" "$HOME/.config/Code/User" "$HOME/.vscode/extensions"
if ! healthy; then
    setsid "$NODE" "$SERVER" "${DATA[@]}" --bind-addr "127.0.0.1:$PORT" --auth none \
        --disable-telemetry --disable-update-check --disable-workspace-trust \
        --app-name "Visual Studio Code" --ignore-last-opened \
        </dev/null >"$STATE/server.log" 2>&1 &
    for _ in $(seq 1 150); do
        healthy && break
        sleep 0.2
    done
fi

target=${paths[0]:-$HOME}
target=${target%%:[0-9]*}          # `code -g file:12:3` opens file's folder
target=$(realpath -m -- "$target")
folder=$target
[ -d "$folder" ] || folder=$(dirname -- "$folder")
quote='import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))'
url="http://127.0.0.1:$PORT/?folder=$(python3 -c "$quote" "$folder")"
setsid /usr/bin/chromium --user-data-dir="$STATE/browser" --no-sandbox --disable-gpu \
    --no-first-run --no-default-browser-check --password-store=basic \
    --disable-background-networking --disable-component-update --disable-sync \
    --class="Code" --app="$url" </dev/null >"$STATE/window.log" 2>&1 &
# A file opens in the window once the workbench has connected to the server.
if [ ! -d "$target" ]; then
    (for _ in $(seq 1 60); do
        sleep 1
        server --reuse-window "${paths[@]}" >>"$STATE/open.log" 2>&1 && break
    done) </dev/null >/dev/null 2>&1 &
fi
exit 0
