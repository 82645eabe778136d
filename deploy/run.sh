#!/usr/bin/env bash
# `make run`'s processes: the task cluster, the standing worker and the development web server on
# $HOST:$PORT, until Ctrl-C or a TERM. Either stops all three, each after what it is doing, and this
# script exits only once they have: joyback.embedded_db, around it, stops PostgreSQL after them.
set -u
BIN="${BIN:-.venv/bin}"
HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-8000}"

pids=""
web=""
stop() {
    # The group's signal and the TERM joyback.embedded_db forwards both arrive: from here on they
    # are ignored, so the second cannot end this script before the processes it waits for.
    trap "" INT TERM
    trap - EXIT
    # A TERM to the whole group reached every process already, and a second one arriving while the
    # web server runs its exit handlers ends it with a traceback: a moment for them to go first.
    for _ in $(seq 10); do
        alive=""
        for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [ -z "$alive" ] && break
        sleep 0.1
    done
    # What is left was not told (Ctrl-C, which background jobs of a script ignore, or a TERM to this
    # script alone): each is sent TERM, the web server's reloading child included.
    [ -n "$web" ] && kill -0 "$web" 2>/dev/null && pkill -TERM -P "$web"
    kill $pids 2>/dev/null
    wait
    exit 0
}
trap stop INT TERM EXIT

LOG_LEVEL=WARNING "$BIN/python" manage.py qcluster &
pids="$pids $!"
LOG_LEVEL=WARNING "$BIN/python" manage.py work &
pids="$pids $!"
"$BIN/python" manage.py runserver "$HOST:$PORT" &
web=$!
pids="$pids $!"
for _ in $(seq 60); do
    "$BIN/python" -c "import urllib.request as u; u.urlopen('http://$HOST:$PORT/healthz/live')" 2>/dev/null && break
    sleep 0.5
done
echo ""
echo "JoyBack runs on http://$HOST:$PORT/  (mails: tmp/mails/, Ctrl-C stops everything)"
"$BIN/python" manage.py demo_seed --logins --site "http://$HOST:$PORT"
wait
