#!/bin/bash
# stateact-desktop start [WIDTHxHEIGHT] | stop | status
#
# Runs the sandbox's virtual desktop as the calling user: a D-Bus session bus (AT-SPI needs one),
# Xvfb on :1 and openbox (without a window manager LibreOffice's dialogs never get keyboard focus).
# `start` is idempotent and writes the environment to /tmp/stateact-desktop.env, so later commands
# can `source /tmp/stateact-desktop.env`.
#
# LibreOffice's first-start dialogs are suppressed by the pre-seeded profile
# ~/.config/libreoffice/4/user/registrymodifications.xcu (also in /etc/skel); for a throwaway
# profile use `soffice -env:UserInstallation=file:///tmp/lo-profile --norestore --nologo`.
set -u

DISPLAY_NUM=1
ENV_FILE=/tmp/stateact-desktop.env
STATE_DIR=/tmp/stateact-desktop
WAIT_S=${STATEACT_DESKTOP_WAIT_S:-60}  # generous: on a loaded host openbox can take 15 s

die() { echo "stateact-desktop: $*" >&2; exit 1; }

display_answers() {
    DISPLAY=":$DISPLAY_NUM" xdotool getdisplaygeometry >/dev/null 2>&1
}

# A pid file can outlive its process: a sandbox started from a snapshot (a milestone, a best-of
# rollout) has the old desktop's files, and its own processes may have the same numbers. So the pid
# must be alive AND run the program the file is for.
declare -A PROGRAM=([xvfb]=Xvfb [openbox]=openbox [dbus]=dbus-daemon)
pid_alive() {
    local pid
    [ -f "$STATE_DIR/$1.pid" ] && pid=$(cat "$STATE_DIR/$1.pid") && kill -0 "$pid" 2>/dev/null \
        && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "${PROGRAM[$1]}" ]
}

# Detached from the caller (setsid, no inherited stdio) so `docker exec` returns and the process
# outlives it.
spawn() {
    local name=$1; shift
    setsid "$@" </dev/null >"$STATE_DIR/$name.log" 2>&1 &
    echo $! >"$STATE_DIR/$name.pid"
}

# The session's sound server, as on OSWorld's Ubuntu (28cc3b7e's check reads its sink volume with
# pactl): PulseAudio on a null sink, kept running while the desktop runs. Started in the background
# (it needs no display, and the desktop must start fast); a client that asks before it is up waits
# for it. Its first volume, 40%, is saved in the image's profile (see the Dockerfile).
start_audio() {
    command -v pulseaudio >/dev/null || return 0
    setsid pulseaudio --start --exit-idle-time=-1 </dev/null >"$STATE_DIR/pulseaudio.log" 2>&1 &
}

start() {
    local size=${1:-1920x1080}
    [[ $size =~ ^[0-9]+x[0-9]+$ ]] || die "size must look like 1920x1080, got '$size'"
    mkdir -p "$STATE_DIR"

    if [ -f "$ENV_FILE" ] && display_answers && pid_alive openbox; then
        cat "$ENV_FILE"
        return 0
    fi

    if ! pid_alive dbus; then
        # dbus-launch prints the address and pid of the bus it forks into the background.
        local bus
        bus=$(dbus-launch --sh-syntax </dev/null 2>"$STATE_DIR/dbus.log") || die "dbus-launch failed: $(cat "$STATE_DIR/dbus.log")"
        eval "$bus"
        echo "$DBUS_SESSION_BUS_PID" >"$STATE_DIR/dbus.pid"
        echo "$DBUS_SESSION_BUS_ADDRESS" >"$STATE_DIR/dbus.address"
    fi
    DBUS_SESSION_BUS_ADDRESS=$(cat "$STATE_DIR/dbus.address")
    export DBUS_SESSION_BUS_ADDRESS
    pulseaudio --check 2>/dev/null || start_audio

    if ! display_answers; then
        rm -f "/tmp/.X$DISPLAY_NUM-lock" "/tmp/.X11-unix/X$DISPLAY_NUM"
        # Abstract socket only (no /tmp/.X11-unix file): a Landlock-scoped agent session cannot
        # reach it (sandboxes/toolbox/screenless.py).
        spawn xvfb Xvfb ":$DISPLAY_NUM" -screen 0 "${size}x24" -nolisten tcp -nolisten unix
    fi
    local deadline=$((SECONDS + WAIT_S))
    until display_answers; do
        [ $SECONDS -lt $deadline ] || die "Xvfb did not answer within ${WAIT_S}s: $(tail -3 "$STATE_DIR/xvfb.log")"
        sleep 0.1
    done

    # Programs the bus starts on demand (gnome-terminal's server) get the bus's environment, which
    # predates the display: hand the display to it.
    DISPLAY=":$DISPLAY_NUM" dbus-update-activation-environment DISPLAY >/dev/null 2>&1 || true

    if ! pid_alive openbox; then
        DISPLAY=":$DISPLAY_NUM" spawn openbox openbox
    fi
    # Windows opened before the window manager owns the screen never get focus, so wait for it.
    # On a loaded host openbox sometimes fails to open a display that has just answered: start it again.
    until DISPLAY=":$DISPLAY_NUM" wmctrl -m >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || die "openbox did not start within ${WAIT_S}s: $(tail -3 "$STATE_DIR/openbox.log")"
        sleep 0.2
        pid_alive openbox || DISPLAY=":$DISPLAY_NUM" spawn openbox openbox
    done

    {
        echo "export DISPLAY=:$DISPLAY_NUM"
        echo "export DBUS_SESSION_BUS_ADDRESS='$DBUS_SESSION_BUS_ADDRESS'"
    } >"$ENV_FILE.tmp"
    mv "$ENV_FILE.tmp" "$ENV_FILE"
    cat "$ENV_FILE"
}

stop() {
    local name
    pulseaudio --kill 2>/dev/null
    for name in openbox xvfb dbus; do
        if pid_alive "$name"; then
            kill "$(cat "$STATE_DIR/$name.pid")" 2>/dev/null
        fi
        rm -f "$STATE_DIR/$name.pid"
    done
    rm -f "$ENV_FILE" "$STATE_DIR/dbus.address"
}

status() {
    if display_answers; then
        echo "running: $(DISPLAY=":$DISPLAY_NUM" xdotool getdisplaygeometry)"
    else
        echo "stopped"
        return 1
    fi
}

case "${1:-}" in
    start) shift; start "$@" ;;
    stop) stop ;;
    status) status ;;
    *) echo "usage: stateact-desktop start [WIDTHxHEIGHT] | stop | status" >&2; exit 2 ;;
esac
