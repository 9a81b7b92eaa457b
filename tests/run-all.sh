#!/usr/bin/env bash
# `npm test`: installs what is missing, type-checks, lints, checks the formatting, runs every jest test against a real
# control plane, and ends with one line "N passed, N failed" read from jest's JSON results.
set -uo pipefail
cd "$(dirname "$0")/.."
# The Node.js of `.node-version` (fetched once, cached) runs everything below; the machine's own only bootstraps.
NODE_BIN="$(bash tests/env/node-binary.sh)" || exit 1
export PATH="$NODE_BIN:$PATH"
bash tests/env/install-deps.sh || exit 1
echo "[test] typecheck" >&2
npx tsc --noEmit -p tsconfig.json || { echo "typecheck failed"; exit 1; }
echo "[test] lint" >&2
npx eslint . || { echo "lint failed"; exit 1; }
npx prettier --check . >/dev/null || { npx prettier --list-different .; echo "formatting differs in the files above: npm run format"; exit 1; }
rm -f .jest-results.json
npm run --silent jest -- --json --outputFile=.jest-results.json "$@"
status=$?
node tests/summary.js .jest-results.json || status=1
exit $status
