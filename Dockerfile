# kube-rebalancer image: the operator (`run`, the default command) and the offline `plan`/`simulate` commands.
#   docker build -t kube-rebalancer:0.1.0 .
#   docker run --rm kube-rebalancer:0.1.0 version
# Three stages: build compiles TypeScript with the dev dependencies, deps installs production dependencies only,
# and the runtime stage gets dist/ and those node_modules, runs as a numeric non-root user and has no npm.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="kube-rebalancer" \
      org.opencontainers.image.description="Kubernetes operator that restores topology spread, affinity and taint compliance with the fewest safe evictions" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
# npm and corepack are not needed to run the operator; removing them shrinks the image and its CVE surface.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack
ENV NODE_ENV=production
WORKDIR /app
# package.json carries "type": "module" (the compiled files are ES modules) and the version `version` prints.
COPY --from=deps /app/package.json ./package.json
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER 65532:65532
# /metrics (HTTPS, authenticated) and the probes (plain HTTP): run's --metrics-addr and --health-addr defaults.
EXPOSE 8443 8081
# A small young generation and memory-first heap growth: the operator allocates little that lives (its cache is
# compact) and much that dies at once (each watch event's JSON), so V8's defaults (16 MiB semi-spaces, an old
# generation allowed to grow far before it is collected) cost resident memory for no speed it needs. Measured with
# bench/controlPlane.ts, which runs the operator with exactly these options (test/integration/operatorProcess.ts).
# `run` sets the same footprint itself when Node is started without them (src/cli/heapOptions.ts: an npm install);
# here they also hold for the other commands of the image, and do not depend on a flag V8 reads at run time.
ENTRYPOINT ["node", "--max-semi-space-size=1", "--optimize-for-size", "/app/dist/src/cli/main.js"]
CMD ["run"]
