#!/usr/bin/env bash
# Knative Serving's and Eventing's own CRDs, taken from their Go modules (the module zips carry
# config/core/...) through the Go module proxy, pinned, into the test cache keyed by version; prints the
# directory, which holds for each of serving and eventing: <part>/ (its CRDs, one file each, as
# released), <part>-config/ (its namespace, config maps, webhook configurations and webhook secret) and
# <part>-webhook (its admission webhook, built from the same module, run out-of-cluster by the tests);
# and Serving's queue-proxy (`queue-proxy`, the data-plane sidecar in front of a revision's container,
# which tests/integration/knative/scaled-webhook.test.ts runs in front of our admission function); its
# autoscaler (`autoscaler`, run out-of-cluster by tests/integration/knative/autoscaler.test.ts) with
# the ServerlessService CRD and config-network it needs from knative.dev/networking (`networking/`).
# A second run returns at once; each part is checked on its own; a failure names the step.
# The Knative release is named in one place, tests/env/knative-version (KNATIVE_VERSION overrides it), which
# knative-platform.sh (skaffold.yaml's local copies) reads too. Knative 1.N is module version v0.(N+27).
# (1.16: the newest release whose Eventing module the Go module proxy serves to these machines.)
set -euo pipefail
source "$(dirname "$0")/go-build-lib.sh"

KNATIVE_VERSION="${KNATIVE_VERSION:-$(cat "$(dirname "$0")/knative-version")}"
OUT="$CACHE_ROOT/knative-$KNATIVE_VERSION"

[[ "$KNATIVE_VERSION" =~ ^1\.([0-9]+)\.([0-9]+)$ ]] || fail "read KNATIVE_VERSION" "'$KNATIVE_VERSION' is not a version like 1.16.0"
MODULE_VERSION="v0.$((BASH_REMATCH[1] + 27)).${BASH_REMATCH[2]}"
# part -> the directory of its CRDs inside the module; the binaries each module gives (built:name)
declare -A CRDS=( [serving]=config/core/300-resources [eventing]=config/core/resources )
declare -A BINS=( [serving]="webhook:serving-webhook queue:queue-proxy autoscaler:autoscaler" [eventing]="webhook:eventing-webhook" )
# What Serving's autoscaler needs of the knative.dev/networking module Serving requires: the
# ServerlessService CRD and config-network, in networking/.
NETWORKING_FILES=(serverlessservice.yaml config-network.yaml)

manifests_present() { [[ -d "$OUT/$1" && -d "$OUT/$1-config" ]]; }
missing_bins() { local b; for b in ${BINS[$1]}; do [[ -x "$OUT/${b#*:}" ]] || echo "$b"; done; }
complete=1
for part in serving eventing; do
  manifests_present "$part" && [[ -z "$(missing_bins "$part")" ]] || complete=0
done
[[ -d "$OUT/networking" ]] || complete=0
if [[ $complete -eq 1 ]]; then
  echo "$OUT"
  exit 0
fi
HOW="$(go_how "$OUT/")"
go_toolchain "$OUT" "$HOW"
mkdir -p "$OUT"

# The module's own go.mod has no local replaces: a throwaway module requiring it builds its commands.
WORK="$CACHE_ROOT/work/knative-$KNATIVE_VERSION"
mkdir -p "$WORK"
[[ -f "$WORK/go.mod" ]] || printf 'module virt-testenv/knative\n\ngo 1.22\n' > "$WORK/go.mod"
export GOFLAGS=-mod=mod
cd "$WORK"
for part in serving eventing; do
  MOD="knative.dev/$part@$MODULE_VERSION"
  missing="$(missing_bins "$part" | tr '\n' ' ')"
  manifests_present "$part" && [[ -z "$missing" ]] && continue
  names="$(for b in $missing; do printf '%s ' "${b#*:}"; done)"
  go_download_or_stop "download $MOD" "$MOD" "knative.dev/$part's manifests or binaries (${names% }) in $OUT" "$HOW"
  dir="$(go mod download -json "$MOD" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  if ! manifests_present "$part"; then
    [[ -d "$dir/${CRDS[$part]}" ]] || fail "find the CRDs of $MOD" "no ${CRDS[$part]} in $dir"
    TMP="$(mktemp -d "$OUT/.$part-XXXXXX")"
    mkdir -p "$TMP/$part" "$TMP/$part-config"
    for f in "$dir/${CRDS[$part]}"/*.yaml; do
      grep -q '^kind: CustomResourceDefinition' "$f" && cp "$f" "$TMP/$part/"
    done
    ls "$TMP/$part"/*.yaml >/dev/null 2>&1 || fail "copy the CRDs of $MOD" "none in $dir/${CRDS[$part]}"
    cp "$dir/config/core/100-namespace.yaml" "$dir"/config/core/configmaps/*.yaml "$dir"/config/core/webhooks/*.yaml \
      "$TMP/$part-config/" || fail "copy the config of $MOD" "see $dir/config/core"
    chmod -R u+w "$TMP"
    rm -rf "$OUT/$part" "$OUT/$part-config" && mv "$TMP/$part" "$TMP/$part-config" "$OUT/" && rmdir "$TMP"
  fi
  if [[ -n "$missing" ]]; then
    go get "$MOD" >&2 || fail "go get $MOD" "see the Go output above"
    PKGS=(); for b in $missing; do PKGS+=("knative.dev/$part/cmd/${b%%:*}"); done
    step "compiling ${PKGS[*]} at $MODULE_VERSION"
    # shellcheck disable=SC2086 # the names are words
    go_build_into "$OUT" $missing -- -ldflags "$GO_LDFLAGS" "${PKGS[@]}"
  fi
done
if [[ ! -d "$OUT/networking" ]]; then
  go get "knative.dev/serving@$MODULE_VERSION" >&2 || fail "go get knative.dev/serving@$MODULE_VERSION" "see the Go output above"
  ndir="$(go list -m -json knative.dev/networking | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  TMP="$(mktemp -d "$OUT/.networking-XXXXXX")"
  for f in "${NETWORKING_FILES[@]}"; do cp "$ndir/config/$f" "$TMP/" || fail "copy knative.dev/networking's $f" "no $ndir/config/$f"; done
  chmod -R u+w "$TMP" && mv "$TMP" "$OUT/networking"
fi
printf '%s\n' "$KNATIVE_VERSION" > "$OUT/VERSION"
echo "$OUT"
