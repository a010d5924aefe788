// The container: the Dockerfile and compose.yaml as written (user, volume, health check, PID 1),
// and a real build where Docker runs (skipped, saying why, elsewhere).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");
const dockerfile = readFileSync(path.join(root, "Dockerfile"), "utf8");
const compose = readFileSync(path.join(root, "compose.yaml"), "utf8");
/** The Dockerfile's instructions, comments and continuations folded. */
const instructions = dockerfile
  .replace(/\\\n/g, " ")
  .split("\n")
  .filter((l) => l.trim() !== "" && !l.trimStart().startsWith("#"));
const all = (keyword: string) => instructions.filter((l) => l.startsWith(`${keyword} `)).map((l) => l.slice(keyword.length + 1).trim());

const dockerUp = spawnSync("docker", ["info"], { stdio: "ignore" }).status === 0;
if (!dockerUp) console.warn("docker build test skipped: no running Docker here (docker info failed)");

describe("the Dockerfile", () => {
  it("builds in two stages on Node 24 slim", () => {
    expect(all("FROM")).toEqual(["node:24-bookworm-slim AS deps", "node:24-bookworm-slim"]);
  });

  it("runs as the non-root user node, with the home as a volume", () => {
    expect(all("USER")).toEqual(["node"]);
    expect(all("ENV").join(" ")).toContain("HEARTH_HOME=/home/node/.hearth");
    expect(all("VOLUME")).toEqual(['["/home/node/.hearth"]']);
  });

  it("checks health with hearth status, and forwards signals through tini as PID 1", () => {
    expect(all("HEALTHCHECK")).toEqual(['--interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["node", "/app/bin/hearth.js", "status"]']);
    expect(all("ENTRYPOINT")).toEqual(['["/usr/bin/tini", "--", "node", "/app/bin/hearth.js"]']);
    expect(all("CMD")).toEqual(['["start"]']);
    expect(all("RUN").join("\n")).toContain("apt-get install -y --no-install-recommends tini bubblewrap ca-certificates");
  });

  it("compose keeps the home on a named volume and gives a run its shutdown grace", () => {
    expect(compose).toContain("      - hearth-home:/home/node/.hearth\n");
    expect(compose).toContain("    stop_grace_period: 15s\n");
    expect(compose).toContain("    restart: unless-stopped\n");
  });

  it.skipIf(!dockerUp)("docker build succeeds", () => {
    const r = spawnSync("docker", ["build", "-q", "-t", "hearth-test", root], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  }, 600_000);
});
