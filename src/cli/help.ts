// What `hearth help` and `--help` print, per command: a usage error shows only the usage of the
// command that was mistyped.
import { createRequire } from "node:module";
import { hearthCommand } from "../process/hearth-command.ts";

export type CommandName = "setup" | "start" | "stop" | "restart" | "logs" | "completion" | "chat" | "status" | "usage" | "doctor" | "init" | "cron" | "heartbeat" | "skills" | "mcp" | "pairing" | "people" | "grants" | "tasks" | "dashboard" | "backup" | "memory" | "hosts" | "service";

/** In the order `hearth help` lists them. Known without loading anything: every command checks its name. */
export const COMMANDS: readonly CommandName[] = ["setup", "start", "stop", "restart", "logs", "completion", "chat", "status", "usage", "doctor", "init", "cron", "heartbeat", "skills", "mcp", "pairing", "people", "grants", "tasks", "dashboard", "backup", "memory", "hosts", "service"];

/**
 * The chat channels' parts of the usage, from the registry: a new platform shows up here by itself.
 * Loaded only when a usage is printed (the registry brings every platform's config schema), so
 * `hearth status` and the other thin commands stay as small as they were.
 */
function channelParts() {
  const { CONFIGURABLE } = createRequire(import.meta.url)("../channels/registry.ts") as typeof import("../channels/registry.ts");
  const setup = CONFIGURABLE.filter((c) => c.setup);
  return {
    names: setup.map((c) => c.name).join("/"),
    apiFlags: setup.map((c) => `[--${c.setup!.apiFlag} URL]`).join(" "),
    channelFlags: [
      ...setup.map((c) => `[--${c.id} [--${c.id}-owner ID] [--${c.setup!.apiFlag} URL]]`),
      ...CONFIGURABLE.filter((c) => c.linkSetup?.flags).map((c) => `[--${c.id} ${c.linkSetup!.flags!.map((f) => `[--${c.id}-${f.name} ${f.value}]`).join(" ")}]`),
    ].join(" "),
    tokenVars: CONFIGURABLE.flatMap((c) => (c.credentials ?? []).map((k) => k.variable)).join(", "),
    peopleFlags: `(${CONFIGURABLE.map((c) => `--${c.id} ID`).join("|")})…`,
    deliverForms: CONFIGURABLE.filter((c) => c.chats).map((c) => `${c.id}:${c.chats!.label}`).join("|"),
  };
}

let lines: Record<CommandName, string[]> | undefined;

