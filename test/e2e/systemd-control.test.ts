// `hearth start|restart|logs` when the systemd unit has Hearth (its record in the home, the unit
// file installed): they go through `systemctl --user` and say so. systemctl is a fake here
// (HEARTH_SYSTEMCTL) that records its calls and starts Hearth as the unit would.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hearthBin, isolatedEnv, runHearth } from "../support/cli-process.ts";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, type FakeModel } from "../support/fake-model.ts";

let fake: FakeModel;
let base: string;
let home: string;
let env: NodeJS.ProcessEnv;
const calls = () => readFileSync(join(base, "systemctl.log"), "utf8").trim().split("\n").filter((c) => !c.includes("is-active"));
const lockPid = (): number | null => {
  try {
    return (JSON.parse(readFileSync(join(home, "gateway.lock"), "utf8")) as { pid: number }).pid;
  } catch {
    return null;
  }
};

beforeAll(async () => {
  fake = await startFakeModel();
  base = mkdtempSync(join(tmpdir(), "hearth-systemd-"));
  home = join(base, "home");
  // The fake systemctl: records each call; `stop` sends the daemon SIGTERM and waits for it, as
  // the unit's KillMode does; `start` starts Hearth in the background as its ExecStart would.
  const systemctl = join(base, "systemctl");
  writeFileSync(
    systemctl,
    `#!${process.execPath}
const { appendFileSync, openSync, readFileSync } = require("node:fs");
const { spawn } = require("node:child_process");
const args = process.argv.slice(2);
appendFileSync(${JSON.stringify(join(base, "systemctl.log"))}, args.join(" ") + "\\n");
const pid = () => { try { return JSON.parse(readFileSync(${JSON.stringify(join(home, "gateway.lock"))}, "utf8")).pid; } catch { return null; } };
const alive = (p) => { try { process.kill(p, 0); return true; } catch { return false; } };
(async () => {
  if (args[1] === "stop" || args[1] === "restart") {
    const p = pid();
    if (p) {
      process.kill(p, "SIGTERM");
      while (alive(p)) await new Promise((r) => setTimeout(r, 50));
    }
  }
  if (args[1] === "start" || args[1] === "restart") {
    const out = openSync(${JSON.stringify(join(base, "unit.log"))}, "a");
    // systemd gives each service process INVOCATION_ID.
    spawn(process.execPath, [${JSON.stringify(hearthBin)}, "start"], { detached: true, stdio: ["ignore", out, out], env: { ...process.env, INVOCATION_ID: "fake" } }).unref();
  }
})();
`,
  );
  chmodSync(systemctl, 0o755);
  env = isolatedEnv({ HEARTH_HOME: home, XDG_CONFIG_HOME: join(base, "config"), HEARTH_SYSTEMCTL: systemctl, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url, HEARTH_LOG: "info" });
  await runHearth(["init"], env);
  writeFileSync(join(home, "config.json"), JSON.stringify({ agent: { shutdownGraceMs: 1000 } }), { mode: 0o600 });
  // The unit file as `hearth service install` writes it, and the record Hearth writes when the unit starts it.
  mkdirSync(join(base, "config", "systemd", "user"), { recursive: true });
  writeFileSync(join(base, "config", "systemd", "user", "hearth.service"), `[Service]\nEnvironment=HEARTH_HOME=${home}\n`);
  writeFileSync(join(home, "supervisor.json"), `${JSON.stringify({ kind: "systemd", unit: "hearth.service" })}\n`, { mode: 0o600 });
});

afterAll(async () => {
  const pid = lockPid();
  if (pid) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {}
    await waitFor("the daemon gone", () => lockPid() === null, 30_000).catch(() => {});
  }
  await fake.close();
  rmSync(base, { recursive: true, force: true });
});

describe("the systemd unit as Hearth's supervisor", () => {
  it("logs names the journal; restart and a terminal's start go through systemctl and say so", async () => {
    expect(await runHearth(["logs"], env)).toEqual({
      code: 1,
      stdout: "",
      stderr: "hearth: Hearth runs as the systemd unit hearth.service, which logs to the journal: journalctl --user -u hearth.service -f\n",
    });
    expect(await runHearth(["stop"], env)).toEqual({ code: 0, stdout: "Hearth is not running (it is stopped as the systemd unit hearth.service).\n", stderr: "" });

    const restarted = await runHearth(["restart"], env);
    const first = lockPid();
    expect(restarted).toEqual({ code: 0, stdout: `Started Hearth as the systemd unit hearth.service (pid ${first}).\n`, stderr: "" });
    expect(calls()).toEqual(["--user start hearth.service"]);
    await waitFor("the daemon answers", async () => (await runHearth(["status"], env)).code === 0);

    // A start from a terminal while it runs does not start a second one.
    expect(await runHearth(["start"], env)).toEqual({ code: 0, stdout: `Hearth is already running as the systemd unit hearth.service (pid ${first}).\n`, stderr: "" });

    // restart and stop go through systemctl too.
    const again = await runHearth(["restart"], env);
    const second = lockPid();
    expect(again).toEqual({ code: 0, stdout: `Restarted Hearth as the systemd unit hearth.service (pid ${second}; it was pid ${first}).\n`, stderr: "" });
    expect(calls()).toEqual(["--user start hearth.service", "--user restart hearth.service"]);
    await waitFor("the daemon answers", async () => (await runHearth(["status"], env)).code === 0);
    expect(await runHearth(["stop"], env)).toEqual({ code: 0, stdout: `Stopped Hearth as the systemd unit hearth.service (it was pid ${second}).\n`, stderr: "" });
    expect(calls().at(-1)).toBe("--user stop hearth.service");
  });
});
