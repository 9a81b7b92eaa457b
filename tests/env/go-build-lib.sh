# Sourced (not run) by the scripts that build Go binaries into the test cache: build-binaries.sh,
# build-kubevirt.sh, build-skaffold.sh, knative-modules.sh. The prelude they share, once:
#   CACHE_ROOT         ~/.cache/virt-testenv (VIRT_TESTENV_CACHE, else XDG_CACHE_HOME, overrides it)
#   step / fail        progress and a failure naming its step, tagged with the script's name
#   go_toolchain       Go >= 1.26 on PATH or stop naming what is missing; exports the build environment
#   go_download_or_stop  a module not in the Go module cache and no proxy reachable: stop, naming
#                      what is missing and how to get it
#   go_build_into      `go build` into <dir>/.tmp, then move each binary into <dir> (never half-written)
#   GO_LDFLAGS         the flags every build shares (-s -w: no symbol table or DWARF; smaller, faster links)
# The caller sets `set -euo pipefail` itself; the tag is the calling script's file name.

GB_NAME="$(basename "$0" .sh)"
CACHE_ROOT="${VIRT_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/virt-testenv}"
GO_LDFLAGS="-s -w"

step() { printf '[%s] %s\n' "$GB_NAME" "$*" >&2; }
fail() { printf '[%s] FAILED at step "%s": %s\n' "$GB_NAME" "$1" "$2" >&2; exit 1; }

# The advice a failure gives for a binary that cannot be built here. $1: what to copy afterwards.
go_how() {
  printf "build it with 'bash tests/env/%s.sh' on a machine that reaches the Go module proxy, then copy %s" "$GB_NAME" "$1"
}

# go_toolchain <missing> <how>: stops unless Go >= 1.26 is on PATH. Builds are static (CGO off), use
# the local toolchain only (no toolchain download) and leave the module files as they are.
go_toolchain() {
  command -v go >/dev/null 2>&1 || fail "find Go toolchain" "missing: $1; no 'go' on PATH to build it (Go >= 1.26); $2"
  local minor
  minor=$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
  [[ -n "$minor" && "$minor" -ge 26 ]] || fail "check Go version" "Go >= 1.26 needed, found $(go env GOVERSION)"
  export CGO_ENABLED=0 GOTOOLCHAIN=local
}

# go_download_or_stop <step> <module> <missing> <how>: in the current module directory, fetches
# <module> (a no-op when the Go module cache has it); offline without it, stops naming what is missing.
go_download_or_stop() {
  go mod download "$2" >/dev/null 2>&1 \
    || fail "$1" "missing: $3; the Go module proxy is not reachable ($(go env GOPROXY)); $4"
}

# go_build_into <dir> <binaries...> -- <go build arguments...>: builds with -trimpath into <dir>/.tmp,
# then moves each binary into <dir> (`built:name` renames one: two packages named `webhook`); a failure
# names the binaries.
go_build_into() {
  local dir="$1" names=() start
  shift
  while [[ $# -gt 0 && "$1" != "--" ]]; do names+=("$1"); shift; done
  shift
  start=$(date +%s)
  mkdir -p "$dir" && rm -rf "$dir/.tmp" && mkdir -p "$dir/.tmp"
  go build -trimpath -o "$dir/.tmp/" "$@" >&2 \
    || fail "go build ${names[*]}" "compile failed (output above); missing from $dir: ${names[*]}"
  local n
  for n in "${names[@]}"; do mv "$dir/.tmp/${n%%:*}" "$dir/${n#*:}"; done
  rmdir "$dir/.tmp"
  step "built ${names[*]} in $(( $(date +%s) - start ))s: $dir"
}
