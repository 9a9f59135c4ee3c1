#!/bin/sh
# The image's roles, run as the Procfile runs them:
#   web | worker | tasks      the Procfile's line for that process
#   migrate                   the Procfile's release line, then ensureadmin
#                             (creates an admin and prints its password once)
#   anything else             a manage.py command: createsuperuser, shell, ...
# Arguments after the role are added to its command. Each role's process
# replaces this shell, so the SIGTERM that tini passes on from `docker stop`
# reaches it.
set -eu
cd /app

procfile_command() {
    line=$(sed -n "s/^$1: //p" Procfile)
    if [ -z "$line" ]; then
        echo "The Procfile has no '$1' line." >&2
        return 1
    fi
    printf '%s\n' "$line"
}

role=${1:-web}
[ "$#" -eq 0 ] || shift

case "$role" in
web | worker | tasks)
    # The health check asks which role this container serves.
    echo "$role" > /tmp/uptime-monitor-role
    command=$(procfile_command "$role")
    # The Procfile line as a shell would run it: ${PORT:-8000} and the like.
    eval "exec $command \"\$@\""
    ;;
migrate)
    command=$(procfile_command release)
    eval "$command \"\$@\""
    exec python manage.py ensureadmin
    ;;
*)
    exec python manage.py "$role" "$@"
    ;;
esac
