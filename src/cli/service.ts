// `hearth service install|uninstall`: Hearth as a systemd user service, without pm2. The unit
// restarts Hearth after a crash but not after a configuration error (exit code 2), logs to the
// journal, and counts as started only once `hearth status` answers.
import { DAEMON_ENV } from "../process/daemon-env.ts";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError } from "./args.ts";

interface ServiceIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export const UNIT_NAME = "hearth.service";

export interface UnitParams {
  /** The Node 24 binary (this process's). */
  node: string;
  /** bin/hearth.js. */
  bin: string;
  home: string;
}

/** systemd quoting of one word of ExecStart= (and of an Environment= assignment). */
function quoteWord(s: string): string {
  return /^[A-Za-z0-9_./:=@+-]+$/.test(s) ? s : `"${s.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** The unit file's text. Exit code 2 is the `hearth` command's configuration error. */
export function serviceUnit(p: UnitParams): string {
  const node = quoteWord(p.node);
  const bin = quoteWord(p.bin);
  return `[Unit]
Description=Hearth, a personal AI assistant
After=network-online.target
Wants=network-online.target

[Service]
Type=exec
Environment=${quoteWord(`HEARTH_HOME=${p.home}`)}
${Object.entries(DAEMON_ENV).map(([k, v]) => `Environment=${quoteWord(`${k}=${v}`)}`).join("\n")}
WorkingDirectory=${quoteWord(path.dirname(path.dirname(p.bin)))}
ExecStart=${node} ${bin} start
# Started means answering on the control socket.
ExecStartPost=/bin/sh -c 'until ${node.replaceAll("'", "")} ${bin.replaceAll("'", "")} status >/dev/null 2>&1; do sleep 0.5; done'
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
`;
}

export function unitPath(env: NodeJS.ProcessEnv = process.env): string {
  const config = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), ".config");
  return path.join(config, "systemd", "user", UNIT_NAME);
}

export function defaultUnitParams(home: string): UnitParams {
  return { node: process.execPath, bin: fileURLToPath(new URL("../../bin/hearth.js", import.meta.url)), home };
}

/** `HEARTH_SYSTEMCTL` names another systemctl (tests point it at a missing one), `HEARTH_LINGER_DIR` another /var/lib/systemd/linger. */
export async function runService(home: string, args: string[], io: ServiceIO, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [action, ...rest] = args;
  if (rest.length) throw new UsageError(`Unexpected arguments: ${rest.join(" ")}`);
  const file = unitPath(env);
  const systemctl = env.HEARTH_SYSTEMCTL || "systemctl";
  if (action === "install") {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, serviceUnit(defaultUnitParams(home)));
    io.stdout.write(`Wrote ${file}.\n`);
    const code = systemctlSteps(systemctl, [["daemon-reload"], ["enable", "--now", UNIT_NAME]], io, "then follow it with: journalctl --user -u hearth -f");
    // Without lingering, a user's services start at their login and stop at their logout.
    const user = env.USER || os.userInfo().username;
    if (!existsSync(path.join(env.HEARTH_LINGER_DIR || "/var/lib/systemd/linger", user))) {
      io.stdout.write(`It runs while you are logged in. To start it at boot and keep it running after you log out: sudo loginctl enable-linger ${user}\n`);
    }
    return code;
  }
  if (action === "uninstall") {
    if (!existsSync(file)) {
      io.stdout.write(`No unit at ${file}: nothing to remove.\n`);
      return 0;
    }
    const code = systemctlSteps(systemctl, [["disable", "--now", UNIT_NAME]], io, "");
    rmSync(file, { force: true });
    io.stdout.write(`Removed ${file}.\n`);
    systemctlSteps(systemctl, [["daemon-reload"]], io, "");
    return code;
  }
  throw new UsageError(action === undefined ? "service needs install or uninstall." : `Unknown service action "${action}".`);
}

function systemctlSteps(systemctl: string, steps: string[][], io: ServiceIO, after: string): number {
  for (const step of steps) {
    const r = spawnSync(systemctl, ["--user", ...step], { encoding: "utf8" });
    if (r.status !== 0) {
      const why = r.error ? r.error.message : (r.stderr || "").trim() || `exit code ${r.status}`;
      io.stderr.write(`hearth: systemctl --user ${step.join(" ")} failed (${why}). Where there is a user session, run: ${steps.map((s) => `systemctl --user ${s.join(" ")}`).join(" && ")}\n`);
      return 1;
    }
  }
  if (after) io.stdout.write(`Hearth runs as a systemd user service; ${after}\n`);
  return 0;
}
