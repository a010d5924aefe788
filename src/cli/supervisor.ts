// Which supervisor runs Hearth for a home: pm2, a systemd user unit, or none (a terminal, or the
// background start of `hearth restart`). `hearth start|stop|restart` act through it, so that a
// supervisor never loses track of a daemon stopped or started behind its back (pm2 listing
// `stopped` while Hearth runs outside it, then failing on the lock at its next restart).
//
// A running daemon is told by its own process: pm2 sets `pm_id` (and `name`, `PM2_HOME`) in its
// apps' environment; systemd puts a unit's processes in the unit's cgroup. A stopped daemon has
// no process to ask, so the daemon records its supervisor in `<home>/supervisor.json` as it
// starts, and the record is believed only while the supervisor still has Hearth: pm2 lists the
// app with this home, or the unit file is still installed.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isAlive } from "../process/info.ts";
import { unitPath } from "./service.ts";

export type Supervisor =
  /** pm2 runs the app `id` (named `name`) of the pm2 whose home is `pm2Home`. */
  | { kind: "pm2"; pm2Home: string; id: number; name: string }
  /** The systemd user unit `unit` runs it. */
  | { kind: "systemd"; unit: string }
  | { kind: "none" };

const root = fileURLToPath(new URL("../../", import.meta.url));
const pm2Bin = path.join(root, "node_modules", ".bin", "pm2");

export const supervisorFile = (home: string): string => path.join(home, "supervisor.json");

/** How the user reads the supervisor in a message: "under pm2", "as the systemd unit hearth.service". */
export function describeSupervisor(s: Supervisor): string {
  switch (s.kind) {
    case "pm2":
      return "under pm2";
    case "systemd":
      return `as the systemd unit ${s.unit}`;
    case "none":
      return "in the background";
    default:
      s satisfies never;
      return "";
  }
}

/** The supervisor a process's environment and cgroup name; `none` when neither names one. */
export function supervisorFromProcess(env: NodeJS.ProcessEnv, cgroup: string): Supervisor {
  const id = Number(env.pm_id);
  if (env.pm_id !== undefined && Number.isInteger(id)) {
    return { kind: "pm2", pm2Home: env.PM2_HOME || path.join(env.HOME || os.homedir(), ".pm2"), id, name: env.name || "hearth" };
  }
  // A user unit's cgroup: …/user@1000.service/app.slice/hearth.service. A system unit is not
  // driven from here (it needs root); it counts as none.
  const unit = /\/user@\d+\.service\/(?:[^\n]*\/)?([^/\n]+\.service)\s*$/m.exec(cgroup)?.[1];
  if (unit && env.INVOCATION_ID) return { kind: "systemd", unit };
  return { kind: "none" };
}

/**
 * The supervisor of the running daemon `pid` of `home` (`none` when /proc cannot say). A systemd
 * service whose cgroup does not name its unit (a layout this does not read) is known by its
 * INVOCATION_ID and the home's record.
 */
export function supervisorOfDaemon(pid: number, home: string): Supervisor {
  const env = environOf(pid);
  const s = supervisorFromProcess(env, readOr(`/proc/${pid}/cgroup`, ""));
  if (s.kind !== "none" || !env.INVOCATION_ID) return s;
  const recorded = recordedSupervisor(home);
  return recorded.kind === "systemd" ? recorded : s;
}

/** This process's supervisor. */
export const ownSupervisor = (): Supervisor => supervisorFromProcess(process.env, readOr("/proc/self/cgroup", ""));

/**
 * Whether a supervisor (pm2, or any systemd service: INVOCATION_ID) started this process. Its
 * `hearth start` must run the daemon itself: handing it to the supervisor again would loop
 * (systemd would wait on its own start job). A shell that inherited INVOCATION_ID from a
 * desktop's service only loses the hand-over, never runs a second daemon (the lock stops that).
 */
export const startedBySupervisor = (env: NodeJS.ProcessEnv = process.env): boolean => env.pm_id !== undefined || env.INVOCATION_ID !== undefined;

/**
 * Called by `hearth start` as it begins, before the lock: a supervisor starting Hearth for this
 * home has it, whether or not this start succeeds. A start without one leaves the record alone
 * (a terminal start while pm2 holds Hearth stopped does not make pm2 forget it). Never throws.
 */
