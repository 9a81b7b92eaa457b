#!/usr/bin/env bash
# Knative Serving's and Eventing's own CRDs, taken from their Go modules (the module zips carry
# config/core/...) through the Go module proxy, pinned, into the test cache keyed by version; prints the
# directory, which holds for each of serving and eventing: <part>/ (its CRDs, one file each, as
# released), <part>-config/ (its namespace, config maps, webhook configurations and webhook secret) and
# <part>-webhook (its admission webhook, built from the same module, run out-of-cluster by the tests).
# A second run returns at once; a failure names the step.
# The Knative release is named in one place, tests/env/knative-version (KNATIVE_VERSION overrides it), which
# knative-platform.sh (skaffold.yaml's local copies) reads too. Knative 1.N is module version v0.(N+27).
# (1.16: the newest release whose Eventing module the Go module proxy serves to these machines.)
set -euo pipefail

KNATIVE_VERSION="${KNATIVE_VERSION:-$(cat "$(dirname "$0")/knative-version")}"
CACHE_ROOT="${VIRT_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/virt-testenv}"
OUT="$CACHE_ROOT/knative-$KNATIVE_VERSION"

fail() { printf '[knative-modules] FAILED at step "%s": %s\n' "$1" "$2" >&2; exit 1; }

[[ "$KNATIVE_VERSION" =~ ^1\.([0-9]+)\.([0-9]+)$ ]] || fail "read KNATIVE_VERSION" "'$KNATIVE_VERSION' is not a version like 1.16.0"
MODULE_VERSION="v0.$((BASH_REMATCH[1] + 27)).${BASH_REMATCH[2]}"

if [[ -d "$OUT/serving" && -d "$OUT/eventing" && -x "$OUT/serving-webhook" && -x "$OUT/eventing-webhook" ]]; then
  echo "$OUT"
  exit 0
fi
command -v go >/dev/null 2>&1 || fail "find Go toolchain" "no 'go' on PATH"
mkdir -p "$CACHE_ROOT"
TMP="$(mktemp -d "$CACHE_ROOT/.knative-XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
# module path -> the directory of its CRDs inside the module
declare -A CRDS=( [serving]=config/core/300-resources [eventing]=config/core/resources ) MODDIR=()
for part in serving eventing; do
  dir="$(cd "$TMP" && GOFLAGS=-mod=mod go mod download -json "knative.dev/$part@$MODULE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')" \
    || fail "go mod download knative.dev/$part@$MODULE_VERSION" "is the Go module proxy reachable, and does it serve that version?"
  [[ -d "$dir/${CRDS[$part]}" ]] || fail "find the CRDs of knative.dev/$part@$MODULE_VERSION" "no ${CRDS[$part]} in $dir"
  mkdir -p "$TMP/out/$part"
  for f in "$dir/${CRDS[$part]}"/*.yaml; do
    grep -q '^kind: CustomResourceDefinition' "$f" && cp "$f" "$TMP/out/$part/"
  done
  ls "$TMP/out/$part"/*.yaml >/dev/null 2>&1 || fail "copy the CRDs of knative.dev/$part" "none in $dir/${CRDS[$part]}"
  MODDIR[$part]="$dir"
done
WORK="$CACHE_ROOT/work/knative-$KNATIVE_VERSION"
mkdir -p "$WORK"
[[ -f "$WORK/go.mod" ]] || printf 'module virt-testenv/knative\n\ngo 1.22\n' > "$WORK/go.mod"
for part in serving eventing; do
  mkdir -p "$TMP/out/$part-config"
  cp "${MODDIR[$part]}/config/core/100-namespace.yaml" "${MODDIR[$part]}"/config/core/configmaps/*.yaml \
    "${MODDIR[$part]}"/config/core/webhooks/*.yaml "$TMP/out/$part-config/" \
    || fail "copy the config of knative.dev/$part" "see ${MODDIR[$part]}/config/core"
  printf '[knative-modules] building knative.dev/%s/cmd/webhook@%s\n' "$part" "$MODULE_VERSION" >&2
  (cd "$WORK" && export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local \
    && go get "knative.dev/$part@$MODULE_VERSION" >&2 \
    && go build -trimpath -ldflags "-s -w" -o "$TMP/out/$part-webhook" "knative.dev/$part/cmd/webhook" >&2) \
    || fail "go build knative.dev/$part/cmd/webhook@$MODULE_VERSION" "see the Go output above"
done
printf '%s\n' "$KNATIVE_VERSION" > "$TMP/out/VERSION"
rm -rf "$OUT" && mv "$TMP/out" "$OUT"
echo "$OUT"
