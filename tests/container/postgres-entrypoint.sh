#!/bin/sh
# On an empty data directory: a cluster whose superuser is POSTGRES_USER
# with POSTGRES_PASSWORD, and the database POSTGRES_DB. Then the server,
# replacing this shell so that `podman stop` reaches it.
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    password_file=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$password_file"
    initdb --username="$POSTGRES_USER" --pwfile="$password_file" \
        --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --no-sync >/dev/null
    rm "$password_file"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    if [ "$POSTGRES_DB" != postgres ]; then
        echo "CREATE DATABASE \"$POSTGRES_DB\";" |
            postgres --single -D "$PGDATA" -j postgres >/dev/null
    fi
fi
# Arguments as the public image takes them: `postgres -c name=value ...`.
[ "${1:-}" != postgres ] || shift
exec postgres -c listen_addresses='*' "$@"
