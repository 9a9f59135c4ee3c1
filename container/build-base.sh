#!/bin/sh
# Builds a local copy of debian:bookworm-slim from Debian's packages and
# imports it into podman, for machines that reach Debian's archive but no
# image registry. Prints the image name; build the Containerfile on it with
#   podman build --build-arg BASE_IMAGE="$(container/build-base.sh)" .
#
# The tarball is cached under ${XDG_CACHE_HOME:-~/.cache}/uptime-monitor/,
# named by a hash of this script and the apt sources it used: a changed
# recipe builds a new one, an unchanged one costs a `podman image exists`.
set -eu

SUITE=bookworm
CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/uptime-monitor"
# This machine's own Debian sources, so the build reaches the archive the
# way apt-get here does; mmdebstrap's default mirror when there are none.
SOURCES=/etc/apt/sources.list.d/debian.sources
[ -f "$SOURCES" ] || SOURCES=""

recipe_hash() {
    { cat "$0"; [ -z "$SOURCES" ] || cat "$SOURCES"; } | sha256sum | cut -c1-12
}

build_tarball() {
    tarball=$1
    mkdir -p "$CACHE_DIR"
    # What the official slim image leaves out (debuerreotype's --slimify):
    # documentation, manuals and translations, each copyright file kept.
    # The merged-usr hook merges /usr itself; else apt pulls in usrmerge
    # and with it the whole of perl.
    mmdebstrap --quiet --variant=minbase --format=tar \
        --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
        --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/info/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/groff/*' \
        --dpkgopt='path-exclude=/usr/share/linda/*' \
        --dpkgopt='path-exclude=/usr/share/lintian/overrides/*' \
        --aptopt='APT::Install-Recommends "false"' \
        --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
        "$SUITE" "$tarball.partial" $SOURCES
    mv "$tarball.partial" "$tarball"
}

main() {
    key=$(recipe_hash)
    image="localhost/uptime-monitor-base:$SUITE-$key"
    if podman image exists "$image"; then
        echo "$image"
        return
    fi
    tarball="$CACHE_DIR/debian-$SUITE-slim-$key.tar"
    [ -f "$tarball" ] || build_tarball "$tarball" >&2
    podman import --quiet --change 'CMD ["bash"]' "$tarball" "$image" >/dev/null
    echo "$image"
}

main
