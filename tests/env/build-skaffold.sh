#!/usr/bin/env bash
# Builds skaffold v2 at one pinned version from the Go module proxy into
# ~/.cache/virt-testenv/skaffold-<version>/skaffold (same VIRT_TESTENV_CACHE override as the other
# binaries). Prints that directory. Idempotent: with the binary present it returns at once.
#
# Skaffold's go.mod carries `replace` lines, so `go install .../cmd/skaffold@v` refuses it.
# tests/env/skaffold/ is a small module of ours that requires it (a `tool` line) and copies its
# replace lines; its go.sum pins every dependency. Changing SKAFFOLD_VERSION means regenerating that
# module (tests/env/README.md).
set -euo pipefail

SKAFFOLD_VERSION="${SKAFFOLD_VERSION:-2.16.1}"
HERE="$(cd "$(dirname "$0")" && pwd)"
MODULE="$HERE/skaffold"
CACHE_ROOT="${VIRT_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/virt-testenv}"
OUT="$CACHE_ROOT/skaffold-$SKAFFOLD_VERSION"
PKG=github.com/GoogleContainerTools/skaffold/v2

step() { printf '[build-skaffold] %s\n' "$*" >&2; }
fail() { printf '[build-skaffold] FAILED at step "%s": %s\n' "$1" "$2" >&2; exit 1; }

if [[ -x "$OUT/skaffold" ]]; then
  echo "$OUT"
  exit 0
fi
how="build it with 'bash tests/env/build-skaffold.sh' on a machine that reaches the Go module proxy, then copy $OUT/skaffold"

grep -Eq "^\s*(require )?$PKG v$SKAFFOLD_VERSION( |$)" "$MODULE/go.mod" \
  || fail "check module version" "$MODULE/go.mod does not require $PKG v$SKAFFOLD_VERSION; regenerate it (tests/env/README.md)"
command -v go >/dev/null 2>&1 || fail "find Go toolchain" "missing: $OUT/skaffold; no 'go' on PATH to build it (Go >= 1.26); $how"
GO_MINOR=$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
[[ -n "$GO_MINOR" && "$GO_MINOR" -ge 26 ]] || fail "check Go version" "Go >= 1.26 needed, found $(go env GOVERSION)"

export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly
cd "$MODULE"
# Offline with the modules not yet downloaded: say which binary is missing and how to get it, and stop.
if ! go mod download "$PKG" >/dev/null 2>&1; then
  fail "download $PKG@v$SKAFFOLD_VERSION" "missing: $OUT/skaffold; the Go module proxy is not reachable ($(go env GOPROXY)); $how"
fi

step "compiling skaffold v$SKAFFOLD_VERSION (cold, empty Go build cache: minutes on 2 cores; cached: seconds)"
start=$(date +%s)
mkdir -p "$OUT" && rm -rf "$OUT/.tmp" && mkdir -p "$OUT/.tmp"
# The build tags and version stamp of skaffold's own release Makefile.
go build -trimpath -tags "timetzdata osusergo netgo release" \
  -ldflags "-s -w -X $PKG/pkg/skaffold/version.version=v$SKAFFOLD_VERSION -X $PKG/pkg/skaffold/version.buildDate=2026-01-01T00:00:00Z" \
  -o "$OUT/.tmp/skaffold" "$PKG/cmd/skaffold" >&2 \
  || fail "go build skaffold" "compile failed (output above); missing: $OUT/skaffold"
mv "$OUT/.tmp/skaffold" "$OUT/skaffold"
rmdir "$OUT/.tmp"
step "done in $(( $(date +%s) - start ))s: $OUT"
echo "$OUT"
