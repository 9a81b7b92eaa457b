#!/usr/bin/env bash
# The Knative platform skaffold.yaml installs, assembled offline from the Go modules of the pinned
# release (tests/env/knative-version; Knative 1.N is module version v0.(N+27)) into .knative-platform/
# (untracked): the module zips carry the manifests the release files are made from. One file per
# release file, each the module's directory concatenated in path order as the release build does:
#   serving-core.yaml      knative.dev/serving  config/core/            (its CRDs included)
#   eventing-core.yaml     knative.dev/eventing config/core/            (its CRDs included)
#   in-memory-channel.yaml knative.dev/eventing config/channels/in-memory-channel/
#   mt-channel-broker.yaml knative.dev/eventing config/brokers/mt-channel-broker/
#   servicemonitors.yaml   the Prometheus Operator's ServiceMonitor CRD (PROMETHEUS_OPERATOR_VERSION)
# Knative's `ko://<import path>` image references become the release's published images
# (<KNATIVE_IMAGE_REPO>/<import path>:v<version>), as the release build resolves them.
# Prints the directory. A second run with the same versions returns at once; a failure names the step.
set -euo pipefail
source "$(dirname "$0")/go-build-lib.sh"

HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$(cd "$HERE/../.." && pwd)/.knative-platform"
KNATIVE_VERSION="${KNATIVE_VERSION:-$(cat "$HERE/knative-version")}"
PROMETHEUS_OPERATOR_VERSION="${PROMETHEUS_OPERATOR_VERSION:-0.81.0}"
KNATIVE_IMAGE_REPO="${KNATIVE_IMAGE_REPO:-gcr.io/knative-releases}"

[[ "$KNATIVE_VERSION" =~ ^1\.([0-9]+)\.([0-9]+)$ ]] || fail "read tests/env/knative-version" "'$KNATIVE_VERSION' is not a version like 1.16.0"
MODULE_VERSION="v0.$((BASH_REMATCH[1] + 27)).${BASH_REMATCH[2]}"
STAMP="knative $KNATIVE_VERSION prometheus-operator $PROMETHEUS_OPERATOR_VERSION images $KNATIVE_IMAGE_REPO"

if [[ -f "$OUT/VERSION" && "$(cat "$OUT/VERSION")" == "$STAMP" ]]; then
  echo "$OUT"
  exit 0
fi
command -v go >/dev/null 2>&1 || fail "find Go toolchain" "no 'go' on PATH to download the Knative modules"

# module@version -> its directory in the Go module cache (downloaded through the Go module proxy)
module_dir() {
  local dir
  dir="$(cd /tmp && GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json "$1" 2>/dev/null | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$dir" && -d "$dir" ]] || fail "go mod download $1" "is the Go module proxy reachable ($(go env GOPROXY)), and does it serve that version?"
  echo "$dir"
}
# <out file> <dir>: every YAML file under dir, in path order, one document stream, images resolved
assemble() {
  local files
  mapfile -t files < <(find "$2" -name '*.yaml' | LC_ALL=C sort)
  [[ ${#files[@]} -gt 0 ]] || fail "assemble $1" "no YAML under $2"
  for f in "${files[@]}"; do printf -- '---\n'; cat "$f"; printf '\n'; done \
    | sed "s|ko://\(knative\.dev/[A-Za-z0-9_./-]*\)|$KNATIVE_IMAGE_REPO/\1:v$KNATIVE_VERSION|g" > "$TMP/$1"
  ! grep -q 'ko://' "$TMP/$1" || fail "resolve images of $1" "an unresolved ko:// reference is left"
}

SERVING="$(module_dir "knative.dev/serving@$MODULE_VERSION")"
EVENTING="$(module_dir "knative.dev/eventing@$MODULE_VERSION")"
PROM="$(module_dir "github.com/prometheus-operator/prometheus-operator@v$PROMETHEUS_OPERATOR_VERSION")"
TMP="$(mktemp -d "$OUT.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
assemble serving-core.yaml "$SERVING/config/core"
assemble eventing-core.yaml "$EVENTING/config/core"
assemble in-memory-channel.yaml "$EVENTING/config/channels/in-memory-channel"
assemble mt-channel-broker.yaml "$EVENTING/config/brokers/mt-channel-broker"
cp "$PROM/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" "$TMP/servicemonitors.yaml" \
  || fail "copy the ServiceMonitor CRD" "not in $PROM/example/prometheus-operator-crd"
chmod -R u+w "$TMP"
printf '%s\n' "$STAMP" > "$TMP/VERSION"
rm -rf "$OUT" && mv "$TMP" "$OUT"
trap - EXIT
echo "$OUT"
