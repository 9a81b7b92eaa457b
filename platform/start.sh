#!/usr/bin/env bash
# `npm start`: the main job on a fresh machine. Installs what is missing (Debian packages, npm ci, the
# Go-built Kubernetes binaries and kwok, cached), then runs the local platform (platform/main.ts) in
# this process, so that Ctrl-C reaches it and it stops everything in order. Flags: `npm start -- --help`.
set -euo pipefail
export VIRT_PLATFORM_T0="${VIRT_PLATFORM_T0:-$(date +%s%3N)}"
cd "$(dirname "$0")/.."
# The Node.js of `.node-version` (fetched once, cached) runs the platform; the machine's own only bootstraps.
NODE_BIN="$(bash tests/env/node-binary.sh)"
export PATH="$NODE_BIN:$PATH"
bash tests/env/install-deps.sh
exec node --import tsx platform/main.ts "$@"
