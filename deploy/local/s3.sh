#!/usr/bin/env bash
# A real S3 server on loopback for tests and local runs: Ceph's RADOS Gateway from Debian's packages
# (ceph-mon ceph-osd radosgw ceph-common), one node, one in-memory OSD (memstore, saved to DIR on a
# clean stop), no mgr (S3 works without it). Every data, run, log, pid and admin-socket path lives in DIR.
#
#   deploy/local/s3.sh start DIR [--fresh] [--owner-pid PID]
#                                                    bring the cluster up (or find it running), create
#                                                    the S3 user, wait until the gateway answers, print
#                                                    endpoint=, access_key=, secret_key=, region= lines
#                                                    (also in DIR/s3.env); a stopped cluster in DIR
#                                                    comes back with its data and ports, unless --fresh
#                                                    (then a new one replaces it)
#   deploy/local/s3.sh stop DIR [--discard]          stop every daemon (SIGTERM; the OSD saves its data
#                                                    to DIR so a later start finds it); removes nothing.
#                                                    --discard: SIGKILL, and remove the data (not the logs)
#   deploy/local/s3.sh gateway-stop DIR [--kill]     stop radosgw only: an S3 outage, the data stays
#   deploy/local/s3.sh gateway-start DIR             start radosgw again on the same port
#   deploy/local/s3.sh status DIR                    which daemons run; s3.env without the secret
#
# S3_BIND_ADDRESS: the IPv4 address the gateway listens on (default 127.0.0.1; another address of this
# host or network namespace, e.g. a test host of deploy/local/hosts.sh); the monitor and the OSD stay on
# 127.0.0.1. Set on the first start, kept in ceph.conf after.
# Ports on 127.0.0.1, picked free on the first start unless set: S3_PORT (the gateway),
# S3_MON_PORT (mon v2) and S3_MON_V1_PORT (mon v1). Keys: S3_ACCESS_KEY and S3_SECRET_KEY (generated
# when unset). S3_MEMSTORE_BYTES caps the OSD's memory store (default 4 GiB; only what is stored is
# used). S3_START_TIMEOUT: seconds per step (default 60). --owner-pid: stop the cluster when that
# process is gone (a test JVM that crashed). On failure: one line on stderr naming the step and its log.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
self="$here/$(basename "${BASH_SOURCE[0]}")"
timeout_s="${S3_START_TIMEOUT:-60}"
bind_address="${S3_BIND_ADDRESS:-127.0.0.1}"
[[ "$bind_address" =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] || { echo "s3.sh: S3_BIND_ADDRESS must be an IPv4 address, got '$bind_address'" >&2; exit 1; }

die() {
    echo "s3.sh: $*" >&2
    exit 1
}

usage() {
    die "usage: s3.sh start|stop|gateway-stop|gateway-start|status DIR (see the top of $self)"
}

[[ $# -ge 2 ]] || usage
cmd="$1"
[[ -n "$2" ]] || usage
if [[ "$cmd" == start ]]; then
    mkdir -p "$2" 2>/dev/null || die "cannot create the state directory $2"
elif [[ ! -d "$2" ]]; then
    [[ "$cmd" != stop ]] || exit 0
    die "no cluster in $2 (run: s3.sh start $2)"
fi
dir="$(cd "$2" && pwd)"
shift 2

conf="$dir/ceph.conf"
keyring="$dir/keyring"
logs="$dir/log"
run="$dir/run"
export CEPH_CONF="$conf"
# a unix socket path must fit in 107 bytes: the admin sockets are run/<name>.asok
((${#run} + 20 < 107)) || die "state directory path too long for Ceph's admin sockets ($run): use a shorter DIR"

# true while process PID runs; a zombie counts as gone (on some hosts pid 1 reaps orphans a second late)
running() {
    local stat
    stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
    [[ "${stat##*) }" != Z* ]]
}

# true while the process in pid file $1 runs
alive() {
    [[ -s "$1" ]] && running "$(cat "$1")"
}

# true when something accepts connections on 127.0.0.1:PORT (or ADDRESS:PORT with a second argument)
port_busy() {
    (exec 3<>"/dev/tcp/${2:-127.0.0.1}/$1") 2>/dev/null
}

# pick_port VAR: a port free on 127.0.0.1 now and not yet picked, into VAR
pick_port() {
    local p
    for _ in $(seq 1 200); do
        # below Linux's ephemeral range (32768..60999), where outgoing connections would take them later
        p=$((20000 + RANDOM % 12768))
        if ! port_busy "$p" && [[ " ${taken[*]:-} " != *" $p "* ]]; then
            taken+=("$p")
            printf -v "$1" '%s' "$p"
            return 0
        fi
    done
    die "no free port found on 127.0.0.1"
}

check_port() {
    [[ "$2" =~ ^[0-9]+$ && "$2" -ge 1024 && "$2" -le 65535 ]] || die "$1 must be a port 1024..65535, got '$2'"
}

conf_get() {
    sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*//p" "$conf" | head -n 1
}

gateway_port() {
    conf_get 'rgw frontends' | sed -n 's/.*endpoint=[0-9.]*:\([0-9]*\).*/\1/p'
}

gateway_address() {
    conf_get 'rgw frontends' | sed -n 's/.*endpoint=\([0-9.]*\):.*/\1/p'
}

endpoint() {
    echo "http://$(gateway_address):$(gateway_port)"
}

need_tools() {
    local missing=()
    for tool in ceph ceph-authtool monmaptool ceph-mon ceph-osd radosgw radosgw-admin; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    [[ ${#missing[@]} -eq 0 ]] || die "missing ${missing[*]} (apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw ceph-common; .ci/run does)"
}

random_key() {
    # $1 characters of [A-Z0-9] (access key) or [A-Za-z0-9] (secret key)
    local chars="$2" out=""
    while [[ ${#out} -lt $1 ]]; do
        out+="$(head -c 256 /dev/urandom | tr -dc "$chars" | head -c $(($1 - ${#out})))"
    done
    echo "$out"
}

write_conf() {
    local fsid="$1" mon_v2="$2" mon_v1="$3" rgw_port="$4"
    cat >"$conf" <<EOF
# written by deploy/local/s3.sh: a one-node test cluster on loopback, everything under $dir
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:$mon_v2,v1:127.0.0.1:$mon_v1]
public addr = 127.0.0.1
public network = 127.0.0.0/8
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $keyring
run dir = $run
admin socket = $run/\$name.asok
pid file = $run/\$name.pid
log file = $logs/\$name.log
crash dir = $dir/crash
exporter sock dir = $run
log to stderr = false
err to stderr = true
log flush on exit = true
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
# the mon stops itself when the disk holding its data is fuller than this (default 5 %)
mon data avail warn = 1
mon data avail crit = 1
# 14 s -> 2 s start: every pool rgw creates is a paxos proposal
paxos propose interval = 0.1

[mon]
mon data = $dir/mon/\$cluster-\$id

[osd]
osd data = $dir/osd/\$cluster-\$id
osd objectstore = memstore
memstore device bytes = ${S3_MEMSTORE_BYTES:-4294967296}
# a fast shutdown skips memstore's save to disk: data would not survive a stop or restart
osd fast shutdown = false
osd crush update on start = true

[client.rgw.a]
rgw data = $dir/rgw
rgw frontends = beast endpoint=$bind_address:$rgw_port
rgw dns name = $bind_address
EOF
}

# the daemon's pid file, written by this script (daemons run in the foreground, in the background)
pidfile() {
    echo "$run/$1.script.pid"
}

# start_daemon NAME LOGNAME COMMAND...: starts COMMAND in its own session, output to DIR/log/NAME.out
start_daemon() {
    local name="$1" logname="$2"
    shift 2
    local pf
    pf="$(pidfile "$name")"
    if alive "$pf"; then
        return 0
    fi
    setsid nohup "$@" -f >>"$logs/$name.out" 2>&1 </dev/null 9>&- &
    echo $! >"$pf"
    sleep 0.1
    alive "$pf" || fail_daemon "$name" "$logname" "exited at start"
}

# names a failed daemon, with the tail of its log on stderr before the one line
fail_daemon() {
    local name="$1" logname="$2" what="$3"
    if [[ -n "${S3_VERBOSE:-}" ]]; then
        tail -n 20 "$logs/$name.out" "$logs/$logname.log" >&2 2>/dev/null || true
    fi
    die "$name $what (log: $logs/$logname.log, output: $logs/$name.out)"
}

# await NAME LOGNAME WHAT COMMAND...: retries COMMAND until it succeeds, the daemon dies or time is up
await() {
    local name="$1" logname="$2" what="$3"
    shift 3
    local deadline=$((SECONDS + timeout_s))
    until "$@" >/dev/null 2>&1; do
        alive "$(pidfile "$name")" || fail_daemon "$name" "$logname" "exited while $what"
        ((SECONDS < deadline)) || fail_daemon "$name" "$logname" "timed out after ${timeout_s} s while $what"
        sleep 0.2
    done
}

ceph_cli() {
    timeout 20 ceph --connect-timeout 10 -n client.admin "$@"
}

osd_up() {
    ceph_cli osd dump --format json | grep -q '"up":1'
}

gateway_answers() {
    local code
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$(endpoint)/" 2>/dev/null)" || return 1
    [[ "$code" == 200 ]]
}

# removes the cluster's data and identity, keeps its logs
wipe() {
    rm -rf "$dir/mon" "$dir/osd" "$dir/rgw" "$dir/crash" "$keyring" "$dir/monmap" "$dir/s3.env" "$dir/osd-uuid" \
        "$conf"
}

mkfs() {
    local mon_v2 mon_v1 rgw_port fsid
    taken=("${S3_MON_PORT:-}" "${S3_MON_V1_PORT:-}" "${S3_PORT:-}")
    mon_v2="${S3_MON_PORT:-}"
    mon_v1="${S3_MON_V1_PORT:-}"
    rgw_port="${S3_PORT:-}"
    [[ -n "$mon_v2" ]] || pick_port mon_v2
    [[ -n "$mon_v1" ]] || pick_port mon_v1
    [[ -n "$rgw_port" ]] || pick_port rgw_port
    check_port S3_MON_PORT "$mon_v2"
    check_port S3_MON_V1_PORT "$mon_v1"
    check_port S3_PORT "$rgw_port"
    ! port_busy "$mon_v2" || die "ceph-mon: port 127.0.0.1:$mon_v2 (S3_MON_PORT) is taken by another process"
    ! port_busy "$mon_v1" || die "ceph-mon: port 127.0.0.1:$mon_v1 (S3_MON_V1_PORT) is taken by another process"
    ! port_busy "$rgw_port" "$bind_address" || die "radosgw: port $bind_address:$rgw_port (S3_PORT) is taken by another process"
    fsid="$(cat /proc/sys/kernel/random/uuid)"
    wipe
    mkdir -p "$dir/mon/ceph-a" "$dir/osd/ceph-0" "$dir/rgw" "$dir/crash"
    write_conf "$fsid" "$mon_v2" "$mon_v1" "$rgw_port"
    {
        ceph-authtool --create-keyring "$keyring" --gen-key -n mon. --cap mon 'allow *'
        ceph-authtool "$keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
            --cap mgr 'allow *' --cap mds 'allow *'
        ceph-authtool "$keyring" --gen-key -n osd.0 --cap mon 'allow profile osd' --cap osd 'allow *' \
            --cap mgr 'allow profile osd'
        ceph-authtool "$keyring" --gen-key -n client.rgw.a --cap mon 'allow rw' --cap osd 'allow rwx' \
            --cap mgr 'allow rw'
        chmod 600 "$keyring"
        monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_v2,v1:127.0.0.1:$mon_v1]" "$dir/monmap"
    } >>"$logs/mkfs.out" 2>&1 || die "creating the keyring and monmap failed (output: $logs/mkfs.out)"
    ceph-mon --mkfs -i a --monmap "$dir/monmap" --keyring "$keyring" >>"$logs/mkfs.out" 2>&1 \
        || die "ceph-mon --mkfs failed (log: $logs/mon.a.log, output: $logs/mkfs.out)"
}

start_mon() {
    local v2 v1
    v2="$(conf_get 'mon host' | sed -n 's/.*v2:127\.0\.0\.1:\([0-9]*\).*/\1/p')"
    v1="$(conf_get 'mon host' | sed -n 's/.*v1:127\.0\.0\.1:\([0-9]*\)\].*/\1/p')"
    if ! alive "$(pidfile mon.a)"; then
        port_busy "$v2" && die "ceph-mon: port 127.0.0.1:$v2 (mon v2, in $conf) is taken by another process"
        port_busy "$v1" && die "ceph-mon: port 127.0.0.1:$v1 (mon v1, in $conf) is taken by another process"
    fi
    start_daemon mon.a mon.a ceph-mon -i a
    await mon.a mon.a "waiting for the monitor to answer" ceph_cli mon stat
}

start_osd() {
    if [[ ! -s "$dir/osd-uuid" ]]; then
        local uuid
        uuid="$(cat /proc/sys/kernel/random/uuid)"
        ceph_cli osd new "$uuid" 0 >>"$logs/mkfs.out" 2>&1 || die "ceph osd new failed (output: $logs/mkfs.out)"
        ceph-osd -i 0 --mkfs --osd-uuid "$uuid" >>"$logs/mkfs.out" 2>&1 \
            || die "ceph-osd --mkfs failed (log: $logs/osd.0.log, output: $logs/mkfs.out)"
        echo "$uuid" >"$dir/osd-uuid"
    fi
    start_daemon osd.0 osd.0 ceph-osd -i 0
    await osd.0 osd.0 "waiting for the OSD to be up" osd_up
}

start_gateway() {
    local port
    port="$(gateway_port)"
    if ! alive "$(pidfile rgw.a)" && port_busy "$port" "$(gateway_address)"; then
        die "radosgw: port $(gateway_address):$port (S3_PORT, in $conf) is taken by another process"
    fi
    start_daemon rgw.a client.rgw.a radosgw -n client.rgw.a
    await rgw.a client.rgw.a "waiting for the gateway to answer at $(endpoint)" gateway_answers
}

create_user() {
    local access secret
    if [[ -s "$dir/s3.env" ]]; then
        access="$(sed -n 's/^access_key=//p' "$dir/s3.env")"
        secret="$(sed -n 's/^secret_key=//p' "$dir/s3.env")"
    fi
    access="${S3_ACCESS_KEY:-${access:-$(random_key 20 'A-Z0-9')}}"
    secret="${S3_SECRET_KEY:-${secret:-$(random_key 40 'A-Za-z0-9')}}"
    [[ "$access" =~ ^[A-Za-z0-9]{3,128}$ ]] || die "S3_ACCESS_KEY must be 3..128 letters and digits"
    [[ "$secret" =~ ^[A-Za-z0-9/+=]{8,128}$ ]] || die "S3_SECRET_KEY must be 8..128 characters of [A-Za-z0-9/+=]"
    local info="$dir/run/user.json"
    # the user's JSON holds the secret: never in a log; keys already set are replaced by these
    if timeout 30 radosgw-admin -n client.admin user info --uid=dumpstream >"$info" 2>/dev/null; then
        if ! grep -q "\"access_key\": \"$access\"" "$info" || ! grep -q "\"secret_key\": \"$secret\"" "$info"; then
            timeout 30 radosgw-admin -n client.admin key create --uid=dumpstream --key-type=s3 \
                --access-key="$access" --secret-key="$secret" >/dev/null 2>>"$logs/user.out" \
                || { rm -f "$info"; die "radosgw-admin key create failed (output: $logs/user.out)"; }
        fi
    else
        timeout 30 radosgw-admin -n client.admin user create --uid=dumpstream --display-name=dumpstream \
            --access-key="$access" --secret-key="$secret" >/dev/null 2>>"$logs/user.out" \
            || { rm -f "$info"; die "radosgw-admin user create failed (output: $logs/user.out)"; }
    fi
    rm -f "$info"
    umask 077
    cat >"$dir/s3.env.tmp" <<EOF
endpoint=$(endpoint)
access_key=$access
secret_key=$secret
region=us-east-1
EOF
    mv "$dir/s3.env.tmp" "$dir/s3.env"
}

start_watchdog() {
    local owner="$1"
    [[ "$owner" =~ ^[0-9]+$ ]] || die "--owner-pid must be a process id, got '$owner'"
    echo "$owner" >"$run/owner.pid"
    alive "$run/watchdog.pid" && return 0
    # stops the cluster once the owner (re-read each round: a later start may hand it over) is gone;
    # ends by itself when the cluster was stopped
    setsid nohup bash -c 'while kill -0 "$(cat "$2/run/owner.pid" 2>/dev/null)" 2>/dev/null \
            && [[ -f "$2/run/mon.a.script.pid" ]]; do sleep 1; done
        [[ -f "$2/run/mon.a.script.pid" ]] && exec bash "$1" stop "$2"' \
        s3-watchdog "$self" "$dir" >>"$logs/watchdog.out" 2>&1 </dev/null 9>&- &
    echo $! >"$run/watchdog.pid"
}

cmd_start() {
    local owner="" fresh=""
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --owner-pid) owner="${2:?--owner-pid needs a pid}"; shift 2 ;;
            --fresh) fresh=1; shift ;;
            *) die "start: unknown option '$1' (options: --fresh, --owner-pid PID)" ;;
        esac
    done
    need_tools
    command -v curl >/dev/null || die "curl is needed (apt-get install curl)"
    mkdir -p "$logs" "$run"
    if [[ -n "$fresh" ]] && ! alive "$(pidfile mon.a)"; then
        cmd_stop --discard
        rm -f "$logs"/*.log "$logs"/*.out
    fi
    if [[ ! -s "$conf" || ! -d "$dir/mon/ceph-a/store.db" ]]; then
        mkfs
    fi
    # a gateway port taken by another process: say so before starting anything
    if ! alive "$(pidfile rgw.a)" && port_busy "$(gateway_port)" "$(gateway_address)"; then
        die "radosgw: port $(gateway_address):$(gateway_port) (S3_PORT, in $conf) is taken by another process"
    fi
    # on failure the one line names the daemon and its log; what was started is stopped again
    trap 'rc=$?; if [[ $rc -ne 0 ]]; then cmd_stop >/dev/null 2>&1; fi' EXIT
    start_mon
    start_osd
    start_gateway
    create_user
    [[ -z "$owner" ]] || start_watchdog "$owner"
    trap - EXIT
    cat "$dir/s3.env"
}

# stop_daemons SIGNAL NAME...: signals the daemons at once and waits for all of them (the OSD saves its
# memory store first); one still there after S3_STOP_TIMEOUT seconds is killed
stop_daemons() {
    local signal="$1" pids=() names=()
    shift
    for name in "$@"; do
        local pf
        pf="$(pidfile "$name")"
        if alive "$pf"; then
            pids+=("$(cat "$pf")")
            names+=("$name")
            kill "-$signal" "${pids[-1]}" 2>/dev/null || true
        fi
    done
    local deadline=$((SECONDS + ${S3_STOP_TIMEOUT:-120})) i
    for i in "${!pids[@]}"; do
        local killed=""
        while running "${pids[$i]}"; do
            if ((SECONDS >= deadline)) && [[ -z "$killed" ]]; then
                echo "s3.sh: ${names[$i]} still running ${S3_STOP_TIMEOUT:-120} s after SIG$signal: killed" >&2
                killed=1
                kill -KILL "${pids[$i]}" 2>/dev/null || true
            fi
            sleep 0.05
        done
    done
    for name in "$@"; do
        rm -f "$(pidfile "$name")"
    done
}

cmd_stop() {
    local signal=TERM
    case "${1:-}" in
        --discard) signal=KILL ;;
        "") ;;
        *) die "stop: unknown option '$1' (options: --discard)" ;;
    esac
    # one after the other: radosgw waits for the OSD it talks to (SIGTERM to both at once: 120 s), and the
    # OSD reports its shutdown to the monitor
    stop_daemons "$signal" rgw.a
    stop_daemons "$signal" osd.0
    stop_daemons "$signal" mon.a
    local wd
    wd="$(cat "$run/watchdog.pid" 2>/dev/null || true)"
    if [[ -n "$wd" && "$wd" != "$$" ]] && alive "$run/watchdog.pid"; then
        kill -TERM "$wd" 2>/dev/null || true
    fi
    rm -f "$run/watchdog.pid" "$run/owner.pid"
    [[ "$signal" != KILL ]] || wipe
}

need_cluster() {
    [[ -s "$conf" ]] || die "no cluster in $dir (run: s3.sh start $dir)"
}

cmd_gateway_stop() {
    need_cluster
    case "${1:-}" in
        --kill) stop_daemons KILL rgw.a ;;
        "") stop_daemons TERM rgw.a ;;
        *) die "gateway-stop: unknown option '$1' (options: --kill)" ;;
    esac
}

cmd_gateway_start() {
    need_cluster
    alive "$(pidfile osd.0)" || die "the OSD is not running (run: s3.sh start $dir)"
    start_gateway
    cat "$dir/s3.env"
}

cmd_status() {
    need_cluster
    for d in mon.a osd.0 rgw.a; do
        if alive "$(pidfile "$d")"; then echo "$d=running pid $(cat "$(pidfile "$d")")"; else echo "$d=stopped"; fi
    done
    [[ ! -s "$dir/s3.env" ]] || grep -v '^secret_key=' "$dir/s3.env"
}

# one s3.sh at a time per DIR (two test JVMs starting the same server); daemons do not inherit the lock
exec 9>"$dir/.lock"
flock -w 300 9 || die "another s3.sh has held $dir/.lock for 300 s"

case "$cmd" in
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    gateway-stop) cmd_gateway_stop "$@" ;;
    gateway-start) cmd_gateway_start ;;
    status) cmd_status ;;
    *) usage ;;
esac
