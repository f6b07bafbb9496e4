#!/usr/bin/env bash
# Builds the mqnamesrv container image: a drop-in for the NameServer of Apache's RocketMQ image
# (apache/rocketmq), made from Debian bookworm packages and our own .deb, no base image from any
# registry. Output: an OCI archive that `podman load -i` and `docker load -i` (Docker 25 and
# later) take. docs/operations.md (Containers and Kubernetes) says how to run it.
#
#   packaging/oci/build.sh [--deb FILE] [--out FILE] [--name NAME] [--cache DIR]
#                          [--source URL] [--rocketmq-version X.Y.Z]
#
#   --deb FILE     the package to install (default: build it, cmake --preset package + cpack)
#   --out FILE     the archive (default build/oci/mqnamesrv-<version>.oci.tar)
#   --name NAME    the image's name in the archive (default mqnamesrv:<version>)
#   --cache DIR    where the base root is kept (default ~/.cache/mqnamesrv-oci)
#   --source URL   the org.opencontainers.image.source annotation (default: git's origin)
#   --rocketmq-version  the Apache image this one stands in for (default 5.5.0): ROCKETMQ_HOME
#                  is /home/rocketmq/rocketmq-<it>, as there
#
# The image: the shared libraries the .deb depends on (mmdebstrap, variant extract: files only,
# no dpkg, no apt), bash as /bin/sh for `sh mqnamesrv`, CA certificates, tzdata, netbase; the
# .deb's binaries in /usr/bin; Apache's layout under /home/rocketmq (user rocketmq, uid and gid 3000):
# $ROCKETMQ_HOME/bin with a launcher per binary and docker-entrypoint.sh, $ROCKETMQ_HOME/conf,
# and the volumes logs/, store/ and namesrv/. The base root (everything from Debian) is cached,
# keyed by the hash of its package list and of base-hook.sh; delete the cache for a fresh one
# (security updates). Given the same .deb and the same base, the archive is the same bytes:
# every time stamp is the commit's (SOURCE_DATE_EPOCH), files are sorted, owners are numbers.
#
# Needs root (mmdebstrap, and the owners of the files in the layer): sudo, or `podman unshare`.
# Debian packages: mmdebstrap umoci (bin/install-deps --test installs them).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
oci=$here/packaging/oci

deb=
out=
name=
cache=${XDG_CACHE_HOME:-$HOME/.cache}/mqnamesrv-oci
source_url=
rocketmq_version=5.5.0
while [[ $# -gt 0 ]]; do
    case $1 in
    --deb) deb=$(realpath "$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --source) source_url=$2; shift 2 ;;
    --rocketmq-version) rocketmq_version=$2; shift 2 ;;
    -h | --help) sed -n '2,31p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "build.sh: unknown option $1 (--help)" >&2; exit 2 ;;
    esac
done
log() { echo "[oci] $*" >&2; }
[[ $(id -u) -eq 0 ]] || { echo "build.sh: needs root (mmdebstrap, file owners): sudo, or podman unshare" >&2; exit 1; }
for tool in mmdebstrap umoci dpkg-deb python3 sha256sum; do
    command -v "$tool" >/dev/null || { echo "build.sh: missing $tool (bin/install-deps --test)" >&2; exit 1; }
done

# The account and the paths of Apache's image (rocketmq-docker's Dockerfiles).
USER_ID=3000
HOME_DIR=/home/rocketmq
RMQ_HOME=$HOME_DIR/rocketmq-$rocketmq_version
# Packages the image takes beyond the .deb's dependencies, each without its own dependencies.
EXTRA_PACKAGES="base-files bash ca-certificates libtinfo6 netbase tzdata"

