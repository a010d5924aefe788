# Hearth in a container: `docker compose up -d` with compose.yaml, or
#   docker build -t hearth . && docker run -d -v hearth-home:/home/node/.hearth -e ANTHROPIC_API_KEY hearth
# The home (config.json, workspace, sessions) is the volume; everything else is rebuilt.

# 1. Dependencies, without the dev tools (Node 24 is the image's own, no bundled node needed).
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# 2. The runtime: Node 24 slim, tini as PID 1, bubblewrap and socat for the exec sandbox and its
#    egress bridge (usable only where the container may create namespaces; else exec refuses until
#    the owner chooses "sandbox": "off", the container as the boundary: see README "Running in a
#    container"), iproute2's ss for the control socket's peer check, a non-root user.
FROM node:24-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini bubblewrap socat iproute2 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    HEARTH_HOME=/home/node/.hearth
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
# The JSON Schema that config.json names in "$schema" (hearth init writes its file URL).
COPY config.schema.json ./
COPY bin ./bin
COPY src ./src
# The bash grammar the approvals read command lines with (kept in the repository, not installed).
COPY vendor ./vendor
# The templates `hearth init` and every start copy into a new home's workspace.
COPY workspace ./workspace
# The home, and the compile cache bin/hearth.js keeps under node_modules/.cache (a warm start
# skips the TypeScript stripper), both writable by the user the daemon runs as.
RUN mkdir -p /home/node/.hearth /app/node_modules/.cache \
 && chown node:node /home/node/.hearth /app/node_modules/.cache
USER node
VOLUME ["/home/node/.hearth"]
# Healthy means the daemon answers on its control socket.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["node", "/app/bin/hearth.js", "status"]
# tini forwards SIGTERM to Hearth and reaps orphaned commands; Hearth stops cleanly on SIGTERM.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/bin/hearth.js"]
CMD ["start"]
