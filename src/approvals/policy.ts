// Which tool calls the owner is asked about (approvals.exec: risky | always | off). A command is
// split into its simple commands (at ; && || | and line breaks) and each is matched against the
// built-in list of risky kinds below, the owner's `approvals.ask` patterns and, once the run is
// tainted (outside content entered it), the list of commands that reach the network.
import { existsSync, statSync } from "node:fs";
import path from "node:path";

export type ExecMode = "risky" | "always" | "off";

export interface PolicyConfig {
  exec: ExecMode;
  ask: readonly string[];
  allow: readonly string[];
}

/** Why a call needs the owner: a sentence shown in the question ("it deletes recursively (rm -r)"). */
export type Verdict = { type: "run" } | { type: "ask"; reason: string };

/** A tool call as the policy sees it. `host`: where it reaches, when known (a URL in the command). */
export interface ActionFacts {
  tool: string;
  /** exec: the command; send_file: `send_file PATH`; web_fetch: `web_fetch URL`. */
  command: string;
  /** Where it acts: the workspace folder, or `placeOf(host)` for a command on an SSH exec host. */
  folder: string;
  /** The network hosts it names (curl's target, a URL's host). */
  hosts: string[];
  /** A connection's port (tool "connect"). */
  port?: number;
}

const EXEC_HOST = "ssh-host:";

/** The place of a command run on the SSH exec host `name` (tools.exec.hosts): never a folder of this machine, so no grant for one covers the other. */
export const placeOf = (name: string): string => `${EXEC_HOST}${name}`;

/** The exec host a place names, or null for a folder of this machine. */
export const execHostOf = (place: string): string | null => (place.startsWith(EXEC_HOST) ? place.slice(EXEC_HOST.length) : null);

interface RiskyKind {
  test: (words: string[], whole: string) => boolean;
  why: string;
}

const has = (words: string[], ...flags: string[]) => words.some((w) => flags.includes(w) || (/^-[a-zA-Z]+$/.test(w) && flags.some((f) => /^-[a-zA-Z]$/.test(f) && w.includes(f[1]!))));
const first = (words: string[]) => path.basename(words[0] ?? "");

