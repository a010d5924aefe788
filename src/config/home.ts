// The home folder (DESIGN §10): where it is, and every path inside it. Other modules take their
// paths from `homePaths` so the layout lives in exactly one place.
import os from "node:os";
import path from "node:path";

type Env = Record<string, string | undefined>;

/** Expands a leading `~` or `~/` to the user's home directory; any other path is returned as is. */
export function expandHome(p: string, env: Env = process.env): string {
  if (p !== "~" && !p.startsWith("~/")) return p;
  const userHome = env.HOME || os.homedir();
  return path.join(userHome, p.slice(1));
}

/** The home folder: `HEARTH_HOME` if set (`~` expanded, made absolute), else `~/.hearth`. */
export function resolveHome(env: Env = process.env): string {
  const fromEnv = env.HEARTH_HOME?.trim();
  return path.resolve(expandHome(fromEnv || "~/.hearth", env));
}

export interface HomePaths {
  home: string;
  /** `config.json`: JSON with comments, validated by config.ts. */
  config: string;
  /** `.env`: API keys and bot tokens as NAME=value lines, mode 0600 (config/secrets.ts). */
  secrets: string;
  /** The default workspace; config `workspace` may point elsewhere. */
  workspace: string;
  sessions: string;
  sessionsIndex: string;
  inbox: string;
  /** `outbox.jsonl`: the replies' platform message ids and final texts, until delivered. */
  outbox: string;
  cron: string;
  jobs: string;
  runs: string;
  pairing: string;
  /** `people.json`: the household's people, their accounts, budgets and tools (people/registry.ts). */
  people: string;
  /** `chat-audiences.json`: the chats answered as private, and the direct chats others joined (gateway/access/audience.ts). */
  audiences: string;
  /** `tasks.jsonl`: background tasks, their progress lines and their results, appended. */
  tasks: string;
  /** `rate-limits.json`: the shared chats' rate-limit windows, kept across restarts. */
  rateLimits: string;
  /** `terminal-mailbox.json`: proactive messages for the terminal that no `hearth chat` received yet. */
  mailbox: string;
  /** The search index folder; everything in it is a cache that is safe to delete. */
  index: string;
  memoryDb: string;
  /** The memory history: a bare git repository of the workspace's markdown files (memory/history/). */
  history: string;
  /** `provenance.jsonl`: which workspace files carry outside content (memory/provenance.ts). */
  provenance: string;
  /** The default folder of scheduled backups (config `backup.dir`). */
  backups: string;
  /** The control socket. Unix sockets allow about 100 bytes of path: keep homes short. */
  socket: string;
  lock: string;
  /** `mcp-auth/<server>.json`: OAuth tokens and client registrations of MCP servers (0600). */
  mcpAuth: string;
  /** The homes of stdio MCP servers in the sandbox (`mcp-home/<name>`: their HOME, caches such as npx's), remade when missing. */
  mcpHome: string;
  /** `known_hosts`: the SSH host keys of tools.exec.hosts that `hearth hosts trust` recorded. */
  knownHosts: string;
  /** The transcript of one session: `sessions/<key>.jsonl`, the key made safe for a file name. */
  sessionFile(key: string): string;
}

export function homePaths(home: string): HomePaths {
  const at = (...parts: string[]) => path.join(home, ...parts);
  const sessions = at("sessions");
  return {
    home,
    config: at("config.json"),
    secrets: at(".env"),
    workspace: at("workspace"),
    sessions,
    sessionsIndex: at("sessions", "index.json"),
    inbox: at("inbox.jsonl"),
    outbox: at("outbox.jsonl"),
    cron: at("cron"),
    jobs: at("cron", "jobs.json"),
    runs: at("cron", "runs.jsonl"),
    pairing: at("pairing.json"),
    people: at("people.json"),
    audiences: at("chat-audiences.json"),
    tasks: at("tasks.jsonl"),
    rateLimits: at("rate-limits.json"),
    mailbox: at("terminal-mailbox.json"),
    index: at("index"),
    memoryDb: at("index", "memory.db"),
    history: at("history.git"),
    provenance: at("provenance.jsonl"),
    backups: at("backups"),
    socket: at("gateway.sock"),
    lock: at("gateway.lock"),
    mcpAuth: at("mcp-auth"),
    mcpHome: at("mcp-home"),
    knownHosts: at("known_hosts"),
    sessionFile: (key) => path.join(sessions, `${sessionFileName(key)}.jsonl`),
  };
}

// Session keys are `main`, `dm:telegram:42`, `group:discord:-100:7`, `cron:<id>`: keep them
// readable on disk, and percent-encode anything else (`/`, `.`, `%`…) so that no key can escape
// the folder and two keys never share a file.
function sessionFileName(key: string): string {
  if (key === "") throw new Error("sessionFile: the session key is empty");
  return key.replace(/[^A-Za-z0-9_:-]/gu, (c) =>
    [...Buffer.from(c, "utf8")].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join(""),
  );
}

/** The copy an upgrade keeps of an older config.json (`config.json.v<N>.bak`, `config.json.v<N>-2.bak` beside an older one, config/migrations.ts): it still holds the keys the upgrade moved to .env. */
export const CONFIG_UPGRADE_COPY = /^config\.json\.v\d+(?:-\d+)?\.bak$/u;