/** Every command's usage lines (made once, on first use). */
function usageLines(): Record<CommandName, string[]> {
  if (lines) return lines;
  const { peopleFlags: CHANNEL_IDS_FLAG, names: CHANNEL_NAMES, apiFlags: API_FLAGS, channelFlags: CHANNEL_FLAGS, tokenVars: TOKEN_VARS, deliverForms: DELIVER_FORMS } = channelParts();
  lines = {
    setup: [
      `setup                        a wizard: model and key, ${CHANNEL_NAMES} bot, your owner id (checked as it goes)`,
      `      [--base-url URL] ${API_FLAGS}   other addresses (a proxy, a Bot API server)`,
      "setup --non-interactive [--provider anthropic|openai|ollama] [--model NAME] [--base-url URL]",
      `      ${CHANNEL_FLAGS}`,
      "      [--email --email-address ADDRESS (--email-provider NAME | --email-imap HOST:PORT --email-smtp HOST:PORT)]",
      "      [--handshake-timeout 5m] [--dashboard] [--pm2]",
      "                             the same from flags; keys from ANTHROPIC_API_KEY, HEARTH_ENDPOINT_API_KEY,",
      `                             ${TOKEN_VARS} (the environment, else the home's .env); without --…-owner, the owner is whoever`,
      "                             sends the bot, in private, the one-time code setup shows (within --handshake-timeout);",
      "                             a linked device (Signal, WhatsApp) prints its QR code or pairing code and waits as long",
      "                             for the phone; its --…-owner is your own number",
    ],
    start: ["start                        run the gateway in the foreground (pm2 and systemd run this); when pm2 or the", "                             systemd unit has Hearth, start it through that instead"],
    stop: ["stop                         stop the daemon through whatever runs it (pm2, the systemd unit or none), waiting", "                             for a clean shutdown"],
    restart: ["restart                      restart (or start) it through pm2 or the systemd unit; without either, in the", "                             background with its log in <home>/logs/"],
    logs: ["logs [-f] [-n LINES] [--json] the daemon's log (<home>/logs/, however it was started), readable; -f follows it"],
    completion: ["completion bash|zsh|fish     a shell completion script, e.g.  source <(hearth completion bash)"],
    chat: [
      "chat                         talk with Hearth in this terminal (your main session)",
      'chat -m "TEXT"               send one message; the reply streams to stdout',
      "chat -m TEXT --attach FILE   attach a picture, PDF, text file or voice note (repeatable; /attach PATH in chat)",
    ],
    status: ["status [--json]              channels, sessions, active runs, queues, today's spending"],
    usage: [
      "usage [--by day|session|sender|purpose|kind] [--since 7d] [--json]",
      "                             paid calls (models, transcriptions, web) and their cost, from usage.jsonl (default: last 30 days, by day)",
    ],
    doctor: [
      "doctor [--online]            check the setup; one line per check, with a fix for each problem",
      "doctor --fix                 first repair what can be repaired (modes, a stale lock, damaged state set aside,",
      "                             missing workspace files, an old config migrated) and say what was done",
    ],
    init: ["init                         create the home folder, a commented config.json and the workspace"],
    cron: [
      "cron list [--json]           scheduled jobs with their next and last run",
      'cron add --name N (--cron "EXPR" [--tz ZONE] | --every 30m | --at ISO) --message "TEXT"',
      `         [--session main|isolated] [--deliver origin|owner|none|${DELIVER_FORMS}]`,
      "         [--catch-up 1h] [--task]",
      "cron rm ID                   delete a job",
      "cron run ID                  run a job now (needs the daemon)",
    ],
    skills: [
      "skills                       workspace skills: scope, description, problems",
      "skills add PATH|GIT_URL [--yes]  show a skill folder's SKILL.md and scripts, then add it",
    ],
    mcp: ["mcp                          MCP servers: state, tool count, last error", "mcp tools NAME               the tools one MCP server offers",
      "mcp login NAME [--no-browser] log in to an OAuth-protected MCP server",
      "mcp logout NAME              forget an MCP server's tokens",
      "mcp call NAME TOOL [JSON]    call one tool of an MCP server and print its result"],
    hosts: [
      "hosts                        SSH hosts of tools.exec.hosts: reachable, latency, host key",
      "hosts trust NAME [--yes]     show a host's key, then record it in known_hosts",
    ],
    service: [
      "service install              write and enable a systemd user unit that runs Hearth (no pm2)",
      "service uninstall            stop, disable and remove that unit",
    ],
    heartbeat: ["heartbeat --now              run one heartbeat now and print what it would send (nothing is sent)"],
    tasks: ["tasks [ID] [--json]          background tasks, running and recent; one with its progress and result", "tasks cancel ID              stop a background task (needs the daemon)"],
    dashboard: [
      "dashboard [--url]            a one-time login link to the web dashboard (opened in a browser when there is one; --url: print only)",
      "dashboard --rotate           end every dashboard session and unused login link",
    ],
    pairing: [
      "pairing list                 pending pairing codes and approved senders",
      "pairing approve CODE         let the person who got CODE talk to Hearth",
      "pairing revoke CHANNEL:USERID",
    ],
    people: [
      "people list [--json]         the household: each person's accounts, daily budget and tools",
      `people add NAME ${CHANNEL_IDS_FLAG} [--budget USD] [--allow web,exec,files,mcp:SERVER]`,
      "                             a person whose private chats (every account given) are one conversation of",
      "                             their own, with their memory in people/NAME/ (default: memory and chat tools only)",
      `people link|unlink NAME ${CHANNEL_IDS_FLAG}`,
      "                             give them another account, or take one back",
      "people set NAME [--budget USD|none] [--allow LIST|none]",
      "people remove NAME [--delete-files]  take them out of the household (their files stay unless --delete-files)",
    ],
    grants: [
      "grants                       what you allowed for a while or always, numbered",
      "grants revoke N              take grant N back: its commands are asked about again",
      "grants --log                 the last 50 approval decisions (approvals.jsonl)",
    ],
    backup: [
      "backup create [--out FILE] [--include-secrets]",
      "                             one compressed archive of the home with a manifest, in <home>/backups/ (secrets left out unless asked)",
      "backup verify FILE           check every file of an archive against its manifest",
      "backup restore FILE [--home DIR] [--force]",
      "                             restore into an empty home (--force moves a non-empty one aside first)",
    ],
    memory: [
      "memory log [FILE]            the history of the workspace's markdown files: who changed what, when",
      "memory diff [REV]            what REV changed (default: changes not yet recorded)",
      "memory restore FILE --at REV put FILE back as it was at REV",
    ],
  };
  return lines;
}

export const isCommandName = (s: string | undefined): s is CommandName => s !== undefined && (COMMANDS as readonly string[]).includes(s);

/**
 * The words that may follow a command, read off its usage lines: `cron list`, `mcp login NAME`,
 * `completion bash|zsh|fish` (a placeholder in capitals, an option or a bracket is not one).
 */
export function subcommandsOf(name: CommandName): string[] {
  const words = new Set<string>();
  for (const line of usageLines()[name]) {
    const m = new RegExp(`^${name} ([a-z][a-z|-]*)(\\s|$)`).exec(line);
    if (m) for (const w of m[1]!.split("|")) words.add(w);
  }
  return [...words];
}

/** The usage of one command. */
export function commandUsage(name: CommandName): string {
  const cmd = hearthCommand();
  return `Usage:\n${usageLines()[name].map((l) => `  ${/^\s/.test(l) ? " ".repeat(cmd.length + 1) : `${cmd} `}${l}`).join("\n")}\n`;
}

/** Everything: `hearth`, `hearth help`, `hearth --help`. */
export function fullUsage(): string {
  const cmd = hearthCommand();
  const usage = COMMANDS.flatMap((c) => usageLines()[c]).map((l) => `  ${l}`);
  const { tokenVars } = channelParts();
  return `Usage: ${cmd} <command> [options]

Commands:
${usage.join("\n")}
  help [COMMAND]               this text, or the usage of one command (also: COMMAND --help)
  --version                    the version of Hearth

Environment:
  HEARTH_HOME          the home folder (default ~/.hearth)
  ANTHROPIC_API_KEY    the model API key (setup keeps it in <home>/.env)
  ANTHROPIC_BASE_URL   another Messages API endpoint (a proxy)
  ${tokenVars}   channel tokens
  HEARTH_LOG           log level: debug, info, warn or error
`;
}

/**
 * The command a mistyped word most likely meant ("stauts" → "status"): the nearest by edit
 * distance (a swap of two neighbours counts once), if at most 2 edits away and closer than any
 * other; null otherwise.
 */
export function closestCommand(word: string): CommandName | null {
  const scored = COMMANDS.map((c) => ({ c, d: editDistance(word.toLowerCase(), c) })).sort((a, b) => a.d - b.d);
  const [best, next] = scored;
  if (!best || best.d > Math.min(2, Math.floor(best.c.length / 2))) return null;
  return next && next.d === best.d ? null : best.c;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
