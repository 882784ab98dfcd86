# Sandgate in a container: the same command as `npm start`, as the non-root `node` user,
# with a health check. Build: docker build --network host -t sandgate .
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts/build-if-stale.mjs ./scripts/
COPY src ./src
COPY data ./data
RUN npm run build

FROM node:20-bookworm-slim
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY data ./data
COPY assets ./assets
COPY fixtures ./fixtures
COPY scenarios ./scenarios
# --data / DATA_FILE may point into /data (mount a volume there to keep state across containers);
# `sandgate` on PATH, so a CI runner without Node drives it: docker exec <ctr> sandgate ctl health
RUN mkdir -p /data && chown node:node /data && chmod +x bin/sandgate.js && ln -s /app/bin/sandgate.js /usr/local/bin/sandgate
USER node
EXPOSE 8080
# healthy within a second of the app answering (compose's service_healthy waits no longer): a check
# every second, kept cheap for that — bash's /dev/tcp and one read, a few ms of CPU, no node process.
# (--start-interval would check often while starting only, but needs Docker 25: Docker 20.10 refuses
# the Dockerfile with "Unknown flag: start-interval".)
HEALTHCHECK --interval=1s --timeout=2s --start-period=60s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${PORT:-8080} && printf 'GET /__sandbox/health HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n' >&3 && read -r status <&3 && [[ $status == *' 200 '* ]]"]
CMD ["node", "--max-semi-space-size=16", "--no-memory-reducer", "--heap-growing-percent=100", "dist/sandgate.js"]
