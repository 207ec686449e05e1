# CleverAgents Server image: build once, run `node dist/main.js` in the server package (/app/packages/server).
# Node.js 24 LTS, the major in .nvmrc; the suite checks that these agree with package.json engines.
FROM node:24-bookworm-slim AS build
WORKDIR /app
# The npm workspaces: the manifests first, so that `npm ci` is cached while only sources change.
COPY package.json package-lock.json ./
COPY packages/contract/package.json ./packages/contract/
COPY packages/client/package.json ./packages/client/
COPY packages/cli/package.json ./packages/cli/
COPY packages/server/package.json ./packages/server/
COPY packages/console/package.json ./packages/console/
RUN npm ci
COPY tsconfig.base.json tsconfig.build.json ./
# Each package's sources and tsconfig.build.json; the server's migrations and build scripts (the build's last
# step makes dist/embedded-template, the migrated database a fresh data directory copies).
COPY packages ./packages
# The incremental build's state (dist/.tsbuildinfo) is of no use in the image.
RUN npm run build && rm -rf packages/*/dist/.tsbuildinfo && npm prune --omit=dev

FROM node:24-bookworm-slim
# Production needs DATABASE_URL, CLEVERAGENTS_SECRET_KEY and a real auth scheme (see .env.example).
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 CLEVERAGENTS_DATA_DIR=/app/data
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
# The server, the contract it imports and the web console's built files it serves at /console/
# (node_modules/@cleveragents/* link to these folders).
COPY --from=build /app/packages/contract/package.json ./packages/contract/
COPY --from=build /app/packages/contract/dist ./packages/contract/dist
COPY --from=build /app/packages/console/package.json ./packages/console/
COPY --from=build /app/packages/console/dist ./packages/console/dist
COPY --from=build /app/packages/server/package.json /app/packages/server/langgraph.json ./packages/server/
COPY --from=build /app/packages/server/dist ./packages/server/dist
WORKDIR /app/packages/server
# The data directory (embedded database, or just the generated secret key) belongs to the runtime user;
# mount a volume here to keep it.
RUN mkdir -p /app/data && chown 1000:1000 /app/data
VOLUME /app/data
# The base image's `node` user, by number: Kubernetes can then verify runAsNonRoot without being told
# the uid (deploy/helm/cleveragents sets the same uid).
USER 1000:1000
EXPOSE 8080
# Liveness, not readiness: /healthz answers while the process serves HTTP. /readyz also reports the
# database and the actor backend (a model endpoint that is down or not configured makes it 503), which
# is no reason to call the container unhealthy. The start period covers the wait for PostgreSQL
# (CLEVERAGENTS_DATABASE_CONNECT_SECONDS, 30 s by default).
HEALTHCHECK --interval=15s --timeout=3s --start-period=40s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/main.js"]
