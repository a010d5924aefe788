// How the sandbox setting meets the machine: `hearth start`, `hearth doctor` and `hearth init`
// with bubblewrap missing or broken (a PATH without it, or a bwrap that fails like one on a
// kernel without user namespaces), and the permissions of a config.json that holds secrets.
import { chmodSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { makeHome } from "../support/daemon.ts";

const KEY = "sk-ant-api03-setup-test-key-0123456789";
const INSTALL = "sudo apt-get install bubblewrap (Debian/Ubuntu; dnf/pacman: package bubblewrap)";

let home: string;
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** A folder for PATH: empty (no bwrap), or with a bwrap that fails like one without user namespaces. */
function pathDir(withBrokenBwrap: boolean): string {
  const dir = join(home, "bin");
  mkdirSync(dir, { recursive: true });
  if (withBrokenBwrap) writeFileSync(join(dir, "bwrap"), "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n", { mode: 0o755 });
  return dir;
}

const doctorLines = (stdout: string, name: string) => {
  const lines = stdout.split("\n");
  const at = lines.findIndex((l) => l.slice(2).startsWith(`${name}:`));
  return at < 0 ? [] : lines.slice(at, at + 2);
};

describe("the sandbox setting on a machine without bubblewrap", () => {
  it('"bwrap" refuses to start, saying how to install it', async () => {
    home = makeHome({ tools: { exec: { sandbox: "bwrap" } }, heartbeat: { every: "0" } });
    const env = isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: KEY, PATH: pathDir(false), HEARTH_LOG: "silent" });
    const r = await runHearth(["start"], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'hearth: tools.exec.sandbox is "bwrap" but bubblewrap (bwrap) is not installed.\n' +
        `  Install it: ${INSTALL}\n` +
        '  or set "tools": { "exec": { "sandbox": "auto" } } in config.json to run commands unsandboxed when it is missing.\n',
    );
    expect(r.stdout).toBe("");
  });

  it('"auto": doctor says commands run unsandboxed, what they can read, and how to install it', async () => {
    home = makeHome();
    const env = isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: KEY, PATH: pathDir(false) });
    await runHearth(["init"], env);
    const r = await runHearth(["doctor"], env);
    expect(doctorLines(r.stdout, "exec sandbox")).toEqual([
      "! exec sandbox: none (bubblewrap (bwrap) is not installed): commands run unsandboxed as your user and can read Hearth's config.json, transcripts and the daemon's environment (/proc)",
      `    fix: install bubblewrap: ${INSTALL}`,
    ]);
    expect(r.code).toBe(0);
  });

  it('"auto" with a bwrap that cannot create namespaces falls back, and doctor says why', async () => {
    home = makeHome();
    const bin = pathDir(true);
    const env = isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: KEY, PATH: bin });
    await runHearth(["init"], env);
    const r = await runHearth(["doctor"], env);
    expect(doctorLines(r.stdout, "exec sandbox")).toEqual([
      `! exec sandbox: none (${bin}/bwrap does not work here (bwrap: setting up uid map: Permission denied); user namespaces may be disabled): commands run unsandboxed as your user and can read Hearth's config.json, transcripts and the daemon's environment (/proc)`,
      `    fix: install bubblewrap: ${INSTALL}`,
    ]);
  });
});

describe("config.json permissions", () => {
  it("hearth init creates config.json readable by the owner only", async () => {
    home = makeHome();
    await runHearth(["init"], isolatedEnv({ HEARTH_HOME: home }));
    expect(statSync(join(home, "config.json")).mode & 0o777).toBe(0o600);
  });

  it("doctor fails a config.json that holds a secret and others can read, and names the fix", async () => {
    home = makeHome({ model: { apiKey: KEY } });
    const file = join(home, "config.json");
    chmodSync(file, 0o644);
    const env = isolatedEnv({ HEARTH_HOME: home });
    await runHearth(["init"], env);
    const r = await runHearth(["doctor"], env);
    expect(doctorLines(r.stdout, "config file")).toEqual([
      `✗ config file: ${file} holds a secret and is readable by other users (mode 644)`,
      `    fix: chmod 600 ${file}`,
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain(KEY);

    chmodSync(file, 0o600);
    expect(doctorLines((await runHearth(["doctor"], env)).stdout, "config file")).toEqual([]);
  });
});
