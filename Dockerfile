# syntax=docker/dockerfile:1
# One image pattern for every unit: the whole workspace is compiled once (cached across units), the
# runtime stage is distroless Node as a non-root user, and `main.cjs` starts the unit named by UNIT
# (the unit's bundle itself, so that its `runIfMain`/`runDaemonIfMain` sees itself as the entry):
#   docker build --build-arg UNIT=functions/admission -t virtualization-admission .
#   docker build --build-arg UNIT=daemons/controller  -t virtualization-controller .
# Functions start from the bundle of their index.ts, daemons from the bundle of their main.ts. Another
# entry of the same unit runs from the tsc output by overriding the arguments, e.g.
# args: [dist/functions/pre-delete/job.js].
# Units that need root or capabilities (route-forge: NET_ADMIN) get them from their pod spec; units
# that call system tools get them from the unit-tools stage (route-forge: iproute2's `ip`).
# NODE_MAJOR: the major of `.node-version`, the one Node.js version of the repository (a test checks it).
ARG NODE_MAJOR=26

FROM node:${NODE_MAJOR}-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
# The rest of the context (.dockerignore lets in only tsconfigs, shared/, functions/, daemons/, proto/gen/).
COPY . .
# Functions and daemons are also bundled, npm packages inlined, into one code file each (shared/bundle):
# a cold start loads one file instead of resolving and reading hundreds of modules (the function-host
# benchmark), and a long-running daemon keeps a smaller module graph in memory (the api-rewriter
# benchmark: about 12 MB less RSS at idle than the tsc output). Each comes as three files: the start-up
# file `<entry>.cjs`, the code `<entry>.code.cjs` and V8's code cache of it `<entry>.code-cache`.
# The runtime keeps production dependencies only, without what only compilers and editors read
# (type declarations, TypeScript sources, source maps, Markdown): about 47 MB less per image.
RUN npx tsc -p tsconfig.build.json \
 && node dist/shared/bundle/cli.js dist/bundle functions/*/index.ts daemons/*/main.ts \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && find node_modules -type f \( -name '*.ts' -o -name '*.cts' -o -name '*.mts' -o -name '*.map' -o -name '*.md' \) -delete
ARG UNIT
RUN set -eu; \
    test -n "${UNIT:-}" || { echo "build arg UNIT is required (functions/<name> or daemons/<name>)" >&2; exit 1; }; \
    for entry in index main; do \
      if [ -f "dist/bundle/${UNIT}/${entry}.cjs" ]; then \
        mkdir -p /unit; \
        cp "dist/bundle/${UNIT}/${entry}.cjs" /unit/main.cjs; \
        cp "dist/bundle/${UNIT}/${entry}.code.cjs" /unit/main.code.cjs; \
        cp "dist/bundle/${UNIT}/${entry}.code-cache" /unit/main.code-cache; \
        break; \
      fi; \
    done; \
    test -f /unit/main.cjs || { echo "no dist/bundle/${UNIT}/index.cjs or main.cjs: is UNIT right?" >&2; exit 1; }; \
    # Every unit's bundle is built once for all images; an image keeps only its own (/unit, above).
    rm -rf dist/bundle

# System tools a unit calls, with the shared libraries they link, laid out as a root filesystem
# overlay; empty for every unit but route-forge, which gets iproute2's `ip` (docs/adr/0008). The same
# Debian release as the runtime image, whose own libc is kept.
FROM debian:12-slim AS unit-tools
ARG UNIT
RUN set -eu; \
    mkdir -p /unit-root; \
    if [ "${UNIT:-}" = "daemons/route-forge" ]; then \
      apt-get update; \
      apt-get install -y --no-install-recommends iproute2; \
      ip="$(readlink -f "$(command -v ip)")"; \
      mkdir -p /unit-root/usr/bin; \
      cp "$ip" /unit-root/usr/bin/ip; \
      ldd "$ip" | awk '/=> \// {print $3}' | grep -Ev '/(libc\.so|ld-linux)' | while read -r lib; do \
        mkdir -p "/unit-root/usr$(dirname "${lib#/usr}")"; cp -L "$lib" "/unit-root/usr${lib#/usr}"; \
      done; \
      rm -rf /var/lib/apt/lists/*; \
    fi

FROM gcr.io/distroless/nodejs${NODE_MAJOR}-debian12:nonroot
COPY --from=unit-tools /unit-root/ /
WORKDIR /app
# MALLOC_ARENA_MAX: see IMAGE_ENV in shared/bundle/image-env.ts (its test checks this line).
ENV NODE_ENV=production MALLOC_ARENA_MAX=2
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /unit/ ./
# The code cache again, made by this image's node with the V8 flags the unit runs with: V8 uses a
# cache only from the same V8 build and flags. A unit whose workload sets NODE_OPTIONS is built with
# the same value as the build arg NODE_OPTIONS (skaffold.yaml; a test checks they match).
ARG NODE_OPTIONS=""
USER root
RUN ["/nodejs/bin/node", "-e", "process.env.BUNDLE_CODE_CACHE = 'write'; require('/app/main.cjs')"]
USER nonroot
CMD ["main.cjs"]