# ---- the .deb ----------------------------------------------------------------------------
if [[ -z $deb ]]; then
    log "building the .deb (cmake --preset package, cpack)"
    (cd "$here" && cmake --preset package >/dev/null && cmake --build build/package >/dev/null &&
        cd build/package && rm -f ./*.deb && cpack -G DEB >/dev/null)
    deb=$(ls "$here"/build/package/mqnamesrv_*.deb)
fi
[[ -f $deb ]] || { echo "build.sh: no package $deb" >&2; exit 1; }
# Debian's architecture names are OCI's for amd64 and arm64; mmdebstrap builds for this host's.
arch=$(dpkg-deb --field "$deb" Architecture)
[[ $arch == "$(dpkg --print-architecture)" ]] ||
    { echo "build.sh: $deb is for $arch, this host is $(dpkg --print-architecture)" >&2; exit 1; }

# Time stamps: the commit's, so that two builds of one commit are the same bytes.
if [[ -z ${SOURCE_DATE_EPOCH:-} ]]; then
    SOURCE_DATE_EPOCH=$(git -C "$here" log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
if [[ -z $source_url ]]; then
    source_url=$(git -C "$here" remote get-url origin 2>/dev/null || echo "unknown (build.sh --source URL)")
fi

# ---- the base root, cached -----------------------------------------------------------------
deps=$(dpkg-deb --field "$deb" Depends | sed 's/([^)]*)//g; s/[|,]/ /g' | xargs -n1 | sort -u | xargs)
key=$( (echo "$arch"; echo "$deps"; echo "$EXTRA_PACKAGES"; cat "$oci/base-hook.sh") | sha256sum | cut -c1-16)
base=$cache/base-bookworm-$key.tar
mkdir -p "$cache"
if [[ ! -s $base ]]; then
    log "base root: mmdebstrap bookworm ($deps; $EXTRA_PACKAGES), cached as $base"
    # Debian's mirror and, for a stable release, its updates and security suites (mmdebstrap's
    # defaults); resolv.conf and hostname are the build host's, not the image's.
    if ! OCI_EXTRA_PACKAGES=$EXTRA_PACKAGES mmdebstrap --variant=extract --format=tar --include="${deps// /,}" \
        --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr --extract-hook="$oci/base-hook.sh" \
        --extract-hook='rm -f "$1/etc/resolv.conf" "$1/etc/hostname"' \
        bookworm "$base.tmp.$$" >"$cache/mmdebstrap.$$.log" 2>&1; then
        tail -20 "$cache/mmdebstrap.$$.log" >&2
        rm -f "$base.tmp.$$" "$cache/mmdebstrap.$$.log"
        exit 1
    fi
    # (A build beside this one may have made the same base meanwhile: either copy will do.)
    mv "$base.tmp.$$" "$base"
    rm -f "$cache/mmdebstrap.$$.log"
fi

# ---- the root file system ------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/mqnamesrv-oci.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
mkdir -p "$root"
tar -C "$root" -xf "$base"
dpkg-deb --fsys-tarfile "$deb" | tar -C "$root" -x --keep-directory-symlink
{
    printf 'Package: mqnamesrv\nStatus: install ok installed\n'
    dpkg-deb --field "$deb" Version Architecture Maintainer Depends Description
    echo
} >>"$root/var/lib/dpkg/status"
binaries=$(dpkg-deb --contents "$deb" | awk '$6 ~ /^\.\/usr\/bin\/./ {sub("^./usr/bin/", "", $6); print $6}')

# Apache's layout: $ROCKETMQ_HOME/bin with a launcher per binary (mqnamesrv, nsadmin, and
# mqcontroller when the package has it), conf/ with the reference config and the ACL example,
# the volumes. conf/ and the volumes belong to rocketmq, as the whole home does there.
install -d -m 0755 "$root$RMQ_HOME/bin"
for b in $binaries; do
    sed "s/@NAME@/$b/g" "$oci/launcher.sh.in" >"$root$RMQ_HOME/bin/$b"
    chmod 0755 "$root$RMQ_HOME/bin/$b"
done
install -m 0755 "$oci/docker-entrypoint.sh" "$root$RMQ_HOME/bin/docker-entrypoint.sh"
install -d -m 0755 -o "$USER_ID" -g "$USER_ID" "$root$HOME_DIR" "$root$RMQ_HOME/conf" \
    "$root$HOME_DIR/logs" "$root$HOME_DIR/store" "$root$HOME_DIR/namesrv"
install -m 0644 -o "$USER_ID" -g "$USER_ID" "$root/etc/mqnamesrv/namesrv.conf" "$root$RMQ_HOME/conf/namesrv.conf"
install -m 0644 -o "$USER_ID" -g "$USER_ID" "$root/usr/share/doc/mqnamesrv/examples/plain_acl.yml.example" \
    "$root$RMQ_HOME/conf/plain_acl.yml.example"

# What a container has no use for: the package's systemd, logrotate and /etc parts, apt's and
# dpkg's leftovers (the status file stays, for scanners), manuals, translations (6 MB, bash's
# and the libraries' messages), documentation but the copyright files (the licences), lintian
# and menu data, and glibc's iconv modules (8 MB that nothing here loads: no binary calls iconv).
rm -rf "$root/etc/mqnamesrv" "$root/etc/logrotate.d" "$root/usr/lib/systemd" "$root/usr/lib/sysusers.d" \
    "$root/usr/lib/tmpfiles.d" "$root/usr/share/mqnamesrv" "$root/etc/apt" "$root/var/cache/apt" \
    "$root/var/lib/apt" "$root/usr/share/man" "$root/usr/share/info" "$root/usr/share/lintian" \
    "$root/usr/share/locale" \
    "$root/usr/share/menu" "$root/etc/update-motd.d" "$root/etc/dpkg" "$root"/usr/lib/*/gconv
find "$root/var/log" -type f -delete
find "$root/usr/share/doc" -mindepth 1 \( -type f -o -type l \) ! -name copyright -delete
find "$root/usr/share/doc" -mindepth 1 -depth -type d -empty -delete

# Accounts: root, rocketmq (Apache's uid and gid), nobody. No passwords (no login here).
cat >"$root/etc/passwd" <<EOF
root:x:0:0:root:/root:/bin/sh
rocketmq:x:$USER_ID:$USER_ID:RocketMQ NameServer:$HOME_DIR:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOF
cat >"$root/etc/group" <<EOF
root:x:0:
rocketmq:x:$USER_ID:
nogroup:x:65534:
EOF
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
chmod 0644 "$root/etc/passwd" "$root/etc/group" "$root/etc/nsswitch.conf"

# The binary runs in this root (its libraries resolve), and says what it is.
version_line=$(chroot "$root" /usr/bin/mqnamesrv --version)
version=$(sed -n 's/^mqnamesrv \([^ ]*\) (git \([^)]*\)).*/\1/p' <<<"$version_line")
revision=$(sed -n 's/^mqnamesrv \([^ ]*\) (git \([^)]*\)).*/\2/p' <<<"$version_line")
[[ -n $version && -n $revision ]] || { echo "build.sh: unexpected --version: $version_line" >&2; exit 1; }
name=${name:-mqnamesrv:$version}
out=${out:-$here/build/oci/mqnamesrv-$version.oci.tar}

# ---- the OCI image -------------------------------------------------------------------------
# One layer: the root, sorted, every time stamp at most the commit's, numeric owners.
tar -C "$root" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime --numeric-owner \
    --format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    -cf "$work/layer.tar" .
layout=$work/layout
tag=$version
umoci init --layout "$layout"
umoci new --image "$layout:$tag"
umoci raw add-layer --image "$layout:$tag" --history.created "$created" \
    --history.created_by "packaging/oci/build.sh: Debian bookworm libraries and $(basename "$deb")" \
    "$work/layer.tar"
annotations=(
    "org.opencontainers.image.title=mqnamesrv"
    "org.opencontainers.image.description=RocketMQ NameServer in C, a drop-in for the NameServer of the apache/rocketmq image"
    "org.opencontainers.image.version=$version"
    "org.opencontainers.image.revision=$revision"
    "org.opencontainers.image.source=$source_url"
    "org.opencontainers.image.licenses=Apache-2.0"
    "org.opencontainers.image.created=$created"
)
config_args=(
    --created "$created" --author "mqnamesrv" --architecture "$arch" --os linux
    --config.user "$USER_ID:$USER_ID" --config.workingdir "$RMQ_HOME/bin"
    --config.env "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    --config.env "HOME=$HOME_DIR" --config.env "ROCKETMQ_VERSION=$rocketmq_version"
    --config.env "ROCKETMQ_HOME=$RMQ_HOME"
    --config.entrypoint "$RMQ_HOME/bin/docker-entrypoint.sh" --config.cmd nameserver
    --config.exposedports 9876/tcp --config.exposedports 5557/tcp
    --config.volume "$HOME_DIR/logs" --config.volume "$HOME_DIR/store" --config.volume "$HOME_DIR/namesrv"
    --config.stopsignal SIGTERM
    --history.created "$created" --history.created_by "packaging/oci/build.sh: configuration"
)
for a in "${annotations[@]}"; do
    config_args+=(--config.label "$a" --manifest.annotation "$a")
done
umoci config --image "$layout:$tag" "${config_args[@]}"
umoci gc --layout "$layout"

# The index names the image as podman (org.opencontainers.image.ref.name) and Docker
# (io.containerd.image.name) read it; then the layout becomes the archive, sorted and stamped.
python3 - "$layout/index.json" "$name" <<'EOF'
import json, sys
path, name = sys.argv[1], sys.argv[2]
with open(path) as f:
    index = json.load(f)
repo = name.rsplit(":", 1)[0]
full = name if "/" in repo else "docker.io/library/" + name
for m in index["manifests"]:
    m["annotations"] = {"io.containerd.image.name": full,
                        "org.opencontainers.image.ref.name": name}
with open(path, "w") as f:
    json.dump(index, f, separators=(",", ":"), sort_keys=True)
EOF
mkdir -p "$(dirname "$out")"
tar -C "$layout" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
    --format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    --mode=go+rX -cf "$out.tmp.$$" oci-layout index.json blobs
mv "$out.tmp.$$" "$out"
log "$out: $name ($(du -k "$out" | cut -f1) KiB; the root $(du -sk "$root" | cut -f1) KiB)"
echo "$out"
