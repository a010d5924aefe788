// Where an `exec` command runs. With bubblewrap: a new PID namespace that dies with the daemon,
// the workspace read-write, the rest of the file system read-only, Hearth's home hidden, its own
// /proc, /dev and /tmp. Without it: a plain process group (see README "What a command can reach").
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";

export const sandboxModes = ["auto", "bwrap", "off"] as const;
export type SandboxMode = (typeof sandboxModes)[number];

export const BWRAP_INSTALL = "sudo apt-get install bubblewrap (Debian/Ubuntu; dnf/pacman: package bubblewrap)";

/** The decision made once at start: how every exec command of this daemon runs. */
export type ExecSandbox =
  | { kind: "bwrap"; bwrap: string; network: boolean; workspace: string; hidden: string[] }
  | { kind: "none"; mode: SandboxMode; why: "off" | "missing" | "broken"; detail: string };

/** `tools.exec.sandbox: "bwrap"` on a system where bubblewrap is missing or does not work. */
export class SandboxUnavailableError extends Error {
  override name = "SandboxUnavailableError";
  constructor(detail: string) {
    super(
      `tools.exec.sandbox is "bwrap" but ${detail}.\n` +
        `  Install it: ${BWRAP_INSTALL}\n` +
        `  or set "tools": { "exec": { "sandbox": "auto" } } in config.json to run commands unsandboxed when it is missing.`,
    );
  }
}

export type BwrapProbe = { ok: true; bwrap: string } | { ok: false; why: "missing" | "broken"; detail: string };

/**
 * Finds bwrap on PATH and runs it once the way exec will (new PID namespace, read-only root,
 * no network when `network` is false):
 * a kernel that refuses user namespaces makes bwrap exist but fail. Synchronous; about 10 ms.
 */
export function probeBwrap(env: NodeJS.ProcessEnv = process.env, opts: { network?: boolean } = {}): BwrapProbe {
  const bwrap = findOnPath("bwrap", env.PATH ?? "");
  if (!bwrap) return { ok: false, why: "missing", detail: "bubblewrap (bwrap) is not installed" };
  const net = opts.network === false ? ["--unshare-net"] : [];
  const r = spawnSync(bwrap, [...baseArgs(), ...net, "--", "true"], { stdio: ["ignore", "ignore", "pipe"], timeout: 10_000, env: {} });
  if (r.status === 0) return { ok: true, bwrap };
  const why = r.error ? r.error.message : (r.stderr?.toString().trim() || `exit ${r.status ?? r.signal}`).split("\n")[0]!;
  return { ok: false, why: "broken", detail: `${bwrap} does not work here (${why}); user namespaces may be disabled` };
}

/**
 * The sandbox for this daemon. `home` is Hearth's home: hidden from commands, except the
 * workspace inside it. Throws SandboxUnavailableError when mode is "bwrap" and bwrap cannot run.
 */
export function resolveExecSandbox(opts: {
  mode: SandboxMode;
  network: boolean;
  home: string;
  workspace: string;
  probe?: () => BwrapProbe;
}): ExecSandbox {
  if (opts.mode === "off") return { kind: "none", mode: "off", why: "off", detail: 'tools.exec.sandbox is "off"' };
  const probe = (opts.probe ?? (() => probeBwrap(process.env, { network: opts.network })))();
  if (!probe.ok) {
    if (opts.mode === "bwrap") throw new SandboxUnavailableError(probe.detail);
    return { kind: "none", mode: opts.mode, why: probe.why, detail: probe.detail };
  }
  const workspace = realOrSelf(opts.workspace);
  return { kind: "bwrap", bwrap: probe.bwrap, network: opts.network, workspace, hidden: hiddenPaths(opts.home) };
}

/** One line for `hearth status` and `hearth doctor`; `withFix`: name the install command when bwrap is missing. */
export function describeSandbox(sb: ExecSandbox, withFix = true): string {
  if (sb.kind === "bwrap") {
    return `bubblewrap: commands see the workspace (read-write) and the rest of the system read-only; Hearth's home is hidden; network ${sb.network ? "on" : "off"}`;
  }
  if (sb.why === "off") return "off: commands run as your user and can read Hearth's config.json, transcripts and the daemon's environment (/proc)";
  const fix = withFix ? `; install it: ${BWRAP_INSTALL}` : "";
  return `none (${sb.detail}): commands run unsandboxed as your user and can read Hearth's config.json, transcripts and the daemon's environment (/proc)${fix}`;
}

/** The program and arguments that run `bash -c command` in the sandbox, in `cwd`. */
export function sandboxedCommand(sb: ExecSandbox, command: string, cwd: string): { file: string; args: string[] } {
  if (sb.kind === "none") return { file: "bash", args: ["-c", command] };
  const args = [...baseArgs()];
  // Order matters: bwrap applies mounts in sequence. The home goes under a tmpfs, then the
  // workspace (usually inside it) is bound back; a home inside the workspace is hidden again.
  for (const dir of sb.hidden) args.push("--tmpfs", dir);
  args.push("--bind", sb.workspace, sb.workspace);
  for (const dir of sb.hidden) if (isInside(dir, sb.workspace)) args.push("--tmpfs", dir);
  if (!sb.network) args.push("--unshare-net");
  args.push("--chdir", realOrSelf(cwd), "--", "bash", "-c", command);
  return { file: sb.bwrap, args };
}

// --die-with-parent: bwrap gets SIGKILL when the daemon dies (even by kill -9), and with it the
// PID namespace's init, which takes every process of the namespace along, setsid or not.
function baseArgs(): string[] {
  return ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-pid", "--die-with-parent"];
}

/** Hearth's home and pm2's home (its dump file holds the environment, secrets included). */
function hiddenPaths(home: string): string[] {
  const pm2 = process.env.PM2_HOME ?? path.join(homedir(), ".pm2");
  return [realOrSelf(home), ...(existsSync(pm2) ? [realOrSelf(pm2)] : [])];
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

function findOnPath(name: string, pathVar: string): string | null {
  for (const dir of pathVar.split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}
