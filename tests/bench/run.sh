#!/usr/bin/env bash
# `npm run bench [-- NAME...]`: runs every tests/bench/*.bench.ts (or those whose file name contains
# one of the NAMEs) with tsx, one after another. Benchmarks are not jest tests and never time out a
# build; each prints its figures as ratios to a baseline measured in the same run (see lib.ts).
set -uo pipefail
cd "$(dirname "$0")/../.."
# Benchmarks run on the Node.js of `.node-version` (fetched once, cached), like the tests and the images.
NODE_BIN="$(bash tests/env/node-binary.sh)" || exit 1
export PATH="$NODE_BIN:$PATH"

shopt -s nullglob
files=()
for f in tests/bench/*.bench.ts; do
  if [[ $# -eq 0 ]]; then files+=("$f"); continue; fi
  for name in "$@"; do [[ "$f" == *"$name"* ]] && { files+=("$f"); break; }; done
done
if [[ ${#files[@]} -eq 0 ]]; then
  echo "[bench] no benchmark matched ${*:-tests/bench/*.bench.ts}" >&2
  exit 1
fi

status=0
for f in "${files[@]}"; do
  echo "[bench] $f" >&2
  npx tsx "$f" || { echo "[bench] FAILED: $f" >&2; status=1; }
done
exit $status
