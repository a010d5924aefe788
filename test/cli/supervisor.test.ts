// Which supervisor has Hearth for a home: told by a process's environment and cgroup while it
// runs, by the record in the home (checked against the supervisor) while it does not.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { recordedSupervisor, recordSupervisor, supervisorFromProcess } from "../../src/cli/supervisor.ts";

describe("supervisorFromProcess", () => {
  it("pm2's app: its id, name and pm2 home from the environment pm2 gives it", () => {
    expect(supervisorFromProcess({ pm_id: "3", name: "hearth", PM2_HOME: "/srv/pm2" }, "")).toEqual({ kind: "pm2", pm2Home: "/srv/pm2", id: 3, name: "hearth" });
    expect(supervisorFromProcess({ pm_id: "0", HOME: "/home/ann" }, "")).toEqual({ kind: "pm2", pm2Home: "/home/ann/.pm2", id: 0, name: "hearth" });
  });

  it("a systemd user unit: the unit named by the cgroup, with systemd's INVOCATION_ID", () => {
    const cgroup = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/hearth.service\n";
    expect(supervisorFromProcess({ INVOCATION_ID: "abc" }, cgroup)).toEqual({ kind: "systemd", unit: "hearth.service" });
    // A terminal of a desktop session lives under user@…service too, but in a scope.
    expect(supervisorFromProcess({}, "0::/user.slice/user-1000.slice/user@1000.service/app.slice/vte-spawn-1.scope\n")).toEqual({ kind: "none" });
    // A system unit needs root to drive: not driven from here.
    expect(supervisorFromProcess({ INVOCATION_ID: "abc" }, "0::/system.slice/hearth.service\n")).toEqual({ kind: "none" });
  });

  it("a terminal: none", () => {
    expect(supervisorFromProcess({ HOME: "/home/ann" }, "0::/user.slice/user-1000.slice/session-3.scope\n")).toEqual({ kind: "none" });
  });
});

describe("recordedSupervisor", () => {
  let base: string;
  let home: string;
  let saved: string | undefined;
  beforeEach(() => {
    base = mkdtempSync(path.join(os.tmpdir(), "hearth-supervisor-"));
    home = path.join(base, "home");
    mkdirSync(home);
    saved = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = path.join(base, "config");
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = saved;
    rmSync(base, { recursive: true, force: true });
  });

  it("nothing recorded, or a start without a supervisor: none", () => {
    expect(recordedSupervisor(home)).toEqual({ kind: "none" });
    recordSupervisor(home, { kind: "none" });
    expect(recordedSupervisor(home)).toEqual({ kind: "none" });
  });

  it("the systemd unit while its file is installed for this home, none once it is removed", () => {
    recordSupervisor(home, { kind: "systemd", unit: "hearth.service" });
    expect(recordedSupervisor(home)).toEqual({ kind: "none" });
    mkdirSync(path.join(base, "config", "systemd", "user"), { recursive: true });
    writeFileSync(path.join(base, "config", "systemd", "user", "hearth.service"), `[Service]\nEnvironment=HEARTH_HOME=${home}\n`);
    expect(recordedSupervisor(home)).toEqual({ kind: "systemd", unit: "hearth.service" });
  });

  it("pm2 only while that pm2 runs and lists the app for this home", () => {
    recordSupervisor(home, { kind: "pm2", pm2Home: path.join(base, "pm2-not-running"), id: 0, name: "hearth" });
    expect(recordedSupervisor(home)).toEqual({ kind: "none" });
  });
});
