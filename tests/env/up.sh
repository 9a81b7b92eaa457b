#!/usr/bin/env bash
# `npm start`: the main job on a fresh machine. Installs what is missing, then runs the local platform:
# for now a real etcd + kube-apiserver with the module's CRDs installed, until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tests/env/install-deps.sh
exec npx tsx tests/env/cluster-cli.ts
