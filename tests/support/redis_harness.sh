#!/usr/bin/env bash
# A throwaway redis-server for tests and benchmarks, on 127.0.0.1 only, on
# a free port (redis-server has no "port 0": ports are tried until one
# binds), with no persistence, stopped afterwards.
#
#   redis_harness.sh start DIR [PORT]   start one in DIR; prints its port
#                                       (exit 77 and "SKIP: ..." without redis-server)
#   redis_harness.sh stop DIR           stop it (SHUTDOWN NOSAVE, then SIGKILL)
#
# A test that stops Redis mid-run and brings it back calls stop and then
# start with the same DIR and PORT.
set -u

redis_start() {
    local dir=$1 want=${2:-} port tries=0
    if ! command -v redis-server >/dev/null 2>&1; then
        echo "SKIP: redis-server is not installed (Debian: redis-server)" >&2
        return 77
    fi
    mkdir -p "$dir"
    while [ $tries -lt 40 ]; do
        tries=$((tries + 1))
        port=${want:-$((20000 + (RANDOM * 32768 + RANDOM) % 40000))}
        rm -f "$dir/redis.pid"
        redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --daemonize yes \
            --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" >/dev/null 2>&1
        # up when it answers PING; a port taken by another makes it exit at once
        local i
        for i in $(seq 1 100); do
            if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG &&
                [ -f "$dir/redis.pid" ]; then
                echo "$port" >"$dir/port"
                echo "$port"
                return 0
            fi
            [ -f "$dir/redis.pid" ] || [ $i -lt 20 ] || break
            sleep 0.05
        done
        [ -n "$want" ] && sleep 0.2 # the same port asked for: it may still be closing
    done
    echo "redis_harness: no redis-server could be started (see $dir/redis.log)" >&2
    return 1
}

redis_stop() {
    local dir=$1 port pid
    port=$(cat "$dir/port" 2>/dev/null)
    [ -n "$port" ] && redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1
    pid=$(cat "$dir/redis.pid" 2>/dev/null)
    if [ -n "$pid" ]; then
        local i
        for i in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        kill -9 "$pid" 2>/dev/null
    fi
    rm -f "$dir/redis.pid"
}

case "${1:-}" in
start)
    redis_start "$2" "${3:-}"
    ;;
stop)
    redis_stop "$2"
    ;;
*)
    echo "usage: redis_harness.sh start DIR [PORT] | stop DIR" >&2
    exit 2
    ;;
esac
