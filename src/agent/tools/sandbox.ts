// Where an `exec` command runs. With bubblewrap: new PID and network namespaces that die with
// the daemon, the workspace read-write, the rest of the file system read-only, Hearth's home
// hidden, its own /proc, /dev, /tmp and /run. The network namespace has nothing but its own
// loopback: the one way out is Hearth's egress proxy (src/egress/), whose Unix socket is bound in
// and bridged to 127.0.0.1:3128 by socat, with the proxy variables set so that ordinary tools use
// it. Without bubblewrap no command runs, unless the owner turned the sandbox off.
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CONTEXT_DIRS, CONTEXT_FILES } from "../../memory/context-paths.ts";

export const sandboxModes = ["auto", "bwrap", "off"] as const;
export type SandboxMode = (typeof sandboxModes)[number];

export const BWRAP_INSTALL = "sudo apt-get install bubblewrap socat (Debian/Ubuntu; dnf/pacman: packages bubblewrap and socat)";

/** The decision made once at start: how every exec command of this daemon runs. */
export type ExecSandbox =
  | { kind: "bwrap"; bwrap: string; network: boolean; workspace: string; hidden: string[]; socat: string | null }
  /** `why` "off": the owner's choice, commands run unconfined; any other: no command runs, `detail` says why and `fix` what to do. */
  | { kind: "none"; mode: SandboxMode; why: "off" | "missing" | "broken"; detail: string; fix?: string };

/** Inside the sandbox, the bridge to the egress proxy listens here (the namespace's own loopback). */
export const PROXY_PORT = 3128;

/** `tools.exec.sandbox: "bwrap"` on a system where bubblewrap is missing or does not work. */
export class SandboxUnavailableError extends Error {
  override name = "SandboxUnavailableError";
  constructor(detail: string) {
    super(
      `tools.exec.sandbox is "bwrap" but ${detail}.\n` +
        `  Install it: ${BWRAP_INSTALL}\n` +
        `  or set "tools": { "exec": { "sandbox": "off" } } in config.json to run commands unconfined (approvals are then advice, not a wall).`,
    );
  }
}

export type BwrapProbe = { ok: true; bwrap: string; socat: string | null } | { ok: false; why: "missing" | "broken"; detail: string; fix: string };

/**
 * Finds bwrap (and, when commands may use the network, socat) on PATH and runs bwrap once the way
 * exec will (new PID and network namespaces, read-only root): a kernel, AppArmor or a container
 * that refuses user namespaces makes bwrap exist but fail. Synchronous; about 10 ms.
 */
export function probeBwrap(env: NodeJS.ProcessEnv = process.env, opts: { network?: boolean } = {}): BwrapProbe {
  const bwrap = findOnPath("bwrap", env.PATH ?? "");
  if (!bwrap) return { ok: false, why: "missing", detail: "bubblewrap (bwrap) is not installed", fix: `install it: ${BWRAP_INSTALL}` };
  const socat = opts.network === false ? null : findOnPath("socat", env.PATH ?? "");
  if (opts.network !== false && !socat) {
    return { ok: false, why: "missing", detail: "socat is not installed (the bridge from a command's sandbox to Hearth's egress proxy)", fix: `install it: ${BWRAP_INSTALL}, or set tools.exec.network to false` };
  }
  const r = spawnSync(bwrap, [...baseArgs(), "--unshare-net", "--", "true"], { stdio: ["ignore", "ignore", "pipe"], timeout: 10_000, env: {} });
  if (r.status === 0) return { ok: true, bwrap, socat };
  const why = r.error ? r.error.message : (r.stderr?.toString().trim() || `exit ${r.status ?? r.signal}`).split("\n")[0]!;
  const cause = namespaceCause();
  return { ok: false, why: "broken", detail: `${bwrap} cannot create namespaces here (${why}); ${cause.why}`, fix: cause.fix };
}

