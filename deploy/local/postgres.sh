#!/usr/bin/env bash
# A PostgreSQL server from Debian's package (postgresql, version 15) on loopback, for the Iceberg JDBC
# catalog (README, "Iceberg tables"): one data directory, one database, one password-protected user.
#
#   deploy/local/postgres.sh start DIR [PORT]   initialise DIR on first use, start the server on 127.0.0.1:PORT
#                                               (default: a free port) and print its JDBC URL
#   deploy/local/postgres.sh url DIR            print the JDBC URL of the server in DIR
#   deploy/local/postgres.sh stop DIR           stop the server in DIR (fast shutdown)
#
# Database and user: dumpstream. The password is $DUMPSTREAM_PG_PASSWORD, or made up at the first start
# and kept in DIR/password (mode 600); it is never printed. Run as root, the server runs as the postgres
# user, which then owns DIR/data. Logs: DIR/postgres.log.
set -euo pipefail

bin="${DUMPSTREAM_PG_BIN:-/usr/lib/postgresql/15/bin}"

die() {
    echo "postgres.sh: $*" >&2
    exit 1
}

[[ $# -ge 2 ]] || die "usage: postgres.sh start|url|stop DIR [PORT]"
cmd="$1"
dir="$(mkdir -p "$2" && cd "$2" && pwd)"
data="$dir/data"
[[ -x "$bin/pg_ctl" ]] || die "no PostgreSQL server in $bin (Debian: apt-get install -y postgresql)"

# as root the server runs as postgres: initdb and postgres refuse to run as root
as_owner() {
    if [[ "$(id -u)" -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

free_port() {
    # the kernel picks an unused port for a socket bound to port 0
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

url() {
    [[ -f "$dir/port" ]] || die "no server started in $dir (run: postgres.sh start $dir)"
    echo "jdbc:postgresql://127.0.0.1:$(cat "$dir/port")/dumpstream"
}

start() {
    local port="${1:-}"
    if [[ ! -f "$data/PG_VERSION" ]]; then
        umask 077
        if [[ -n "${DUMPSTREAM_PG_PASSWORD:-}" ]]; then
            printf '%s\n' "$DUMPSTREAM_PG_PASSWORD" > "$dir/password"
        elif [[ ! -s "$dir/password" ]]; then
            head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$dir/password"
        fi
        mkdir -p "$data"
        if [[ "$(id -u)" -eq 0 ]]; then
            # every directory above DIR must be searchable by postgres; DIR itself is made its own
            chown postgres:postgres "$dir" "$data" "$dir/password"
        fi
        as_owner "$bin/initdb" -D "$data" --username=dumpstream --pwfile="$dir/password" --auth=scram-sha-256 \
            --encoding=UTF8 --locale=C.UTF-8 > "$dir/initdb.log" 2>&1 || die "initdb failed: $(tail -5 "$dir/initdb.log")"
    fi
    if as_owner "$bin/pg_ctl" -D "$data" status > /dev/null 2>&1; then
        url
        return
    fi
    [[ -n "$port" ]] || port="$(free_port)"
    echo "$port" > "$dir/port"
    # the socket lives in DIR too: no write access to /var/run/postgresql is needed
    as_owner "$bin/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=on -c max_connections=100" start > /dev/null \
        || die "the server did not start: $(tail -5 "$dir/postgres.log")"
    if ! PGPASSWORD="$(cat "$dir/password")" "$bin/psql" -h 127.0.0.1 -p "$port" -U dumpstream -d postgres -tAq \
        -c "SELECT 1 FROM pg_database WHERE datname = 'dumpstream'" | grep -q 1; then
        PGPASSWORD="$(cat "$dir/password")" "$bin/createdb" -h 127.0.0.1 -p "$port" -U dumpstream dumpstream \
            || die "cannot create database dumpstream"
    fi
    url
}

stop() {
    [[ -f "$data/PG_VERSION" ]] || die "no PostgreSQL data directory in $dir"
    as_owner "$bin/pg_ctl" -D "$data" -m fast -w -t 60 stop > /dev/null 2>&1 || true
}

case "$cmd" in
    start) start "${3:-}" ;;
    url) url ;;
    stop) stop ;;
    *) die "unknown command '$cmd' (start, url or stop)" ;;
esac
