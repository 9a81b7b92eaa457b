#!/usr/bin/env bash
# Builds upstream KubeVirt's virt-controller and virt-api, and our dumper of KubeVirt's own CRDs and
# RBAC (tests/env/kubevirt/kubevirt-crds), at one pinned version from the Go module proxy, into
# ~/.cache/virt-testenv/kubevirt-<version>/ (beside the Kubernetes binaries, same VIRT_TESTENV_CACHE
# override). Prints that directory. Idempotent: with the three binaries present it returns at once.
#
# KubeVirt's own go.mod replaces its staging modules (kubevirt.io/api, kubevirt.io/client-go) with
# local paths, so `go install kubevirt.io/kubevirt/cmd/...@v` cannot work. tests/env/kubevirt/ is a
# small module of ours that requires kubevirt.io/kubevirt, kubevirt.io/api and kubevirt.io/client-go
# at the same version and carries KubeVirt's non-local `replace` lines; its go.sum pins every
# dependency. Changing KUBEVIRT_VERSION means regenerating that module (see tests/env/README.md).
set -euo pipefail
source "$(dirname "$0")/go-build-lib.sh"

KUBEVIRT_VERSION="${KUBEVIRT_VERSION:-1.6.0}"
MODULE="$(cd "$(dirname "$0")" && pwd)/kubevirt"
OUT="$CACHE_ROOT/kubevirt-$KUBEVIRT_VERSION"
BINS=(virt-controller virt-api kubevirt-crds)

MISSING=()
for b in "${BINS[@]}"; do [[ -x "$OUT/$b" ]] || MISSING+=("$b"); done
if [[ ${#MISSING[@]} -eq 0 ]]; then
  echo "$OUT"
  exit 0
fi
WHAT="${MISSING[*]} in $OUT"
HOW="$(go_how "$OUT/")"

grep -q "kubevirt.io/kubevirt v$KUBEVIRT_VERSION\$" "$MODULE/go.mod" \
  || fail "check module version" "$MODULE/go.mod does not require kubevirt.io/kubevirt v$KUBEVIRT_VERSION; regenerate it (tests/env/README.md)"
go_toolchain "$WHAT" "$HOW"
export GOFLAGS=-mod=readonly
cd "$MODULE"
go_download_or_stop "download kubevirt.io/kubevirt@v$KUBEVIRT_VERSION" kubevirt.io/kubevirt "$WHAT" "$HOW"

PKGS=()
for b in "${MISSING[@]}"; do
  case "$b" in
    kubevirt-crds) PKGS+=("./kubevirt-crds") ;;
    *) PKGS+=("kubevirt.io/kubevirt/cmd/$b") ;;
  esac
done
step "compiling ${MISSING[*]} (cold, empty Go caches: about 8 minutes on 2 cores; cached: seconds)"
# The version KubeVirt reports (virt-api's /version, the launcher image tag it would pick).
V=kubevirt.io/client-go/version
go_build_into "$OUT" "${MISSING[@]}" -- \
  -ldflags "$GO_LDFLAGS -X $V.gitVersion=v$KUBEVIRT_VERSION -X $V.gitTreeState=clean -X $V.buildDate=2026-01-01T00:00:00Z" \
  "${PKGS[@]}"
echo "$OUT"