/** Why unprivileged user namespaces may be refused here, and the fix for that cause. */
function namespaceCause(): { why: string; fix: string } {
  const read = (file: string) => {
    try {
      return readFileSync(file, "utf8").trim();
    } catch {
      return null;
    }
  };
  if (existsSync("/.dockerenv") || existsSync("/run/.containerenv") || /docker|containerd|kubepods|libpod/.test(read("/proc/1/cgroup") ?? "")) {
    return {
      why: "Hearth runs inside a container, which refuses new namespaces",
      fix: 'let the container be the boundary: set "tools": { "exec": { "sandbox": "off" } } (docs/operations.md, "Running in a container"), or run the container with --security-opt seccomp=unconfined --security-opt apparmor=unconfined',
    };
  }
  if (read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") === "1") {
    return {
      why: "AppArmor restricts unprivileged user namespaces (Ubuntu 24.04's default)",
      fix: "allow them for bwrap with an AppArmor profile (docs/security.md, \"No sandbox, no commands\"), or: sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0",
    };
  }
  if (read("/proc/sys/kernel/unprivileged_userns_clone") === "0") return { why: "the kernel disables unprivileged user namespaces", fix: "sudo sysctl kernel.unprivileged_userns_clone=1" };
  if (read("/proc/sys/user/max_user_namespaces") === "0") return { why: "user namespaces are disabled (user.max_user_namespaces is 0)", fix: "sudo sysctl user.max_user_namespaces=15000" };
  return { why: "user namespaces may be disabled", fix: `check that \`bwrap --unshare-net --ro-bind / / true\` runs as your user; ${BWRAP_INSTALL}` };
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
    return { kind: "none", mode: opts.mode, why: probe.why, detail: probe.detail, fix: probe.fix };
  }
  const workspace = realOrSelf(opts.workspace);
  return { kind: "bwrap", bwrap: probe.bwrap, network: opts.network, workspace, hidden: hiddenPaths(opts.home), socat: probe.socat };
}

/** The one sentence an `exec` call gets where no sandbox can be made (and the owner did not turn it off); null where commands run. */
export function execRefusal(sb: ExecSandbox): string | null {
  if (sb.kind === "bwrap" || sb.why === "off") return null;
  return `Commands cannot run: ${sb.detail}, and Hearth runs commands only in its sandbox. The owner can ${sb.fix ?? `install it: ${BWRAP_INSTALL}`} (or set tools.exec.sandbox to "off" to run commands unconfined).`;
}

/** One line for `hearth status` and `hearth doctor`; `withFix`: name the install command when bwrap is missing. */
export function describeSandbox(sb: ExecSandbox, withFix = true): string {
  if (sb.kind === "bwrap") {
    return `bubblewrap: commands see the workspace (read-write, its notes read-only) and the rest of the system read-only; Hearth's home is hidden; network ${sb.network ? "only through Hearth's egress proxy" : "off"}`;
  }
  if (sb.why === "off") return "off: commands run unconfined as your user: they can reach any address, and read Hearth's config.json, grants and transcripts; approvals are advice, not a wall";
  const fix = withFix ? `; ${sb.fix ?? `install it: ${BWRAP_INSTALL}`}` : "";
  return `unavailable (${sb.detail}): exec refuses every command${fix}`;
}

/**
 * The program, arguments and extra environment that run `bash -c command` in the sandbox, in
 * `cwd`. `proxy`: the folder holding the egress proxy's socket for this command (Egress.open);
 * without it a sandboxed command has no network at all. `writable`: more folders it may write
 * (absolute, existing), even inside Hearth's hidden home.
 */
export function sandboxedCommand(sb: ExecSandbox, command: string, cwd: string, proxy?: { dir: string; socketName: string }, writable: readonly string[] = []): { file: string; args: string[]; env: Record<string, string> } {
  if (sb.kind === "none") return { file: "bash", args: ["-c", command], env: {} };
  const args = [...baseArgs()];
  // Order matters: bwrap applies mounts in sequence. The home goes under a tmpfs, then the
  // workspace (usually inside it) is bound back; a home inside the workspace is hidden again.
  for (const dir of sb.hidden) args.push("--tmpfs", dir);
  args.push(...workspaceMounts(sb.workspace));
  for (const dir of sb.hidden) if (isInside(dir, sb.workspace)) args.push("--tmpfs", dir);
  // Hearth's own install (its Node, the MCP servers among its packages) stays readable where it
  // lies under a folder the sandbox empties (/tmp, /run): a checkout in /tmp runs its servers too.
  if (!sb.hidden.some((dir) => dir === INSTALL_ROOT || isInside(INSTALL_ROOT, dir))) args.push("--ro-bind", INSTALL_ROOT, INSTALL_ROOT);
  // Folders of Hearth's own that a process may keep (an MCP server's home): bound back last.
  for (const dir of writable) args.push("--bind", dir, dir);
  args.push("--unshare-net", "--chdir", realOrSelf(cwd));
  if (!sb.network || !proxy || !sb.socat) return { file: sb.bwrap, args: [...args, "--", "bash", "-c", command], env: {} };
  const socket = path.join(proxy.dir, proxy.socketName);
  args.push("--ro-bind", proxy.dir, proxy.dir, "--", "bash", "-c", BRIDGE, "bash", sb.socat, socket, command);
  return { file: sb.bwrap, args, env: proxyEnv() };
}

