// `hearth service install|uninstall`: the systemd user unit, exactly, and what is run to enable it.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultUnitParams, runService, serviceUnit, unitPath } from "../../src/cli/service.ts";

const tmp = mkdtempSync(path.join(os.tmpdir(), "hearth-service-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) } } as never };
}

const hasAnalyze = spawnSync("systemd-analyze", ["--version"]).status === 0;
if (!hasAnalyze) console.warn("systemd-analyze verify skipped: systemd-analyze is not installed");

describe("the systemd unit", () => {
  it("is exactly this: readiness by hearth status, no restart on a configuration error, the journal", () => {
    expect(serviceUnit({ node: "/opt/hearth/node_modules/.bin/node", bin: "/opt/hearth/bin/hearth.js", home: "/home/me/.hearth" })).toBe(`[Unit]
Description=Hearth, a personal AI assistant
After=network-online.target
Wants=network-online.target

[Service]
Type=exec
Environment=HEARTH_HOME=/home/me/.hearth
Environment=MALLOC_ARENA_MAX=2
Environment=MALLOC_MMAP_THRESHOLD_=131072
WorkingDirectory=/opt/hearth
ExecStart=/opt/hearth/node_modules/.bin/node /opt/hearth/bin/hearth.js start
# Started means answering on the control socket.
ExecStartPost=/bin/sh -c 'until /opt/hearth/node_modules/.bin/node /opt/hearth/bin/hearth.js status >/dev/null 2>&1; do sleep 0.5; done'
TimeoutStartSec=120
# A crash restarts Hearth; a configuration error (exit code 2) waits for a fix.
Restart=on-failure
RestartSec=5
RestartPreventExitStatus=2
# SIGTERM to Hearth alone: it stops its own commands and servers, then exits.
KillMode=mixed
TimeoutStopSec=30
StandardOutput=journal
StandardError=journal
SyslogIdentifier=hearth

[Install]
WantedBy=default.target
`);
  });

  it.skipIf(!hasAnalyze)("passes systemd-analyze verify", () => {
    const file = path.join(tmp, "hearth.service");
    writeFileSync(file, serviceUnit(defaultUnitParams(path.join(tmp, "home"))));
    const r = spawnSync("systemd-analyze", ["verify", "--man=no", file], { encoding: "utf8" });
    expect(r.stderr.split("\n").filter((l) => l.includes("hearth.service"))).toEqual([]);
    expect(r.status).toBe(0);
  });

  it("install writes the unit and enables it; uninstall disables and removes it", async () => {
    const calls = path.join(tmp, "calls");
    const systemctl = path.join(tmp, "systemctl");
    writeFileSync(systemctl, `#!/bin/sh\necho "$*" >> ${calls}\n`);
    chmodSync(systemctl, 0o755);
    const linger = path.join(tmp, "linger");
    mkdirSync(linger);
    const env = { XDG_CONFIG_HOME: path.join(tmp, "config"), HEARTH_SYSTEMCTL: systemctl, HEARTH_LINGER_DIR: linger, USER: "ann" };
    const file = unitPath(env);
    const a = io();
    expect(await runService("/h", ["install"], a.io, env)).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(serviceUnit(defaultUnitParams("/h")));
    expect(a.out.join("")).toBe(
      `Wrote ${file}.\nHearth runs as a systemd user service; then follow it with: journalctl --user -u hearth -f\n` +
        "It runs while you are logged in. To start it at boot and keep it running after you log out: sudo loginctl enable-linger ann\n",
    );
    // With lingering on for the user, nothing more to say.
    writeFileSync(path.join(linger, "ann"), "");
    const again = io();
    expect(await runService("/h", ["install"], again.io, env)).toBe(0);
    expect(again.out.join("")).toBe(`Wrote ${file}.\nHearth runs as a systemd user service; then follow it with: journalctl --user -u hearth -f\n`);
    const b = io();
    expect(await runService("/h", ["uninstall"], b.io, env)).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(readFileSync(calls, "utf8")).toBe("--user daemon-reload\n--user enable --now hearth.service\n--user daemon-reload\n--user enable --now hearth.service\n--user disable --now hearth.service\n--user daemon-reload\n");
  });

  it("without a user systemd, install still writes the unit and says what to run", async () => {
    const env = { XDG_CONFIG_HOME: path.join(tmp, "config2"), HEARTH_SYSTEMCTL: path.join(tmp, "no-such-systemctl") };
    const a = io();
    expect(await runService("/h", ["install"], a.io, env)).toBe(1);
    expect(existsSync(unitPath(env))).toBe(true);
    expect(a.err.join("")).toMatch(/^hearth: systemctl --user daemon-reload failed \(.*ENOENT\)\. Where there is a user session, run: systemctl --user daemon-reload && systemctl --user enable --now hearth.service\n$/);
  });
});

describe("the daemon's environment under every supervisor", () => {
  it("pm2's ecosystem file sets what src/process/daemon-env.ts names", async () => {
    const { createRequire } = await import("node:module");
    const { DAEMON_ENV } = await import("../../src/process/daemon-env.ts");
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    // The file makes the home's logs folder: a home of the test's, never the machine's ~/.hearth.
    const home = mkdtempSync(path.join(tmpdir(), "hearth-eco-"));
    const before = process.env.HEARTH_HOME;
    process.env.HEARTH_HOME = home;
    try {
      const ecosystem = createRequire(import.meta.url)("../../ecosystem.config.cjs") as { apps: Array<{ env: Record<string, string> }> };
      expect(ecosystem.apps[0]!.env).toEqual({ HEARTH_HOME: home, ...DAEMON_ENV });
    } finally {
      if (before === undefined) delete process.env.HEARTH_HOME;
      else process.env.HEARTH_HOME = before;
      rmSync(home, { recursive: true, force: true });
    }
  });
});
