#!/bin/sh
# mmdebstrap extract hook of packaging/oci/build.sh (the image's base root, $1). mmdebstrap
# has extracted the shared libraries the .deb depends on (variant "extract": no maintainer
# script ran, and no dpkg or apt is in the root). This adds the few packages the image needs
# beyond them, each extracted alone, without its dependencies (bash wants debianutils, tzdata
# and ca-certificates want debconf and openssl: a package manager the image must not carry):
# $OCI_EXTRA_PACKAGES, set by build.sh. Then what their maintainer scripts would have made:
# /bin/sh, the CA bundle (update-ca-certificates) and OpenSSL's default paths to it. Last, the
# dpkg status of every package in the root (no dpkg reads it here; image scanners do, to list
# what the image holds).
set -eu
root=$1
: "${OCI_EXTRA_PACKAGES:?set by packaging/oci/build.sh}"
: "${MMDEBSTRAP_APT_CONFIG:?run as an mmdebstrap hook}"

dl=$(mktemp -d)
trap 'rm -rf "$dl"' EXIT
# Downloaded with the root's own apt configuration: the same mirror and lists as the libraries.
# shellcheck disable=SC2086 # the list is space-separated package names
(cd "$dl" && APT_CONFIG=$MMDEBSTRAP_APT_CONFIG apt-get download -q $OCI_EXTRA_PACKAGES) >/dev/null
for deb in "$dl"/*.deb; do
    dpkg-deb --fsys-tarfile "$deb" | tar -C "$root" -x --keep-directory-symlink
done

# /bin/sh is bash: `sh -c 'CMD'` (how Apache's Helm chart starts the NameServer) then execs
# CMD, which becomes PID 1 and gets the SIGTERM; dash would stay PID 1 and ignore it.
ln -sfn bash "$root/usr/bin/sh"

# update-ca-certificates, done by hand: every certificate ca-certificates ships, in one file.
mkdir -p "$root/etc/ssl/certs"
find "$root/usr/share/ca-certificates" -name '*.crt' | LC_ALL=C sort | xargs cat \
    >"$root/etc/ssl/certs/ca-certificates.crt"
# OpenSSL's OPENSSLDIR is /usr/lib/ssl (the openssl package links it to /etc/ssl).
mkdir -p "$root/usr/lib/ssl"
ln -sfn /etc/ssl/certs "$root/usr/lib/ssl/certs"
ln -sfn /etc/ssl/certs/ca-certificates.crt "$root/usr/lib/ssl/cert.pem"

# The status file: the control fields of each package, as dpkg would have written them.
for deb in "$root"/var/cache/apt/archives/*.deb "$dl"/*.deb; do
    printf 'Package: %s\nStatus: install ok installed\n' "$(dpkg-deb --field "$deb" Package)"
    dpkg-deb --field "$deb" Version Architecture Source Maintainer Description
    echo
done >>"$root/var/lib/dpkg/status"
