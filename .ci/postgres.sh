#!/usr/bin/env bash
# Start a private PostgreSQL cluster on a free loopback port for the tests.
# Prints three lines: the connection string, the data folder and the pg_ctl to stop it with.
set -euo pipefail

find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
bin=$(find_bin)
if [ -z "$bin" ]; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  bin=$(find_bin)
fi

root=$(mktemp -d /tmp/rg-postgres.XXXXXX)
chown postgres "$root"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
runuser -u postgres -- "$bin/initdb" -D "$root/data" -A trust -U postgres >&2
runuser -u postgres -- "$bin/pg_ctl" -D "$root/data" -l "$root/server.log" -w \
  -o "-p $port -k $root -c listen_addresses=127.0.0.1" start >&2
echo "postgresql://postgres@127.0.0.1:$port/postgres"
echo "$root/data"
echo "$bin/pg_ctl"
