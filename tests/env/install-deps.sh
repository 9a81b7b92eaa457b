#!/usr/bin/env bash
# Installs what the tests need on a fresh Debian machine: Debian packages (only those missing),
# npm dependencies (npm ci), the Go-built kube-apiserver, kubectl and etcd, upstream KubeVirt's
# virt-controller and virt-api, Knative's webhooks, skaffold (each cached by version), and the Knative
# platform skaffold.yaml installs (.knative-platform/, from the pinned release's Go modules).
set -euo pipefail
cd "$(dirname "$0")/../.."

# command -> Debian package providing it
# (usbip: the stock USB/IP client the USB/IP tests talk to; qemu-img: disk formats for the importer;
# docker-registry: a real OCI registry standing in for DVCR in tests; tmux: the CLI's terminal tests)
# (docker.io: an isolated dockerd builds and starts every unit's image; debootstrap: their local base images)
# (qemu-system-x86_64: real guests for the node agent's QEMU backend, booting build-guest-image.sh's disk;
# ssh: the system client `d8v ssh` runs, tested against the guest's SSH server)
declare -A DEB=( [openssl]=openssl [ip]=iproute2 [git]=git [usbip]=usbip [qemu-img]=qemu-utils
  [docker-registry]=docker-registry [tmux]=tmux [dockerd]=docker.io [debootstrap]=debootstrap
  [qemu-system-x86_64]=qemu-system-x86 [ssh]=openssh-client )
missing=()
for cmd in "${!DEB[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || [[ -x /usr/sbin/$cmd ]] || missing+=("${DEB[$cmd]}")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "[install-deps] installing Debian packages: ${missing[*]}" >&2
  SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  $SUDO apt-get update -qq >&2 || { echo "[install-deps] FAILED at step 'apt-get update'" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2 \
    || { echo "[install-deps] FAILED at step 'apt-get install ${missing[*]}'" >&2; exit 1; }
fi

command -v npm >/dev/null 2>&1 || { echo "[install-deps] FAILED: a Node.js with npm is required to bootstrap (any version >= 20; the tests run on the one of .node-version)" >&2; exit 1; }
bash tests/env/node-binary.sh >/dev/null
if [[ -L node_modules ]]; then
  # A link to another checkout's packages (a git worktree): npm ci would empty the linked directory,
  # which the other checkout uses. That checkout installs them.
  echo "[install-deps] node_modules is a link to $(readlink node_modules): not reinstalling" >&2
elif [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "[install-deps] npm ci" >&2
  npm ci --no-audit --no-fund >&2 || { echo "[install-deps] FAILED at step 'npm ci'" >&2; exit 1; }
fi

# Network beside CPU: the module graphs of our two pinned Go modules (KubeVirt's 0.5 GB, skaffold's
# 2.1 GB; 16 s and 71 s one after the other when cold, 58 s together) download in the background while
# the Kubernetes binaries compile. Each build script still checks its modules itself and, if they
# could not be fetched, stops naming what is missing.
prefetch=()
if command -v go >/dev/null 2>&1; then
  for m in kubevirt skaffold; do
    (cd "tests/env/$m" && GOFLAGS=-mod=readonly GOTOOLCHAIN=local go mod download >/dev/null 2>&1) &
    prefetch+=($!)
  done
fi
bash tests/env/build-binaries.sh >/dev/null
for pid in "${prefetch[@]}"; do wait "$pid" || true; done
bash tests/env/build-kubevirt.sh >/dev/null
# Knative's CRDs, config and webhooks from its Go modules (tests/integration/knative), before jest runs.
bash tests/env/knative-modules.sh >/dev/null
bash tests/env/build-skaffold.sh >/dev/null
bash tests/env/knative-platform.sh >/dev/null
