#!/usr/bin/env bash
# A throwaway PostgreSQL for tests and benchmarks: a cluster made with
# initdb in a temporary folder, a server listening only on a Unix socket
# in that folder (no TCP port, nothing reachable from outside), removed
# afterwards. Debian's `postgresql` package provides the programs.
#
#   pg_harness.sh run CMD [ARGS...]
#       start a cluster, run CMD with AW_PG_URL set to its database
#       (postgresql://postgres@/agentwire?host=DIR), stop and remove the
#       cluster whatever CMD does; exit with CMD's status. Prints
#       "SKIP: ..." and exits 77 when PostgreSQL cannot be started here.
#   pg_harness.sh start DIR     start a cluster in DIR (made if missing);
#                               prints the URL
#   pg_harness.sh stop DIR      stop it and remove DIR
#
# Environment: AW_PG_FSYNC=on keeps fsync (the default turns it off:
# tests kill our processes, not the database's machine, and run faster);
# AW_PG_BIN the folder of initdb/pg_ctl (default: the newest
# /usr/lib/postgresql/*/bin). As root the server runs as the `postgres`
# user (PostgreSQL refuses root), made if missing.
set -u

pg_bin() {
    if [ -n "${AW_PG_BIN:-}" ]; then echo "$AW_PG_BIN"; return; fi
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [ -n "$d" ] && echo "$d"
}

# Run a command as the server's user (ourselves when not root).
as_pg() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

pg_start() {
    local dir=$1 bin
    bin=$(pg_bin)
    if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
        echo "SKIP: PostgreSQL's programs are not installed (Debian: postgresql)" >&2
        return 77
    fi
    if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin postgres >/dev/null 2>&1 || {
            echo "SKIP: no postgres user to run the server as" >&2
            return 77
        }
    fi
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    chmod 700 "$dir"
    if ! as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
        >"$dir/initdb.log" 2>&1; then
        echo "pg_harness: initdb failed:" >&2
        tail -n 20 "$dir/initdb.log" >&2
        return 1
    fi
    local fsync=off
    [ "${AW_PG_FSYNC:-off}" = on ] && fsync=on
    cat >>"$dir/data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$dir'
fsync = $fsync
synchronous_commit = on
max_connections = 100
shared_buffers = 64MB
log_min_messages = warning
EOF
    if ! as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null 2>&1; then
        echo "pg_harness: the server did not start:" >&2
        tail -n 20 "$dir/server.log" >&2
        return 1
    fi
    if ! as_pg "$bin/createdb" -h "$dir" -U postgres agentwire >/dev/null 2>&1; then
        echo "pg_harness: createdb failed" >&2
        return 1
    fi
    echo "postgresql://postgres@/agentwire?host=$dir"
}

pg_stop() {
    local dir=$1 bin
    bin=$(pg_bin)
    if [ -n "$bin" ] && [ -f "$dir/data/postmaster.pid" ]; then
        as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1
    fi
    rm -rf "$dir"
}

case "${1:-}" in
start)
    pg_start "$2"
    ;;
stop)
    pg_stop "$2"
    ;;
run)
    shift
    dir=$(mktemp -d /tmp/aw-pg.XXXXXX)
    trap 'pg_stop "$dir"' EXIT
    trap 'exit 130' INT TERM
    url=$(pg_start "$dir")
    rc=$?
    if [ $rc -ne 0 ]; then
        [ $rc = 77 ] && exit 77
        exit 1
    fi
    AW_PG_URL="$url" "$@"
    exit $?
    ;;
*)
    echo "usage: pg_harness.sh run CMD [ARGS...] | start DIR | stop DIR" >&2
    exit 2
    ;;
esac
