#!/usr/bin/env bash
# `npm test`: installs what is missing, type-checks, lints, runs every jest test against a real
# control plane, and ends with one line "N passed, N failed" read from jest's JSON results.
set -uo pipefail
cd "$(dirname "$0")/.."
bash tests/env/install-deps.sh || exit 1
echo "[test] typecheck" >&2
npx tsc --noEmit -p tsconfig.json || { echo "typecheck failed"; exit 1; }
echo "[test] lint" >&2
npx eslint . || { echo "lint failed"; exit 1; }
rm -f .jest-results.json
npm run --silent jest -- --json --outputFile=.jest-results.json "$@"
status=$?
node tests/summary.js .jest-results.json || status=1
exit $status