/**
 * The workspace read-write, except the files and folders whose words enter a context
 * (memory/context-paths.ts), bound read-only over themselves: a command cannot write, truncate,
 * remove or rename them (a mount point is busy), so a tainted run cannot plant a line in what a
 * later run is told. A name can only be kept from being created where it exists: the context
 * folders are made when missing (empty, they mean nothing), and where a context file is missing
 * or is a link (which could be removed and replaced), the workspace's top level is bound
 * read-only and each of its other real entries read-write over it. Links to context files are
 * followed, so the file they name is read-only too. Computed per command: a note the owner
 * creates counts at the next one.
 */
export function workspaceMounts(workspace: string): string[] {
  const kind = (rel: string): "file" | "dir" | "link" | "missing" | "other" => {
    try {
      const st = lstatSync(path.join(workspace, rel));
      return st.isSymbolicLink() ? "link" : st.isFile() ? "file" : st.isDirectory() ? "dir" : "other";
    } catch {
      return "missing";
    }
  };
  for (const dir of CONTEXT_DIRS) {
    if (kind(dir) !== "missing") continue;
    try {
      mkdirSync(path.join(workspace, dir), { mode: 0o700 });
    } catch {
      // left missing: the top level goes read-only below
    }
  }
  const context = [...CONTEXT_FILES, ...CONTEXT_DIRS];
  const kinds = new Map(context.map((rel) => [rel, kind(rel)]));
  const sealed = [...kinds].every(([rel, k]) => k === (CONTEXT_FILES.includes(rel) ? "file" : "dir"));
  const args: string[] = [];
  if (sealed) {
    args.push("--bind", workspace, workspace);
  } else {
    args.push("--ro-bind", workspace, workspace);
    let entries: string[] = [];
    try {
      entries = readdirSync(workspace);
    } catch {
      // an unreadable top level: all of it read-only
    }
    // Links are left as they are: what they lead to is read-only outside the workspace, or bound inside it.
    for (const name of entries) {
      if (context.includes(name)) continue;
      const k = kind(name);
      if (k === "file" || k === "dir") args.push("--bind", path.join(workspace, name), path.join(workspace, name));
    }
  }
  // -try: a link whose file is gone binds nothing (and the top level is read-only: it cannot be made).
  for (const [rel, k] of kinds) if (k !== "missing") args.push("--ro-bind-try", path.join(workspace, rel), path.join(workspace, rel));
  return args;
}

/**
 * Inside the namespace: socat listens on the namespace's loopback and carries each connection to
 * the proxy's socket; it is started in a subshell, so it is no job of the command's shell (a bare
 * `wait` does not wait for it) and dies with the namespace. The command starts once the port
 * listens (read from /proc/net/tcp with builtins only: no process per try), so its first
 * connection is never refused. $1 socat, $2 the socket, $3 the command.
 */
const BRIDGE = [
  // -b: socat copies 8 kB at a time by default, a fifth of the loopback's rate for a download.
  `("$1" -b 262144 TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,reuseaddr,fork "UNIX-CONNECT:$2" </dev/null >/dev/null 2>&1 &)`,
  `for ((i = 0; i < 20000; i++)); do while read -r _ a _ st _; do [[ $a == 0100007F:${PROXY_PORT.toString(16).toUpperCase().padStart(4, "0")} && $st == 0A ]] && break 2; done </proc/net/tcp; done`,
  `exec bash -c "$3"`,
].join("\n");

/** The variables that send ordinary tools through the proxy: curl, wget, git, pip, npm, python, node (NODE_USE_ENV_PROXY), ssh via git. */
function proxyEnv(): Record<string, string> {
  const http = `http://127.0.0.1:${PROXY_PORT}`;
  const socks = `socks5h://127.0.0.1:${PROXY_PORT}`;
  return {
    HTTP_PROXY: http,
    http_proxy: http,
    HTTPS_PROXY: http,
    https_proxy: http,
    ALL_PROXY: socks,
    all_proxy: socks,
    // Every destination goes through the proxy, loopback included: the namespace's own loopback
    // holds nothing but the bridge, and the owner's local services are reached through egress.allowPrivate.
    NO_PROXY: "",
    no_proxy: "",
    NODE_USE_ENV_PROXY: "1",
    GIT_SSH_COMMAND: `ssh -o ProxyCommand='socat - PROXY:127.0.0.1:%h:%p,proxyport=${PROXY_PORT}'`,
  };
}

// --die-with-parent: bwrap gets SIGKILL when the daemon dies (even by kill -9), and with it the
// PID namespace's init, which takes every process of the namespace along, setsid or not.
// /run is emptied: the system's Unix sockets there (D-Bus, the resolver, a container runtime's)
// would be ways around the network namespace.
function baseArgs(): string[] {
  return ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run", "--unshare-pid", "--die-with-parent"];
}

/** The folder Hearth runs from (this file is src/agent/tools/sandbox.ts in it). */
const INSTALL_ROOT = realOrSelf(fileURLToPath(new URL("../../../", import.meta.url)));

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
