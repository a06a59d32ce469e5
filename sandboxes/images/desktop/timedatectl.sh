#!/bin/bash
# timedatectl [status|show|list-timezones|set-timezone ZONE]: systemd's command, answered from the
# container's zone files, since no timedated runs here (there is no systemd). `status` prints what
# systemd 252's prints (OSWorld's is_utc_0 reads its fourth line, "Time zone: NAME (ABBR, +HHMM)");
# `set-timezone` changes /etc/localtime and /etc/timezone as timedated does, and needs root as the
# real one does (OSWorld's user runs it with sudo). No RTC and no NTP exist in a container.
set -u
ZONEINFO=/usr/share/zoneinfo

die() { echo "$*" >&2; exit 1; }

zone_name() {
    # The link's own target, as timedated reads it (`UTC` stays UTC although Debian's zoneinfo/UTC
    # is itself a link to Etc/UTC).
    local target
    target=$(readlink /etc/localtime 2>/dev/null) || target=
    case $target in
        */zoneinfo/*) echo "${target#*/zoneinfo/}" ;;
        *) echo "Etc/UTC" ;;  # no link: glibc and systemd both use UTC
    esac
}

status() {
    local zone now
    zone=$(zone_name)
    now=$(date +%s)
    printf '%26s %s\n' "Local time:" "$(TZ=":$zone" date -d "@$now" '+%a %Y-%m-%d %H:%M:%S %Z')"
    printf '%26s %s\n' "Universal time:" "$(TZ=UTC date -d "@$now" '+%a %Y-%m-%d %H:%M:%S %Z')"
    printf '%26s %s\n' "RTC time:" "n/a"
    printf '%26s %s\n' "Time zone:" "$zone ($(TZ=":$zone" date -d "@$now" '+%Z, %z'))"
    printf '%26s %s\n' "System clock synchronized:" "no"
    printf '%26s %s\n' "NTP service:" "n/a"
    printf '%26s %s\n' "RTC in local TZ:" "no"
}

show() {
    echo "Timezone=$(zone_name)"
    echo "LocalRTC=no"
    echo "CanNTP=no"
    echo "NTP=no"
    echo "NTPSynchronized=no"
    echo "TimeUSec=$(date '+%a %Y-%m-%d %H:%M:%S %Z')"
}

list_timezones() {
    # The zones tzdata installs, as the real command lists them (from tzdata's zone1970.tab and
    # the links beside it): every regular zone file under zoneinfo, without the right/ posix/ trees.
    (cd "$ZONEINFO" && find . -type f -o -type l) | sed 's#^\./##' \
        | grep -E '^[A-Z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$' \
        | grep -vE '^(posix|right)/|^(posixrules|Factory|[A-Z]+[0-9]*[A-Z]*)$|\.tab$' \
        | sort -u
    echo UTC
}

set_timezone() {
    local zone=${1:-}
    [ -n "$zone" ] || die "Too few arguments."
    [[ $zone != *..* && $zone != /* && -f $ZONEINFO/$zone ]] \
        || die "Failed to set time zone: Invalid or not installed time zone '$zone'"
    [ "$(id -u)" -eq 0 ] || die "Failed to set time zone: Access denied"
    ln -sfn "$ZONEINFO/$zone" /etc/localtime || die "Failed to set time zone: Access denied"
    echo "$zone" >/etc/timezone
}

verb=status
while [ $# -gt 0 ]; do
    case $1 in
        --no-pager|--no-ask-password|-a|--all|--adjust-system-clock) shift ;;
        -h|--help) echo "timedatectl [status|show|list-timezones|set-timezone ZONE]"; exit 0 ;;
        -*) die "timedatectl: unrecognized option '$1'" ;;
        *) verb=$1; shift; break ;;
    esac
done
case $verb in
    status) status ;;
    show) show ;;
    list-timezones) list_timezones ;;
    set-timezone) set_timezone "$@" ;;
    *) die "Unknown command verb '$verb', or not supported in this sandbox (no timedated runs here)." ;;
esac
