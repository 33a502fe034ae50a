#!/usr/bin/env bash
# Provisions what the test suite needs on a Debian 12 machine, idempotently:
# a real Docker Engine, the offline test images, and a loopback registry's binary.
# Safe to run again on a machine that already has any of these.
set -euo pipefail

log() { printf '[provision] %s\n' "$*"; }
CACHE_DIR=${SBX_CACHE_DIR:-/var/cache/sbx}
mkdir -p "$CACHE_DIR"

need_packages=()
command -v dockerd >/dev/null 2>&1 || need_packages+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need_packages+=(debootstrap)
command -v docker-registry >/dev/null 2>&1 || need_packages+=(docker-registry)
command -v iptables >/dev/null 2>&1 || need_packages+=(iptables)
command -v runsc >/dev/null 2>&1 || need_packages+=(runsc)
command -v git >/dev/null 2>&1 || need_packages+=(git)
# Host python3 with matplotlib: core's sandbox-agent test proves figures arrive as image/png (adr/0016).
/usr/bin/python3 -c "import matplotlib" >/dev/null 2>&1 || need_packages+=(python3-matplotlib)
command -v tmux >/dev/null 2>&1 || need_packages+=(tmux)  # the sbx CLI's pseudo-terminal test
# pip as a wheel (Debian python3-pip-whl): the Docker allowlist and wheelhouse tests upload it into a sandbox and run
# it from the wheel, so the test image needs no pip (adr/0021).
ls /usr/share/python-wheels/pip-*.whl >/dev/null 2>&1 || need_packages+=(python3-pip-whl)
if [ ${#need_packages[@]} -gt 0 ]; then
  log "installing ${need_packages[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_packages[@]}" >/dev/null
fi

# gVisor as an optional runtime, told to create no network of its own (see shared/reference/docker-engine-in-ci.md).
if command -v runsc >/dev/null 2>&1 && ! grep -q runsc /etc/docker/daemon.json 2>/dev/null; then
  mkdir -p /etc/docker
  printf '{ "runtimes": { "runsc": { "path": "%s", "runtimeArgs": ["--network=none"] } } }\n' "$(command -v runsc)" > /etc/docker/daemon.json
  if pgrep -x dockerd >/dev/null 2>&1; then log "reloading dockerd for the runsc runtime"; kill -HUP "$(pgrep -x dockerd)"; sleep 1; fi
fi

if ! docker info >/dev/null 2>&1; then
  log "starting dockerd"
  nohup dockerd > /var/log/dockerd.log 2>&1 &
  for _ in $(seq 1 120); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
  docker info >/dev/null 2>&1 || { log "dockerd did not start"; tail -50 /var/log/dockerd.log; exit 1; }
fi
log "engine $(docker version --format '{{.Server.Version}}')"

# The main offline test image: Debian minbase with bash and the full Python 3 standard library.
if ! docker image inspect sbx-test/python:3.11 >/dev/null 2>&1; then
  ROOTFS_TAR="$CACHE_DIR/python-3.11-rootfs.tar"
  if [ ! -s "$ROOTFS_TAR" ]; then
    MIRROR=$(awk '/^URIs:/ && /debian$/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    if [ -z "$MIRROR" ]; then MIRROR=$(awk '/^deb / && $3=="bookworm" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true); fi
    log "debootstrap from the configured mirror"
    ROOTFS=$(mktemp -d)
    debootstrap --variant=minbase --include=python3,procps bookworm "$ROOTFS" "$MIRROR" >/dev/null
    rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
    tar -C "$ROOTFS" -cf "$ROOTFS_TAR.partial" .
    mv "$ROOTFS_TAR.partial" "$ROOTFS_TAR"
    rm -rf "$ROOTFS"
  fi
  log "importing sbx-test/python:3.11"
  docker import -c 'CMD ["/bin/bash"]' -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' "$ROOTFS_TAR" sbx-test/python:3.11 >/dev/null
fi

# A second, deliberately awkward image: root user, an ENTRYPOINT that is not a shell, another working directory.
# Adapters must work with images they did not build; this proves they override what they need to.
if ! docker image inspect sbx-test/python-entrypoint:3.11 >/dev/null 2>&1; then
  log "building sbx-test/python-entrypoint:3.11"
  BUILD_DIR=$(mktemp -d)
  printf 'FROM sbx-test/python:3.11\nWORKDIR /srv/app\nENV SBX_IMAGE_FLAVOUR=entrypoint\nENTRYPOINT ["python3", "-c", "import sys; sys.exit(3)"]\n' > "$BUILD_DIR/Dockerfile"
  docker build -q -t sbx-test/python-entrypoint:3.11 "$BUILD_DIR" >/dev/null
  rm -rf "$BUILD_DIR"
fi
log "images ready"