/** The built-in list (README "Approvals" names each). Matched per simple command, after `sudo`/`env` prefixes are read as their own kind. */
export const RISKY_KINDS: readonly RiskyKind[] = [
  { test: (w) => ["sudo", "su", "doas"].includes(first(w)), why: "it runs as another user (sudo)" },
  { test: (w) => first(w) === "rm" && has(w, "-r", "-R", "--recursive"), why: "it deletes recursively (rm -r)" },
  { test: (w) => ["shred", "mkfs", "dd", "wipefs", "fdisk"].includes(first(w)) || first(w).startsWith("mkfs."), why: "it overwrites a disk or file in place" },
  { test: (w) => first(w) === "find" && (w.includes("-delete") || w.some((x, j) => FIND_EXEC.includes(x) && DELETERS.includes(path.basename(w[j + 1] ?? "")))), why: "it deletes the files it finds (find -delete, find -exec rm)" },
  { test: (w) => first(w) === "xargs" && w.slice(1).some((x) => DELETERS.includes(path.basename(x))), why: "it deletes the files it is given (xargs rm)" },
  { test: (w) => w[0] === TOO_DEEP, why: "it nests commands too deeply to judge (bash -c within bash -c …)" },
  { test: (w) => first(w) === "git" && w[1] === "push" && (has(w, "-f", "--force", "--force-with-lease", "--mirror", "--delete") || w.some((x) => x.startsWith("--force") || x.startsWith("+"))), why: "it rewrites history on a remote (git push --force)" },
  { test: (w) => first(w) === "git" && w[1] === "reset" && w.includes("--hard"), why: "it discards uncommitted work (git reset --hard)" },
  { test: (w) => first(w) === "git" && w[1] === "clean", why: "it deletes untracked files (git clean)" },
  { test: (w) => ["chmod", "chown", "chgrp"].includes(first(w)) && has(w, "-R", "--recursive"), why: "it changes permissions recursively" },
  { test: (w) => ["kill", "pkill", "killall"].includes(first(w)), why: "it stops other processes (kill)" },
  { test: (w) => ["apt", "apt-get", "dnf", "yum", "pacman", "apk", "brew", "snap"].includes(first(w)), why: "it installs or removes system software" },
  { test: (w) => ["pip", "pip3", "pipx", "gem", "cargo", "go"].includes(first(w)) && ["install", "uninstall"].includes(w[1] ?? ""), why: "it installs software" },
  { test: (w) => ["npm", "pnpm", "yarn", "bun"].includes(first(w)) && ["install", "i", "add", "ci", "exec", "dlx", "x"].includes(w[1] ?? ""), why: "it installs software" },
  { test: (w) => ["npx", "bunx", "uvx"].includes(first(w)), why: "it downloads and runs software" },
  {
    test: (_w, whole) =>
      /\b(?:curl|wget)\b[^\n]*\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b/.test(whole) ||
      /(?:\b(?:ba|z|da|k)?sh|\bsource|(?:^|[\s;&|])\.)\s+<\(\s*(?:curl|wget)\b/.test(whole) ||
      /\b(?:eval|(?:ba|z|da|k)?sh\s+-[a-z]*c)\s+["']?\$\(\s*(?:curl|wget)\b/.test(whole),
    why: "it downloads and runs a script (curl … | sh)",
  },
];

const NETWORK_COMMANDS = new Set(["curl", "wget", "nc", "ncat", "netcat", "ssh", "scp", "sftp", "rsync", "ftp", "telnet", "socat", "http", "https", "aria2c", "ping", "dig", "nslookup", "host"]);

/** Whether a command reaches the network (what a tainted run is asked about). */
export function reachesNetwork(command: string): boolean {
  if (/\bhttps?:\/\/|\/dev\/(?:tcp|udp)\//i.test(command)) return true;
  return simpleCommands(command).some((w) => NETWORK_COMMANDS.has(first(w)) || (first(w) === "git" && ["push", "pull", "fetch", "clone", "ls-remote"].includes(w[1] ?? "")));
}

const MAX_PLAIN_PATH = 48;
const MAX_PLAIN_LABEL = 20;

/** A piece of a URL that looks like encoded data: 16+ characters of hex, base64 (mixed case and digits), base32 or %-escapes. */
function looksEncoded(s: string): boolean {
  if (/%[0-9a-f]{2}/i.test(s)) return true;
  if (s.length < 16) return false;
  return /^[0-9a-f]+$/i.test(s) || /^[A-Z2-7]+=*$/.test(s) || (/^[A-Za-z0-9+/=_-]+$/.test(s) && /\d/.test(s) && /[a-z]/.test(s) && /[A-Z]/.test(s));
}

/**
 * Whether a URL could carry workspace data out (what a tainted web_fetch is asked about): it is
 * not plain. Plain: no user name or password, no query string, a path of at most 48 characters
 * with no part that looks encoded, and host-name parts of at most 20 characters that do not look
 * encoded (nor 12 or more with 3 digits). A URL that is no URL carries nothing (the fetch fails).
 * A bound, not a proof: a plain URL still names a host and a short path, so a tainted run can
 * leak a few characters per fetch; the gate also lets a URL the run read (a link) through.
 */
export function carriesData(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.username || u.password || u.search.length > 1) return true;
  if (u.pathname.length > MAX_PLAIN_PATH || u.pathname.split(/[/.;,]/).some(looksEncoded)) return true;
  // Host names arrive in lower case: base64 or base32 there shows as a long part with digits.
  const host = u.hostname.replace(/^\[|\]$/g, "");
  return host.split(".").some((label) => label.length > MAX_PLAIN_LABEL || looksEncoded(label) || (label.length >= 12 && (label.match(/\d/g)?.length ?? 0) >= 3));
}

/** The hosts a command or URL names (lower case, no port), in order, without repeats. */
export function hostsIn(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\b[a-z][a-z0-9+.-]*:\/\/(?:[^@/\s'"]*@)?(\[[0-9a-f:.]+\]|[^/:\s'"?#]+)/gi)) {
    const host = m[1]!.toLowerCase();
    if (!out.includes(host)) out.push(host);
  }
  return out;
}

/**
 * The simple commands of a bash line as words: split at ; & | and line breaks, quotes kept
 * together, and every command one of them runs judged too: `sudo`/`env VAR=…`/`exec`/`nohup`/
 * `time`/`xargs`… read through, the string of `bash -c`/`sh -c`/`eval`, and the command of
 * `find … -exec`. A rough reader, not bash: it errs towards more commands, never fewer.
 */
export function simpleCommands(command: string, depth = 0): string[][] {
  const out: string[][] = [];
  for (const part of command.split(/\|\||&&|[;&|\n]|\$\(|`|\(|\)/)) {
    const words = part.match(/"[^"]*"|'[^']*'|\S+/g)?.map((w) => w.replace(/^(["'])(.*)\1$/, "$2")) ?? [];
    if (words.length === 0) continue;
    out.push(words);
    for (const inner of innerCommands(words, depth)) out.push(inner);
  }
  return out.filter((w) => w.length > 0);
}

const WRAPPERS = ["env", "exec", "nohup", "time", "nice", "ionice", "command", "builtin", "xargs", "timeout", "stdbuf", "setsid", "chrt", "taskset", "flock", "watch", "parallel", "sudo", "doas"];
const SHELLS = ["sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "busybox"];
const FIND_EXEC = ["-exec", "-execdir", "-ok", "-okdir"];
const DELETERS = ["rm", "unlink", "shred"];
/** Commands nested deeper than this (`bash -c "sh -c '…'"`) are not read: the line is asked about. */
const MAX_DEPTH = 4;
const WRAPPER_TAILS = 4;
const TOO_DEEP = "\u0000too-deep";
const isAssignment = (w: string) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(w);

/** The commands a simple command runs in turn (see simpleCommands), each with those it runs. */
function innerCommands(words: string[], depth: number): string[][] {
  if (depth >= MAX_DEPTH) return [[TOO_DEEP]];
  const runs: string[][] = [];
  let i = 0;
  while (i < words.length && isAssignment(words[i]!)) i++;
  if (i > 0 && i < words.length) runs.push(words.slice(i));
  const name = first(words.slice(i));
  // A wrapper's options come before its command and cannot all be told from it (`xargs -I {} rm
  // -r {}`, `sudo -u bob rm -r x`, `timeout -s KILL 5 curl …`): each of the first tails that
  // start with a word that is no option is judged (a few: the command is never further, and
  // nested wrappers must not multiply the work).
  if (WRAPPERS.includes(name)) {
    let tails = 0;
    for (let j = i + 1; j < words.length && tails < WRAPPER_TAILS; j++) {
      if (words[j]!.startsWith("-") || isAssignment(words[j]!)) continue;
      runs.push(words.slice(j));
      tails++;
    }
  }
  // A command string is judged as a line of its own: `bash -c "rm -r x"`, `eval "curl …"`.
  const c = SHELLS.includes(name) ? words.findIndex((w, j) => j > i && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w)) : -1;
  const script = c > 0 ? words.slice(c + 1) : name === "eval" ? words.slice(i + 1) : [];
  if (script.length > 0) runs.push(...simpleCommands(script.join(" ").replace(/^["']|["']$/g, ""), depth + 1));
  // find's -exec/-execdir/-ok/-okdir run a command on each file found.
  if (name === "find") {
    for (const [j, w] of words.entries()) if (FIND_EXEC.includes(w)) runs.push(words.slice(j + 1).filter((x) => x !== "{}" && x !== "\\" && x !== "+"));
  }
  return runs.flatMap((r) => [r, ...innerCommands(r, depth + 1)]);
}

/**
 * Whether a mv or cp puts something over an existing file, or outside `folder` (the workspace):
 * the one risky kind that depends on the disk. Paths are resolved against `folder`.
 */
function overwrites(words: string[], folder: string): boolean {
  if (!["mv", "cp"].includes(first(words))) return false;
  // Another machine's files cannot be looked at from here: any mv or cp there is asked about.
  if (execHostOf(folder) !== null) return true;
  const args = words.slice(1).filter((w) => !w.startsWith("-"));
  if (args.length < 2) return false;
  const target = path.resolve(folder, args.at(-1)!.replace(/^~(?=\/|$)/, process.env.HOME ?? "~"));
  const inside = target === folder || target.startsWith(folder + path.sep);
  if (!inside) return true;
  try {
    return existsSync(target) && !statSync(target).isDirectory();
  } catch {
    return true;
  }
}

/**
 * The verdict for one call, before grants (grants.ts) are consulted. `tainted`: why the run holds
 * outside content, as a clause ("this run read a web page"); null when it holds none. Never throws.
 */
export function judge(facts: ActionFacts, config: PolicyConfig, tainted: string | null): Verdict {
  if (config.exec === "off") return { type: "run" };
  const { command } = facts;
  if (matchesAny(config.allow, command)) return { type: "run" };
  if (facts.tool !== "exec") {
    return tainted ? { type: "ask", reason: `${tainted}, and ${facts.tool === "send_file" ? "this sends a file out" : "this URL carries data out"}` } : { type: "run" };
  }
  if (config.exec === "always") return { type: "ask", reason: "every command is asked about (approvals.exec: always)" };
  if (matchesAny(config.ask, command)) return { type: "ask", reason: "it matches one of your approvals.ask patterns" };
  for (const words of simpleCommands(command)) {
    const kind = RISKY_KINDS.find((k) => k.test(words, command));
    if (kind) return { type: "ask", reason: kind.why };
    if (overwrites(words, facts.folder)) return { type: "ask", reason: `it moves or copies over an existing file or outside the workspace (${first(words)})` };
  }
  if (tainted && reachesNetwork(command)) return { type: "ask", reason: `${tainted}, and the command reaches the network` };
  return { type: "run" };
}

/**
 * `*` in a pattern matches any text without a shell control character, so `git push origin *`
 * covers `git push origin main` but never `git push origin main; curl evil.example`.
 */
export function patternMatches(pattern: string, command: string): boolean {
  const source = pattern
    .trim()
    .split("*")
    .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("[^;&|<>`$()\\n]*");
  return new RegExp(`^${source}$`).test(command.trim());
}

const matchesAny = (patterns: readonly string[], command: string) => patterns.some((p) => patternMatches(p, command));

/**
 * The pattern "Allow for N min" grants: the command with its last word as `*` (`git push origin
 * main` → `git push origin *`); a command with more than one simple command, or a single word,
 * is granted exactly as it is.
 */
export function grantPatternOf(command: string): string {
  const trimmed = command.trim();
  if (/[;&|<>`$()\n*]/.test(trimmed)) return trimmed;
  const words = trimmed.split(/\s+/);
  if (words.length < 2) return trimmed;
  return `${words.slice(0, -1).join(" ")} *`;
}
