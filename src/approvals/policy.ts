// Which tool calls the owner is asked about (approvals.exec: risky | always | off). A command
// line is read with a bash grammar (shell.ts) and what it does anywhere in it (kinds.ts) — a
// risky kind, code Hearth cannot read, the network — decides with the owner's `approvals.ask`
// and `approvals.allow` patterns and, once the run is tainted (outside content entered it), what
// the run may no longer do unasked. A line that does not read as bash is asked about.
import { findingsOf, NETWORK_COMMANDS, type Finding } from "./kinds.ts";
import { shellReader, type ShellLine, type ShellReader } from "./shell.ts";

export type ExecMode = "risky" | "always" | "off";

export interface PolicyConfig {
  exec: ExecMode;
  ask: readonly string[];
  allow: readonly string[];
  /**
   * Commands of this machine run in the sandbox, whose only way out is the egress proxy: a
   * tainted run's connection is asked there, per destination, so the command itself is not asked
   * for naming a network program (commands on SSH hosts still are).
   */
  networkWalled?: boolean;
}

/** Why a call needs the owner: a sentence shown in the question ("it deletes recursively (rm -r)"). */
export type Verdict = { type: "run" } | { type: "ask"; reason: string };

/** A tool call as the policy and the grants see it (`actionFacts` makes one). */
export interface ActionFacts {
  tool: string;
  /** exec: the command; send_file: `send_file PATH`; web_fetch: `web_fetch URL`. */
  command: string;
  /**
   * The command in one spelling (shell.ts): the same words give the same text however they were
   * quoted or spaced, so a grant covers `rm  -r 'build'` as `rm -r build`. A line that does not
   * read as bash, and the other tools' commands, as they are (trimmed).
   */
  canonical: string;
  /** Where it acts: the workspace folder, or `placeOf(host)` for a command on an SSH exec host. */
  folder: string;
  /** The network hosts it names (curl's target, a URL's host). */
  hosts: string[];
  /**
   * It may reach somewhere other than its hosts: a proxy or config-file option (`-x`, `--proxy`,
   * `-K`, `--config`…), a proxy variable, or more than one destination. A host grant never covers it.
   */
  reroutes: boolean;
  /** A connection's port (tool "connect"). */
  port?: number;
  /** The tools other than exec: what the call does that a tainted run is asked about ("this sends a file out"). */
  risk?: string;
  /** Lines the question shows under the command (what an MCP server says of its tool). */
  notes?: string[];
}

const EXEC_HOST = "ssh-host:";

/** The place of a command run on the SSH exec host `name` (tools.exec.hosts): never a folder of this machine, so no grant for one covers the other. */
export const placeOf = (name: string): string => `${EXEC_HOST}${name}`;

/** The exec host a place names, or null for a folder of this machine. */
export const execHostOf = (place: string): string | null => (place.startsWith(EXEC_HOST) ? place.slice(EXEC_HOST.length) : null);

/** An exec call's facts: its command read once for its one spelling and its destinations. */
export async function execFacts(command: string, place: string): Promise<ActionFacts> {
  const line = (await shellReader()).read(command);
  return { tool: "exec", command, canonical: line.type === "read" ? line.canonical : command.trim(), folder: place, hosts: hostsIn(command), reroutes: line.type !== "read" || reroutes(line) };
}

/** Another tool's facts (send_file, web_fetch): its command is its one spelling. */
export const toolFacts = (tool: string, command: string, folder: string, hosts: string[]): ActionFacts => ({ tool, command, canonical: command.trim(), folder, hosts, reroutes: false });

/**
 * The verdict for one call, before grants (grants.ts) are consulted. `tainted`: why the run holds
 * outside content, as a clause ("this run read a web page"); null when it holds none. Never rejects.
 */
