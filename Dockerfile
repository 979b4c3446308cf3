# crmsync image for docker-compose.yml: the compiled CLI, its production dependencies and the SQL
# migrations. The Temporal server is not inside: compose runs the official images beside it.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm install runs `prepare` (scripts/build.mjs --if-possible): it skips here, before the sources.
COPY bin ./bin
COPY scripts/build.mjs ./scripts/
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
RUN npm run build

FROM node:20-bookworm-slim
ENV NODE_ENV=production
# The worker's launch settings (src/worker/worker-launch-settings.ts): fewer glibc malloc arenas
# for DuckDB's and Temporal core's threads here, for every command; the worker's small V8 young
# generation is set on the worker service alone (docker-compose.yml), so the webhook receiver
# keeps V8's own. With both, `crmsync worker` need not start itself again for them.
ENV MALLOC_ARENA_MAX=2
WORKDIR /app
COPY package.json package-lock.json ./
COPY bin ./bin
COPY scripts/build.mjs ./scripts/
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY sql ./sql
RUN useradd --system --uid 10001 crmsync && mkdir -p /data /lake && chown crmsync /data /lake
USER crmsync
ENTRYPOINT ["node", "bin/crmsync.js"]