export function recordSupervisor(home: string, s: Supervisor): void {
  if (s.kind === "none") return;
  try {
    writeFileSync(supervisorFile(home), `${JSON.stringify(s)}\n`, { mode: 0o600 });
  } catch {
    // A home that cannot be written fails at the next step, with its own message.
  }
}

/** Forgets the record (`hearth service uninstall`). */
export function forgetSupervisor(home: string): void {
  rmSync(supervisorFile(home), { force: true });
}

/**
 * The supervisor that has Hearth for `home` while no daemon runs: the record, if that supervisor
 * still has it. A pm2 that is not running has nothing (after a reboot without `pm2 startup`).
 */
export function recordedSupervisor(home: string): Supervisor {
  let s: Supervisor;
  try {
    s = JSON.parse(readFileSync(supervisorFile(home), "utf8")) as Supervisor;
  } catch {
    return { kind: "none" };
  }
  switch (s.kind) {
    case "pm2":
      return typeof s.pm2Home === "string" && Number.isInteger(s.id) && pm2App(s, home) ? s : { kind: "none" };
    case "systemd":
      return readOr(unitPath(), "").includes(`HEARTH_HOME=${home}`) ? s : { kind: "none" };
    default:
      return { kind: "none" };
  }
}

export interface Pm2App {
  status: string;
  pid: number;
}

/**
 * What pm2 says of the app (`pm2 jlist`), or null when pm2 is not running or no longer has it for
 * this home. pm2 itself is never started by asking.
 */
export function pm2App(s: Extract<Supervisor, { kind: "pm2" }>, home: string): Pm2App | null {
  const pid = Number(readOr(path.join(s.pm2Home, "pm2.pid"), "").trim());
  if (!isAlive(pid)) return null;
  const r = spawnSync(pm2Bin, ["jlist"], { cwd: root, env: { ...process.env, PM2_HOME: s.pm2Home }, encoding: "utf8", timeout: 30_000 });
  try {
    const apps = JSON.parse(r.stdout) as Array<{ pm_id: number; pid: number; pm2_env: { status: string; HEARTH_HOME?: string } }>;
    const app = apps.find((a) => a.pm_id === s.id && a.pm2_env.HEARTH_HOME === home);
    return app ? { status: app.pm2_env.status, pid: app.pid } : null;
  } catch {
    return null;
  }
}

/** Runs pm2 on the app (`stop`, `restart`); stderr is returned for the message of a failure. */
export function pm2Action(s: Extract<Supervisor, { kind: "pm2" }>, home: string, args: string[]): { ok: boolean; stderr: string } {
  const r = spawnSync(pm2Bin, args, { cwd: root, env: { ...process.env, HEARTH_HOME: home, PM2_HOME: s.pm2Home }, encoding: "utf8", timeout: 120_000 });
  return { ok: r.status === 0, stderr: (r.stderr || r.error?.message || "").trim() };
}

/** Runs `systemctl --user ACTION UNIT` (`HEARTH_SYSTEMCTL` names another systemctl, for tests). */
export function systemdAction(s: Extract<Supervisor, { kind: "systemd" }>, action: "start" | "stop" | "restart"): { ok: boolean; stderr: string } {
  const r = spawnSync(process.env.HEARTH_SYSTEMCTL || "systemctl", ["--user", action, s.unit], { encoding: "utf8", timeout: 120_000 });
  return { ok: r.status === 0, stderr: (r.stderr || r.error?.message || "").trim() };
}

/** True once systemd says the unit will not come up (`is-active`: failed or inactive). */
export function systemdGaveUp(s: Extract<Supervisor, { kind: "systemd" }>): boolean {
  const r = spawnSync(process.env.HEARTH_SYSTEMCTL || "systemctl", ["--user", "is-active", s.unit], { encoding: "utf8", timeout: 30_000 });
  return ["failed", "inactive"].includes((r.stdout || "").trim());
}

function environOf(pid: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const kv of readOr(`/proc/${pid}/environ`, "").split("\0")) {
    const i = kv.indexOf("=");
    if (i > 0) env[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return env;
}

function readOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return fallback;
  }
}
