# Debian's redis-server on the same base as Sandgate (no registry needed beyond node:20-bookworm-slim).
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends redis-server && rm -rf /var/lib/apt/lists/* \
  && mkdir -p /data && chown redis:redis /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--dir", "/data", "--appendonly", "yes"]
