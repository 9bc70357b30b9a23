#!/usr/bin/env bash
# Sets up real builds of generated Dockerfiles with Podman (the tests
# crates/sclc/tests/podman.rs and crates/sclc/tests/engines.rs):
#   1. installs podman, runc, debootstrap and docker-registry (the registry
#      `sclc image build --push` is tested against) from Debian (apt-get, as
#      root);
#   2. makes a local Debian 12 base image, since no image can be pulled from a
#      registry here: debootstrap a minimal bookworm root from the machine's
#      own apt mirror, then `podman import` it as docker.io/library/debian:12,
#      which is what `FROM debian:12` resolves to, so no build pulls anything.
# The root gets the machine's CA bundle (/etc/ssl/certs/ca-certificates.crt):
# downloads here pass a TLS-inspecting proxy whose CA only that bundle holds.
# A copy also goes to /usr/local/share/ca-certificates/, because installing
# the ca-certificates package (python3-venv brings it, via python3-pip-whl)
# regenerates the bundle from Mozilla's list plus that folder: without the
# copy, pip then fails with CERTIFICATE_VERIFY_FAILED. Nothing else is needed:
# Debian's pip, also the one ensurepip puts in a virtual environment, reads
# that bundle (its certifi is patched to /etc/ssl/certs/ca-certificates.crt),
# so no pip.conf or PIP_CERT goes into the image. This is a property of
# this machine's network, not of the image sclc expects: an official
# debian:12 builds the same Dockerfiles unchanged.
#
# Idempotent and quick when done: an image made by this script with the same
# recipe and CA bundle is kept; the root's tarball is cached in
# target/podman/ (git-ignored), so a removed image is re-imported in seconds.
# A debian:12 image this script did not make (a real one, pulled) is left
# alone and used as it is.
#
# Environment: SCL_DEBIAN_MIRROR overrides the mirror (default: the first
# bookworm `deb` source of /etc/apt/sources.list{,.d}).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE="$ROOT/target/podman"
IMAGE=docker.io/library/debian:12
SUITE=bookworm
HOST_CA=/etc/ssl/certs/ca-certificates.crt
# Bump when the root's contents change, so that an old image is rebuilt.
RECIPE=2
LABEL=dev.scl.podman-setup

start=$SECONDS
old_id=
log() { echo "podman-setup: $*"; }

# --- 1. packages -------------------------------------------------------------
missing=()
for tool in podman runc debootstrap docker-registry; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "podman-setup: installing ${missing[*]} needs root" >&2; exit 1; }
  log "installing ${missing[*]} from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    podman runc debootstrap docker-registry >/dev/null
fi
log "$(podman --version), $(runc --version | head -n1), debootstrap $(dpkg-query -W -f '${Version}' debootstrap)"

# --- 2. the base image -------------------------------------------------------
[ -r "$HOST_CA" ] || { echo "podman-setup: $HOST_CA is missing" >&2; exit 1; }
ca_sum=$(sha256sum "$HOST_CA" | cut -c1-16)
stamp="$RECIPE-$ca_sum"

if podman image exists "$IMAGE"; then
  have=$(podman image inspect --format "{{index .Labels \"$LABEL\"}}" "$IMAGE" 2>/dev/null || true)
  if [ "$have" = "$stamp" ]; then
    log "$IMAGE is ready ($((SECONDS - start)) s)"
    exit 0
  elif [ -z "$have" ] || [ "$have" = "<no value>" ]; then
    log "$IMAGE exists and was not made by this script: using it as it is"
    exit 0
  fi
  log "$IMAGE was made by an older recipe or with another CA bundle ($have): remaking it"
  old_id=$(podman image inspect --format '{{.Id}}' "$IMAGE")
fi

# The mirror: the first `deb` source for $SUITE, in one-line or deb822 form.
mirror_of() {
  local suite=$1
  {
    cat /etc/apt/sources.list 2>/dev/null || true
    for f in /etc/apt/sources.list.d/*.list; do [ -r "$f" ] && cat "$f"; done
    true
  } | awk -v s="$suite" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } if ($(i + 1) == s) { print $i; exit } }'
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    # deb822: paragraphs of "Key: value" lines; a paragraph is one source.
    awk -v s="$suite" '
      function flush() { if (!found && types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " s " ") && enabled != "no") { split(uris, u, " "); print u[1]; found = 1; exit } types = uris = suites = ""; enabled = "" }
      /^[ \t]*$/ { flush(); next }
      /^#/ { next }
      tolower($1) == "types:" { $1 = ""; types = $0 }
      tolower($1) == "uris:" { $1 = ""; uris = $0 }
      tolower($1) == "suites:" { $1 = ""; suites = $0 }
      tolower($1) == "enabled:" { enabled = tolower($2) }
      END { flush() }' "$f"
  done
  return 0
}
MIRROR=${SCL_DEBIAN_MIRROR:-}
[ -n "$MIRROR" ] || MIRROR=$(mirror_of "$SUITE" | head -n1 || true)
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SECURITY=$(mirror_of "$SUITE-security" | head -n1 || true)
SECURITY=${SECURITY:-http://deb.debian.org/debian-security}

mkdir -p "$CACHE"
tarball="$CACHE/debian-12-$stamp.tar"
if [ ! -s "$tarball" ]; then
  rootfs="$CACHE/rootfs"
  rm -rf "$rootfs" "$CACHE"/debian-12-*.tar
  log "debootstrap $SUITE (minbase) from $MIRROR"
  debootstrap --variant=minbase "$SUITE" "$rootfs" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 ||
    { tail -n 30 "$CACHE/debootstrap.log" >&2; exit 1; }

  # apt sources as the official image has them (deb822), from this mirror.
  rm -f "$rootfs/etc/apt/sources.list"
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF

  # The machine's CA bundle (see the top of this file).
  mkdir -p "$rootfs/etc/ssl/certs" "$rootfs/usr/local/share/ca-certificates"
  cp "$HOST_CA" "$rootfs/etc/ssl/certs/ca-certificates.crt"
  cp "$HOST_CA" "$rootfs/usr/local/share/ca-certificates/host-ca-bundle.crt"

  # What the official image leaves out: package caches and lists, logs, the
  # host's resolver and name (the engine mounts its own).
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
    "$rootfs"/var/log/* "$rootfs"/tmp/* "$rootfs"/debootstrap
  : >"$rootfs/etc/resolv.conf"
  echo localhost >"$rootfs/etc/hostname"

  tar -C "$rootfs" --numeric-owner --xattrs -cf "$tarball.part" .
  mv "$tarball.part" "$tarball"
  rm -rf "$rootfs"
fi

log "podman import $IMAGE"
podman import --quiet \
  --change 'CMD ["bash"]' \
  --change "LABEL $LABEL=$stamp" \
  --message "scripts/podman-setup.sh: debootstrap $SUITE minbase from $MIRROR" \
  "$tarball" "$IMAGE" >/dev/null
# The image this one replaces, unless an image or container still uses it.
if [ -n "${old_id:-}" ]; then podman rmi "$old_id" >/dev/null 2>&1 || true; fi
log "$IMAGE is ready ($((SECONDS - start)) s)"
