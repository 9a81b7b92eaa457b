#!/usr/bin/env bash
# Dev-loop TLS for the functions the kube-apiserver calls (skaffold.yaml runs this; production gets
# its certificates from the certificate issuer, see knative/README.md).
#   dev-certs.sh secrets   create namespace d8-virtualization and the TLS Secrets admission-tls and
#                          subresources-tls, signed by one dev CA (kept in Secret virtualization-dev-ca);
#                          existing Secrets are kept, so a second run changes nothing
#   dev-certs.sh cabundle  write the dev CA into the webhook configurations (and the APIService, once
#                          the subresources unit adds it)
set -euo pipefail
NS=d8-virtualization
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# skaffold passes the cluster it deploys to; by hand, the current context is used.
kubectl() { command kubectl ${SKAFFOLD_KUBE_CONTEXT:+--context="$SKAFFOLD_KUBE_CONTEXT"} "$@"; }

have_secret() { kubectl -n "$NS" get secret "$1" >/dev/null 2>&1; }

ensure_ca() {
  if have_secret virtualization-dev-ca; then
    kubectl -n "$NS" get secret virtualization-dev-ca -o jsonpath='{.data.tls\.crt}' | base64 -d >"$work/ca.crt"
    kubectl -n "$NS" get secret virtualization-dev-ca -o jsonpath='{.data.tls\.key}' | base64 -d >"$work/ca.key"
    return
  fi
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 365 \
    -subj "/CN=virtualization-dev-ca" -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
  kubectl -n "$NS" create secret tls virtualization-dev-ca --cert="$work/ca.crt" --key="$work/ca.key"
}

# issue <secret> <service>: a serving certificate for <service>.d8-virtualization.svc
issue() {
  local secret=$1 svc=$2
  have_secret "$secret" && return
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$svc.$NS.svc" \
    -keyout "$work/$svc.key" -out "$work/$svc.csr" 2>/dev/null
  printf 'subjectAltName=DNS:%s,DNS:%s.%s,DNS:%s.%s.svc,DNS:%s.%s.svc.cluster.local\n' \
    "$svc" "$svc" "$NS" "$svc" "$NS" "$svc" "$NS" >"$work/$svc.ext"
  openssl x509 -req -in "$work/$svc.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial \
    -days 365 -extfile "$work/$svc.ext" -out "$work/$svc.crt" 2>/dev/null
  kubectl -n "$NS" create secret tls "$secret" --cert="$work/$svc.crt" --key="$work/$svc.key"
}

patch_ca_bundle() {
  local kind=$1 name=$2 bundle count i patch
  kubectl get "$kind" "$name" >/dev/null 2>&1 || return 0
  bundle=$(kubectl -n "$NS" get secret virtualization-dev-ca -o jsonpath='{.data.tls\.crt}')
  if [ "$kind" = apiservice ]; then
    kubectl patch apiservice "$name" --type=merge -p "{\"spec\":{\"caBundle\":\"$bundle\"}}"
    return
  fi
  count=$(kubectl get "$kind" "$name" -o jsonpath='{range .webhooks[*]}x{end}' | wc -c)
  patch="["
  for ((i = 0; i < count; i++)); do
    patch+="{\"op\":\"add\",\"path\":\"/webhooks/$i/clientConfig/caBundle\",\"value\":\"$bundle\"},"
  done
  kubectl patch "$kind" "$name" --type=json -p "${patch%,}]"
}

case "${1:-}" in
  secrets)
    kubectl get namespace "$NS" >/dev/null 2>&1 || kubectl create namespace "$NS"
    ensure_ca
    issue admission-tls admission-webhook
    issue subresources-tls subresources-api
    ;;
  cabundle)
    patch_ca_bundle validatingwebhookconfiguration virtualization-admission
    patch_ca_bundle mutatingwebhookconfiguration virtualization-admission
    patch_ca_bundle apiservice v1alpha2.subresources.virtualization.deckhouse.io
    ;;
  *)
    echo "usage: $0 secrets|cabundle" >&2
    exit 2
    ;;
esac
