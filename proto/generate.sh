#!/usr/bin/env bash
# Generates into proto/gen/ (or into $1) the TypeScript types of the .proto files, with the same
# loader options the daemon uses at run time (daemons/dra/plugin/protos.ts), and descriptor.ts, the
# services as a protobufjs JSON descriptor the daemon loads them from. proto/gen/ is generated:
# never edit it by hand; the unit test daemons/dra/plugin/protos.test.ts fails when it drifted.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/gen}"
files=(kubelet/dra/v1/api.proto kubelet/dra/v1beta1/api.proto kubelet/pluginregistration/v1/api.proto)
rm -rf "$out"
mkdir -p "$out"
cd "$here"
"$here/../node_modules/.bin/proto-loader-gen-types" --keepCase --longs=String --enums=String --defaults --oneofs \
  --grpcLib=@grpc/grpc-js -I "$here" -O "$out" \
  "${files[@]}" >/dev/null
# ESM (NodeNext) wants explicit extensions on relative imports.
# The source path without the checkout's location, so that every checkout generates the same text.
find "$out" -name '*.ts' -print0 | xargs -0 sed -i -E -e "s#(from '\\.{1,2}/[^']+)';#\\1.js';#" -e "s#^// Original file: .*/proto/#// Original file: proto/#"
node "$here/descriptor.mjs" "$here" "$out" "${files[@]}"