export async function judge(facts: ActionFacts, config: PolicyConfig, tainted: string | null): Promise<Verdict> {
  if (config.exec === "off") return { type: "run" };
  const reader = await shellReader();
  const { command } = facts;
  if (config.allow.some((p) => patternProblem(reader, p) === null && patternMatches(canonicalPattern(reader, p), facts.canonical))) return { type: "run" };
  if (facts.tool !== "exec") {
    return tainted ? { type: "ask", reason: `${tainted}, and ${facts.risk ?? "this sends a file out"}` } : { type: "run" };
  }
  if (config.exec === "always") return { type: "ask", reason: "every command is asked about (approvals.exec: always)" };
  if (config.ask.some((p) => patternMatches(p, command) || patternMatches(canonicalPattern(reader, p), facts.canonical))) return { type: "ask", reason: "it matches one of your approvals.ask patterns" };
  const walled = config.networkWalled === true && execHostOf(facts.folder) === null;
  return verdictOf(findingsOf(reader, command, facts.folder, execHostOf), tainted, walled);
}

/** The first finding that asks, in order of weight: a risky kind, a line that does not read, then what taint or a hint of risk makes of the rest. */
function verdictOf(findings: Finding[], tainted: string | null, walled: boolean): Verdict {
  const ask = (reason: string): Verdict => ({ type: "ask", reason });
  const of = <T extends Finding["type"]>(type: T) => findings.filter((f): f is Extract<Finding, { type: T }> => f.type === type);
  const risky = of("risky")[0];
  if (risky) return ask(risky.why);
  const unparsed = of("unparsed")[0];
  if (unparsed) return ask(unparsed.reason);
  const unreadable = of("unreadable");
  if (tainted && !walled && of("network").length > 0) return ask(`${tainted}, and the command reaches the network`);
  if (tainted && unreadable[0]) return ask(`${tainted}, and it runs code Hearth cannot read (${unreadable[0].what})`);
  const hinted = unreadable.find((u) => u.risk !== null);
  if (hinted) return ask(`it runs code Hearth cannot read (${hinted.what}), and ${hinted.risk}`);
  return { type: "run" };
}

/** Whether a command reaches the network (what a tainted run is asked about); a line that does not read as bash may. */
export async function reachesNetwork(command: string, folder = process.cwd()): Promise<boolean> {
  return findingsOf(await shellReader(), command, folder, execHostOf).some((f) => f.type === "network" || f.type === "unparsed");
}

/**
 * What a command whose connections the egress proxy does not see (on an SSH exec host, or where
 * commands run unconfined: `walled` false) may bring into the run, as a taint clause; null when
 * its line reads as commands Hearth knows none of which reaches the network. A line that does not
 * read, or code Hearth cannot read, may fetch anything: it counts.
 */
