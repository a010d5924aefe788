// The container: the Dockerfile and compose.yaml as written (user, volume, health check, PID 1),
// and a real build where Docker runs (skipped, saying why, elsewhere).
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "./support/cli-process.ts";
import { startFakeModel, text } from "./support/fake-model.ts";

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
    expect(all("RUN").join("\n")).toContain("apt-get install -y --no-install-recommends tini bubblewrap socat iproute2 ca-certificates");
  });

  it("holds everything Hearth reads: a folder laid out as the image's /app answers `hearth chat -m` on a new home", async () => {
    // The runtime stage's own copies (after the last FROM), not the dependency stage's.
    const runtime = instructions.slice(instructions.findLastIndex((l) => l.startsWith("FROM ")));
    const copied = runtime.filter((l) => l.startsWith("COPY ") && !l.startsWith("COPY --from=")).map((l) => l.slice(5).trim());
    expect(copied).toEqual(["package.json ./", "config.schema.json ./", "bin ./bin", "src ./src", "vendor ./vendor", "workspace ./workspace"]);
    const ignored = readFileSync(path.join(root, ".dockerignore"), "utf8").split("\n").map((l) => l.trim());
    for (const c of copied) expect(ignored).not.toContain(c.split(" ")[0]);
    // /app as the Dockerfile builds it: what it copies, and the dependencies of the first stage.
    const app = mkdtempSync(path.join(tmpdir(), "hearth-image-"));
    const fake = await startFakeModel();
    try {
      for (const c of copied) {
        const [from, to] = c.split(" ") as [string, string];
        cpSync(path.join(root, from), path.join(app, to === "./" ? from : to), { recursive: true });
      }
      symlinkSync(path.join(root, "node_modules"), path.join(app, "node_modules"));
      fake.enqueue(text("Hello from the image."));
      const home = path.join(app, "home");
      const r = await runHearth(["chat", "-m", "hi"], isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url }), { bin: path.join(app, "bin", "hearth.js") });
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe("Hello from the image.\n");
      expect(readdirSync(path.join(home, "workspace")).sort()).toEqual(readdirSync(path.join(root, "workspace")).sort());
    } finally {
      await fake.close();
      rmSync(app, { recursive: true, force: true });
    }
  });

  it("lets the user node write the compile cache under node_modules/.cache", () => {
    expect(all("RUN").join("\n")).toContain("chown node:node /home/node/.hearth /app/node_modules/.cache");
  });

  it("compose keeps the home on a named volume and gives a run its shutdown grace", () => {
    expect(compose).toContain("      - hearth-home:/home/node/.hearth\n");
    expect(compose).toContain("    stop_grace_period: 15s\n");
    expect(compose).toContain("    restart: unless-stopped\n");
  });

  it.skipIf(!dockerUp)("docker build succeeds, and the container answers hearth chat -m through the fake model", async () => {
    const built = spawnSync("docker", ["build", "-q", "-t", "hearth-test", root], { encoding: "utf8" });
    expect(built.status, built.stderr).toBe(0);
    const fake = await startFakeModel();
    try {
      fake.enqueue(text("Hello from the container."));
      // The host's network: the container reaches the fake model on this machine's loopback.
      const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn("docker", ["run", "--rm", "--network", "host", "-e", "ANTHROPIC_API_KEY=k", "-e", `ANTHROPIC_BASE_URL=${fake.url}`, "hearth-test", "chat", "-m", "hi"]);
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        child.on("error", reject);
        child.on("close", (code) => resolve({ code, stdout, stderr }));
      });
      expect(run.stdout, run.stderr).toBe("Hello from the container.\n");
      expect(run.code).toBe(0);
    } finally {
      await fake.close();
    }
  }, 600_000);
});
