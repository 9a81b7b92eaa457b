#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and etcd from the Go module proxy, pinned, into a cache outside the
# repository keyed by version, and kwok (simulated nodes and pods for `npm start`, docs/adr/0007) into
# its own versioned subdirectory with its default stages. Idempotent: a second run with the binaries
# present returns at once; each part is checked on its own, so adding kwok never rebuilds the others.
# Recipe and its reasons: ../shared/facts/testenv.md sections 1 and 2 (throwaway modules with the
# staging replaces for kube-apiserver; etcd's server module as a plain dependency).
set -euo pipefail
source "$(dirname "$0")/go-build-lib.sh"

KUBE_VERSION="${KUBE_VERSION:-1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-3.7.1}"
KWOK_VERSION="${KWOK_VERSION:-0.8.0}"
OUT="$CACHE_ROOT/k8s-$KUBE_VERSION-etcd-$ETCD_VERSION"
KWOK_DIR="$OUT/kwok-$KWOK_VERSION"

KUBE_BINS=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
missing_kube() { local b; for b in "${KUBE_BINS[@]}"; do [[ -x "$OUT/$b" ]] || echo "$b"; done; }
kwok_present() { [[ -x "$KWOK_DIR/kwok" && -s "$KWOK_DIR/stages.yaml" ]]; }
if [[ -z "$(missing_kube)" && -x "$OUT/etcd" ]] && kwok_present; then
  echo "$OUT"
  exit 0
fi

go_toolchain "the test binaries in $OUT" "install Go >= 1.26 (https://go.dev/doc/install)"

mkdir -p "$OUT"
WORK="$CACHE_ROOT/work"
mkdir -p "$WORK"
export GOFLAGS=-mod=mod
start=$(date +%s)

# ---- kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (one module, one build) ----
SV="0.${KUBE_VERSION#1.}"
KMOD="$WORK/kube-$KUBE_VERSION"
MISSING_KUBE=$(missing_kube | tr '\n' ' ')
if [[ -n "$MISSING_KUBE" ]]; then
  step "kube-apiserver $KUBE_VERSION: preparing module in $KMOD"
  rm -rf "$KMOD" && mkdir -p "$KMOD" && cd "$KMOD"
  go mod init example.invalid/kas >/dev/null 2>&1 || fail "go mod init (kube)" "see $KMOD"
  MODFILE=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p') \
    || fail "download k8s.io/kubernetes@v$KUBE_VERSION go.mod" "is the Go module proxy reachable?"
  [[ -f "$MODFILE" ]] || fail "locate k8s.io/kubernetes go.mod" "got '$MODFILE'"
  n=0
  for m in $(sed -n 's|^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/src/.*|\1|p' "$MODFILE"); do
    go mod edit "-replace=$m=$m@v$SV"; n=$((n+1))
  done
  [[ $n -gt 20 ]] || fail "read staging replaces" "only $n found in $MODFILE"
  GODEBUG_LINE=$(sed -n 's/^godebug //p' "$MODFILE" | head -n1)
  [[ -z "$GODEBUG_LINE" ]] || go mod edit "-godebug=$GODEBUG_LINE"
  step "kube-apiserver: resolving dependencies ($n staging modules at v$SV)"
  PKGS=(); for b in $MISSING_KUBE; do PKGS+=("k8s.io/kubernetes/cmd/$b"); done
  go get "${PKGS[@]/%/@v$KUBE_VERSION}" >&2 \
    || fail "go get k8s.io/kubernetes@v$KUBE_VERSION" "dependency resolution failed (output above)"
  MAJOR=${KUBE_VERSION%%.*}; REST=${KUBE_VERSION#*.}; MINOR=${REST%%.*}
  LD="$GO_LDFLAGS"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    LD="$LD -X $pkg.gitVersion=v$KUBE_VERSION -X $pkg.gitMajor=$MAJOR -X $pkg.gitMinor=$MINOR -X $pkg.gitTreeState=clean -X $pkg.buildDate=2026-01-01T00:00:00Z"
  done
  step "compiling $MISSING_KUBE(cold: about 10 minutes on 2 cores)"
  rm -rf "$OUT/.tmp" && mkdir -p "$OUT/.tmp"
  go build -trimpath -tags selinux,notest,grpcnotrace -ldflags "$LD" -o "$OUT/.tmp/" "${PKGS[@]}" >&2 \
    || fail "go build $MISSING_KUBE" "compile failed (output above)"
  for b in $MISSING_KUBE; do mv "$OUT/.tmp/$b" "$OUT/$b"; done
  rmdir "$OUT/.tmp"
fi

# ---- etcd ----
if [[ ! -x "$OUT/etcd" ]]; then
  EMOD="$WORK/etcd-$ETCD_VERSION"
  step "etcd $ETCD_VERSION: preparing module in $EMOD"
  rm -rf "$EMOD" && mkdir -p "$EMOD" && cd "$EMOD"
  go mod init example.invalid/etcdb >/dev/null 2>&1 || fail "go mod init (etcd)" "see $EMOD"
  go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >&2 || fail "go get go.etcd.io/etcd/server/v3@v$ETCD_VERSION" "output above"
  step "etcd: compiling"
  go build -trimpath -ldflags "$GO_LDFLAGS" -o "$OUT/etcd.tmp" go.etcd.io/etcd/server/v3 >&2 || fail "go build etcd" "output above"
  mv "$OUT/etcd.tmp" "$OUT/etcd"
fi

# ---- kwok (its go.mod has no replace directives: a plain `go install pkg@version`) ----
if ! kwok_present; then
  step "kwok $KWOK_VERSION: compiling (cold, empty Go caches: about 8 minutes on 2 busy cores)"
  mkdir -p "$KWOK_DIR" && rm -rf "$KWOK_DIR/.tmp"
  GOFLAGS= GOBIN="$KWOK_DIR/.tmp" go install -trimpath -ldflags "$GO_LDFLAGS" "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION" >&2 \
    || fail "go install sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION" "output above"
  # kwok does nothing without stages: the release's default "fast" node and pod stages plus the node
  # heartbeat through Leases, exactly as the module at this version ships them (kwokctl does the same).
  KWOK_SRC=$(GOFLAGS= go mod download -json "sigs.k8s.io/kwok@v$KWOK_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -d "$KWOK_SRC/kustomize/stage" ]] || fail "locate kwok stages" "got '$KWOK_SRC'"
  : >"$KWOK_DIR/stages.tmp"
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
           pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    [[ -f "$KWOK_SRC/kustomize/stage/$f" ]] || fail "read kwok stage $f" "missing in $KWOK_SRC"
    { echo '---'; cat "$KWOK_SRC/kustomize/stage/$f"; } >>"$KWOK_DIR/stages.tmp"
  done
  mv "$KWOK_DIR/.tmp/kwok" "$KWOK_DIR/kwok" && rmdir "$KWOK_DIR/.tmp"
  mv "$KWOK_DIR/stages.tmp" "$KWOK_DIR/stages.yaml"
fi

step "done in $(( $(date +%s) - start ))s: $OUT"
echo "$OUT"
