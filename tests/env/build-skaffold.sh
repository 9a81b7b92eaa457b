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
source "$(dirname "$0")/go-build-lib.sh"

SKAFFOLD_VERSION="${SKAFFOLD_VERSION:-2.16.1}"
MODULE="$(cd "$(dirname "$0")" && pwd)/skaffold"
OUT="$CACHE_ROOT/skaffold-$SKAFFOLD_VERSION"
PKG=github.com/GoogleContainerTools/skaffold/v2

if [[ -x "$OUT/skaffold" ]]; then
  echo "$OUT"
  exit 0
fi
HOW="$(go_how "$OUT/skaffold")"

grep -Eq "^\s*(require )?$PKG v$SKAFFOLD_VERSION( |$)" "$MODULE/go.mod" \
  || fail "check module version" "$MODULE/go.mod does not require $PKG v$SKAFFOLD_VERSION; regenerate it (tests/env/README.md)"
go_toolchain "$OUT/skaffold" "$HOW"
export GOFLAGS=-mod=readonly
cd "$MODULE"
go_download_or_stop "download $PKG@v$SKAFFOLD_VERSION" "$PKG" "$OUT/skaffold" "$HOW"

step "compiling skaffold v$SKAFFOLD_VERSION (cold, empty Go build cache: minutes on 2 cores; cached: seconds)"
# The build tags and version stamp of skaffold's own release Makefile.
go_build_into "$OUT" skaffold -- -tags "timetzdata osusergo netgo release" \
  -ldflags "$GO_LDFLAGS -X $PKG/pkg/skaffold/version.version=v$SKAFFOLD_VERSION -X $PKG/pkg/skaffold/version.buildDate=2026-01-01T00:00:00Z" \
  "$PKG/cmd/skaffold"
echo "$OUT"
