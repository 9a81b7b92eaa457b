#!/usr/bin/env bash
# Prints the bin directory of the Node.js every command of this repository runs on (`npm test`,
# `npm start`, `npm run bench`): the official binary of the version in `.node-version` (the one place
# it is named; the Dockerfile's NODE_MAJOR, `engines` and @types/node are checked against it by
# shared/node-version.test.ts), fetched once from the npm registry's `node-linux-<arch>` package with
# npm's own client (which checks the registry's integrity hash) and cached by version beside the
# Kubernetes binaries. The machine's own node only runs npm for this; callers put the printed
# directory first on PATH.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { printf '[node-binary] FAILED at step "%s": %s\n' "$1" "$2" >&2; exit 1; }

VERSION="$(tr -d '[:space:]' < .node-version)"
[[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "read .node-version" "'$VERSION' is not a version like 26.12.1"
case "$(uname -m)" in
  x86_64) ARCH=x64 ;;
  aarch64 | arm64) ARCH=arm64 ;;
  *) fail "pick the binary" "no official Node.js package for $(uname -m)" ;;
esac
CACHE_ROOT="${VIRT_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/virt-testenv}"
DIR="$CACHE_ROOT/node-$VERSION-linux-$ARCH"

if [[ ! -x "$DIR/bin/node" ]]; then
  command -v npm >/dev/null 2>&1 || fail "find npm" "a bootstrap Node.js with npm is needed on PATH to fetch Node.js $VERSION"
  printf '[node-binary] fetching Node.js %s (node-linux-%s) into %s\n' "$VERSION" "$ARCH" "$DIR" >&2
  mkdir -p "$CACHE_ROOT"
  TMP="$(mktemp -d "$CACHE_ROOT/.node-XXXXXX")"
  trap 'rm -rf "$TMP"' EXIT
  (cd "$TMP" && npm pack --silent "node-linux-$ARCH@$VERSION" >/dev/null) \
    || fail "npm pack node-linux-$ARCH@$VERSION" "is the npm registry reachable, and does it serve that version?"
  tar -xzf "$TMP"/node-linux-"$ARCH"-"$VERSION".tgz -C "$TMP" || fail "unpack node-linux-$ARCH@$VERSION" "see $TMP"
  [[ "$("$TMP/package/bin/node" --version)" == "v$VERSION" ]] || fail "check the binary" "$TMP/package/bin/node is not v$VERSION"
  # Rename into place last: a cut download never leaves a half-filled cache entry.
  rm -rf "$DIR" && mv "$TMP/package" "$DIR"
fi
echo "$DIR/bin"
