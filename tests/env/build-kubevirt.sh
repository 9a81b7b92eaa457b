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

KUBEVIRT_VERSION="${KUBEVIRT_VERSION:-1.6.0}"
HERE="$(cd "$(dirname "$0")" && pwd)"
MODULE="$HERE/kubevirt"
CACHE_ROOT="${VIRT_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/virt-testenv}"
OUT="$CACHE_ROOT/kubevirt-$KUBEVIRT_VERSION"
BINS=(virt-controller virt-api kubevirt-crds)

step() { printf '[build-kubevirt] %s\n' "$*" >&2; }
fail() { printf '[build-kubevirt] FAILED at step "%s": %s\n' "$1" "$2" >&2; exit 1; }
missing() { local b; for b in "${BINS[@]}"; do [[ -x "$OUT/$b" ]] || echo "$b"; done; }

MISSING=$(missing | tr '\n' ' ')
if [[ -z "$MISSING" ]]; then
  echo "$OUT"
  exit 0
fi
how="build it with 'bash tests/env/build-kubevirt.sh' on a machine that reaches the Go module proxy, then copy $OUT/"

grep -q "kubevirt.io/kubevirt v$KUBEVIRT_VERSION\$" "$MODULE/go.mod" \
  || fail "check module version" "$MODULE/go.mod does not require kubevirt.io/kubevirt v$KUBEVIRT_VERSION; regenerate it (tests/env/README.md)"
command -v go >/dev/null 2>&1 || fail "find Go toolchain" "missing: $MISSING; no 'go' on PATH to build them (Go >= 1.26); $how"
GO_MINOR=$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
[[ -n "$GO_MINOR" && "$GO_MINOR" -ge 26 ]] || fail "check Go version" "Go >= 1.26 needed, found $(go env GOVERSION)"

export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly
cd "$MODULE"
# Offline with the modules not yet downloaded: say which binary is missing and how to get it, and stop.
if ! go mod download kubevirt.io/kubevirt >/dev/null 2>&1; then
  fail "download kubevirt.io/kubevirt@v$KUBEVIRT_VERSION" "missing from $OUT: $MISSING; the Go module proxy is not reachable ($(go env GOPROXY)); $how"
fi

PKGS=()
for b in $MISSING; do
  case "$b" in
    kubevirt-crds) PKGS+=("./kubevirt-crds") ;;
    *) PKGS+=("kubevirt.io/kubevirt/cmd/$b") ;;
  esac
done
step "compiling $MISSING(cold, empty Go caches: about 8 minutes on 2 cores; cached: seconds)"
start=$(date +%s)
mkdir -p "$OUT" && rm -rf "$OUT/.tmp" && mkdir -p "$OUT/.tmp"
# The version KubeVirt reports (virt-api's /version, the launcher image tag it would pick).
LD="-s -w"
for pkg in kubevirt.io/client-go/version; do
  LD="$LD -X $pkg.gitVersion=v$KUBEVIRT_VERSION -X $pkg.gitTreeState=clean -X $pkg.buildDate=2026-01-01T00:00:00Z"
done
go build -trimpath -ldflags "$LD" -o "$OUT/.tmp/" "${PKGS[@]}" >&2 \
  || fail "go build $MISSING" "compile failed (output above); missing from $OUT: $MISSING"
for b in $MISSING; do mv "$OUT/.tmp/$b" "$OUT/$b"; done
rmdir "$OUT/.tmp"
step "done in $(( $(date +%s) - start ))s: $OUT"
echo "$OUT"