export async function outsideBeyondProxy(facts: ActionFacts, walled: boolean): Promise<string | null> {
  const host = execHostOf(facts.folder);
  if (host === null && walled) return null;
  const findings = findingsOf(await shellReader(), facts.command, facts.folder, execHostOf);
  if (!findings.some((f) => f.type === "network" || f.type === "unparsed" || f.type === "unreadable")) return null;
  return host === null ? "the output of a command that may reach the network" : `the output of a command on ${host} that may reach the network`;
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


const PROXY_OPTION = /^(?:--(?:proxy|preproxy|socks|config|connect-to|resolve|next|url|execute)|-[a-zA-Z]*[xK:]|-e$)/;
const FILE_SUFFIX = /\.(?:txt|json|html?|md|log|csv|xml|sh|py|js|ts|tar|gz|tgz|zip|png|jpe?g|gif|pdf|out|bin|tmp|ya?ml|conf|cfg|ini|pem|key|crt|sig|asc)$/i;

/**
 * Whether a line may reach somewhere other than the hosts its URLs name: a network command with
 * a proxy or config-file option, a proxy variable, or more than one destination (a URL, a
 * word that looks like a host name: `evil.example/x`, `10.0.0.1`, `localhost:8080`, or a network
 * command's word known only when it runs).
 */
function reroutes(line: Extract<ShellLine, { type: "read" }>): boolean {
  if (line.assigns.some((a) => /proxy/i.test(a))) return true;
  let destinations = 0;
  for (const c of line.commands) {
    const network = NETWORK_COMMANDS.has((c.words[0]?.value ?? "").split("/").at(-1) ?? "");
    for (const [i, w] of c.words.entries()) {
      // A network command's word known only when it runs (`"$URL"`) may be one more destination.
      if (i > 0 && network && !w.known) {
        destinations++;
        continue;
      }
      if (i > 0 && /^[A-Za-z_]*proxy=/i.test(w.value)) return true;
      if (i > 0 && w.value.startsWith("-")) {
        if (PROXY_OPTION.test(w.value)) return true;
        continue;
      }
      const host = /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:[^@/\s]*@)?(\[[0-9a-f:.]+\]|[^/:\s?#]+)/i.exec(w.value)?.[1] ?? "";
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(w.value) || /^localhost$/i.test(host) || /^\d{1,3}(?:\.\d{1,3}){3}$/.test(host) || (/^[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}$/i.test(host) && !FILE_SUFFIX.test(host))) destinations++;
    }
  }
  return destinations > 1;
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

/** An owner's pattern in the commands' one spelling (`echo "a b"` → `echo 'a b'`), so it matches however a command is quoted. */
export function canonicalPattern(reader: ShellReader, pattern: string): string {
  const line = reader.read(pattern);
  return line.type === "read" ? line.canonical : pattern.trim();
}

/** Programs whose arguments name what they delete, kill, write or change; a pattern may not leave that to a wildcard. */
const TARGETED = new Set(["rm", "rmdir", "unlink", "shred", "dd", "wipefs", "fdisk", "parted", "truncate", "tee", "cp", "mv", "ln", "install", "chmod", "chown", "chgrp", "kill", "pkill", "killall", "find", "rsync", "sed"]);
/** Programs whose arguments are a command or code: a wildcard there could be anything. */
const RUNNERS = new Set(["env", "exec", "nohup", "time", "coproc", "nice", "ionice", "command", "builtin", "xargs", "timeout", "stdbuf", "setsid", "chrt", "taskset", "flock", "parallel", "watch", "sudo", "doas", "su", "busybox", "eval", "source", ".", "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "node", "perl", "ruby", "php", "awk", "gawk", "ssh", "trap", "alias"]);
const GIT_WRITES = new Set(["push", "clean", "reset", "rm", "checkout", "restore", "branch", "tag", "stash", "update-ref", "filter-branch", "switch"]);

/**
 * Why an owner's pattern (`approvals.allow`, `/grant`) is refused, or null: a wildcard where the
 * program goes, where the target of a delete, kill, write or device goes, in a command another
 * command runs, or in a redirection's file. `rm -r build/*` could cover `rm -r build/ ~`.
 */
export function patternProblem(reader: ShellReader, pattern: string): string | null {
  const line = reader.read(pattern);
  if (line.type === "unreadable") return `it does not read as a command line (${line.reason.replace(/^it does not read as bash \((.*)\)$/, "$1")})`;
  const wild = (v: string) => v.includes("*");
  if (line.redirects.some((r) => wild(r.target.value))) return "a wildcard where a redirection's file goes could be any file";
  for (const c of line.commands) {
    const [name, ...args] = c.words.map((w) => w.value);
    if (name === undefined) continue;
    const prog = name.split("/").at(-1)!;
    if (wild(name)) return "a wildcard where the program goes could be any program";
    if (!args.some(wild)) continue;
    if (TARGETED.has(prog) || prog.startsWith("mkfs")) return `a wildcard in ${prog}'s arguments could be any target of ${prog}: write the exact command instead`;
    if (RUNNERS.has(prog) || /^python[0-9.]*$/.test(prog)) return `a wildcard in ${prog}'s arguments could be any command or code`;
    if (prog === "git" && (wild(args[0] ?? "") || GIT_WRITES.has(args[0] ?? ""))) return `a wildcard in git ${args[0]}'s arguments could be any branch, file or remote it changes`;
  }
  return null;
}
