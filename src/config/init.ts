// Creating the home folder: `hearth init` (verbose, writes a commented config) and `ensureHome`
// at daemon start (silent, fills gaps). Neither ever overwrites a file: the owner's edits win.
import { CONFIGURABLE } from "../channels/registry.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import { constants, copyFileSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { loadConfig } from "./config.ts";
import { systemTimeZone } from "../fields/config-fields.ts";
import { homePaths } from "./home.ts";
import { CONFIG_VERSION } from "./migrations.ts";
import { SCHEMA_FILE } from "./reference-files.ts";

/**
 * The installed package's config.schema.json as a file URL, which config.json's `"$schema"` names:
 * the home is elsewhere than the package, so a relative path would not resolve, and editors (VS
 * Code among them) accept a file URL.
 */
export const configSchemaUrl = (): string => pathToFileURL(fileURLToPath(new URL(`../../${SCHEMA_FILE}`, import.meta.url))).href;

/** The repo's template workspace, copied into new homes. */
const templateDir = fileURLToPath(new URL("../../workspace/", import.meta.url));

export interface InitResult {
  /** Absolute paths of the folders and files that were created. */
  created: string[];
  /** Absolute paths of the files that already existed and were left alone. */
  kept: string[];
}

/**
 * `hearth init`: creates the home, a commented config.json, the data folders and the workspace
 * (the one config.json names, if it already exists and is valid). Safe to run again.
 */
export function initHome(home: string): InitResult {
  const paths = homePaths(home);
  const result: InitResult = { created: [], kept: [] };
  makeDir(home, result.created);
  if (writeNewFile(paths.config, configTemplate(), 0o600)) result.created.push(paths.config);
  else result.kept.push(paths.config);
  for (const dir of [paths.sessions, paths.cron, paths.index]) makeDir(dir, result.created);
  copyWorkspaceTemplate(configuredWorkspace(home), result);
  return result;
}

/**
 * At daemon start: creates missing folders and copies missing workspace template files (a file
 * the owner deleted comes back; an edited one is never touched). Returns what it created.
 */
export function ensureHome(home: string, opts: { workspace?: string } = {}): string[] {
  const paths = homePaths(home);
  const result: InitResult = { created: [], kept: [] };
  for (const dir of [home, paths.sessions, paths.cron, paths.index]) makeDir(dir, result.created);
  copyWorkspaceTemplate(opts.workspace ?? paths.workspace, result);
  return result.created;
}

// The home holds private data (transcripts, memory, maybe tokens): owner-only by default.
function makeDir(dir: string, created: string[]): void {
  const first = mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (first !== undefined) created.push(dir);
}

/** Writes `text` only if `file` does not exist (atomically: no race with a concurrent writer). */
function writeNewFile(file: string, text: string, mode?: number): boolean {
  try {
    writeFileSync(file, text, { flag: "wx", mode });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
}

function copyWorkspaceTemplate(workspace: string, result: InitResult): void {
  makeDir(workspace, result.created);
  for (const rel of templateFiles()) {
    const dest = path.join(workspace, rel);
    makeDir(path.dirname(dest), result.created);
    try {
      copyFileSync(path.join(templateDir, rel), dest, constants.COPYFILE_EXCL);
      result.created.push(dest);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      result.kept.push(dest);
    }
  }
}

function templateFiles(): string[] {
  try {
    return readdirSync(templateDir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(templateDir, path.join(entry.parentPath, entry.name)))
      .sort();
  } catch (err) {
    throw new Error(
      `The workspace template folder ${templateDir} cannot be read (${(err as Error).message}); reinstall Hearth.`,
    );
  }
}

// An existing config may point the workspace elsewhere; a broken one is the CLI's to report.
function configuredWorkspace(home: string): string {
  try {
    return loadConfig({ home }).workspace;
  } catch {
    return homePaths(home).workspace;
  }
}

/**
 * The config.json that `hearth init` writes: every key at its default with a one-line note.
 * It must validate to exactly the defaults (a test holds it to that).
 */
/** Each configurable channel's block from its descriptor, commented out. */
function channelTemplates(): string {
  return CONFIGURABLE.map((c, i) => {
    const body = c.config.template.split("\n").map((l) => `    //   ${l}`);
    return [`    // "${c.id}": {`, ...body, `    // }${i < CONFIGURABLE.length - 1 ? "," : ""}`].join("\n");
  }).join("\n");
}

export function configTemplate(): string {
  return `// Hearth configuration: JSON with comments (trailing commas are fine too).
// Every key is optional; the values below are the defaults, so a line you delete changes nothing.
// Keep secrets out of this file: \`${hearthCmd("setup")}\` puts keys and tokens in .env beside it
// (mode 600). ANTHROPIC_API_KEY, TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN, EMAIL_PASSWORD (and
// ANTHROPIC_BASE_URL), set there or in the environment, win over the values here.
// Check your changes with \`${hearthCmd("doctor")}\`; they take effect when the daemon restarts.
{
  // What editors check and complete this file against (Hearth itself ignores the key).
  "$schema": ${JSON.stringify(configSchemaUrl())},

  // The configuration's version: Hearth migrates an older file when it starts (see CHANGELOG.md).
  "version": ${CONFIG_VERSION},

  // Your files: SOUL.md, USER.md, MEMORY.md, memory/… A relative path is inside this folder.
  "workspace": "workspace",

  // IANA time zone for daily logs, schedules and active hours. Default: this machine's
  // (now "${systemTimeZone()}").
  // "timezone": "Europe/Berlin",

  "model": {
    // "apiKey": "<your Anthropic API key>",  // or set ANTHROPIC_API_KEY
    // "baseUrl": "https://proxy.example",    // or set ANTHROPIC_BASE_URL (a proxy or gateway)
    "name": "claude-sonnet-5-5",              // the model that answers; a bare name is Anthropic's
    "fallbacks": [],                          // models (of any provider) tried in order when it keeps failing
    "maxTokens": 8192,                        // longest answer per model call, in tokens
    "contextWindow": 200000,                  // the model's window; older turns are summarised near it
    "idleTimeoutMs": 60000                    // a silent model stream is retried once after this, then you are told
  },

  // Other models are named "<provider>/<model>": ollama/llama3.2 (local, no key),
  // openrouter/meta-llama/llama-3.3-70b-instruct (OPENROUTER_API_KEY), groq/… (GROQ_API_KEY),
  // openai/… (OPENAI_API_KEY), lmstudio/… and vllm/…. Any other OpenAI-compatible server:
  // "providers": {
  //   "lab": { "type": "openai", "baseUrl": "http://10.0.0.5:8080/v1", "apiKeyEnv": "LAB_KEY",
  //            "models": { "qwen3": { "contextWindow": 32768, "maxTokens": 4096, "tools": true } } }
  // },

  "agent": {
    "maxTurns": 25,                           // model calls per run before it stops (hard cap 100)
    "maxConcurrentRuns": 4,                   // runs at once across all chats
    "queueMode": "steer",                     // a message during a run: steer | followup | collect | interrupt
    "shutdownGraceMs": 10000,                 // on shutdown, how long running answers may finish
    "releaseIdleAfter": "30m",                // a chat idle this long is unloaded from memory ("0": kept)
    "maxSessionsInMemory": 500                // at most this many chats in memory; the least recent go first
  },

  "tools": {
    "exec": {
      "timeoutMs": 120000,                    // a shell command is killed after this long
      "sandbox": "auto",                      // auto (bubblewrap + socat; without them exec refuses) | bwrap (required to start) | off (unconfined)
      // "hosts": { "nas": { "type": "ssh", "host": "nas.lan", "user": "me", "identityFile": "~/.ssh/id_ed25519" } },
      //   other machines exec may run on over SSH (your chats only); trust each: hearth hosts trust nas
      "network": true                         // true: through Hearth's egress proxy (see "egress"); false: none at all
    },
    "shared": { "allow": [] },                // extra tools for groups and other people's DMs (names)
    "web": {                                  // web search and page reading, in your own chats
      // server: the provider's tool; local: "provider" brave (BRAVE_API_KEY) | searxng ("baseUrl").
      // allowedDomains / blockedDomains: only these domains, or never these (one of the two).
      "search": { "enabled": true, "mode": "server", "maxUses": 5, "provider": "brave", "allowedDomains": [], "blockedDomains": [],
        // "pricing": { "perThousandUsd": 5 },   // local search's price (default Brave's list price; SearXNG free)
      },
      // local: Hearth fetches (through "egress"); time, bytes and characters per page.
      "fetch": { "enabled": true, "mode": "server", "maxUses": 10, "allowedDomains": [], "blockedDomains": [],
                 "timeoutMs": 20000, "maxBytes": 5000000, "maxChars": 100000 }
    }
  },

  // Where commands, local web_fetch and MCP servers may connect. Hosts: "example.com", "*.example.com",
  // an address, each with an optional ":port".
  "egress": {
    "allow": [],                              // always allowed, no question
    "deny": [],                               // always refused
    "allowPrivate": [],                       // LAN/loopback hosts that may be reached, e.g. "nas.local", "127.0.0.1"
    "own": [],                                // your own services: what they answer does not count as outside content
    "ask": "tainted"                          // tainted: a conversation that read outside content asks per new host | always | never
  },

  // Chat channels. To turn one on, remove the // in front of its lines and replace the <…>
  // (\`${hearthCmd("setup")}\` does it for you). Your user id: ${CONFIGURABLE.map((c) => `${c.name}: ${c.ownerIdHint}`).join("; ")}.
  // Ids may be numbers or strings (ids longer than 15 digits: strings).
  "channels": {
${channelTemplates()}
  },

  // MCP servers: their tools are offered as mcp__<server>__<tool>. Your private chats only,
  // unless "scope": "shared". See docs/extensions.md.
  "mcp": {
    "servers": {
      // "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
      //             "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "\${GITHUB_TOKEN}" },
      //             "sandbox": true },  // in the exec sandbox, behind the egress proxy; false: unconfined
      // "notes": { "url": "http://127.0.0.1:8808/mcp", "headers": { "Authorization": "Bearer \${NOTES_TOKEN}" },
      //            "enabled": true, "scope": "main", "timeoutMs": 60000, "tools": { "deny": [] },
      //            "trust": ["search_notes"] },  // tools an answer that read a web page may call unasked ("*": all)
      // A hosted server that needs a login: \`${hearthCmd("mcp login linear")}\` once, then it connects by itself.
      // "linear": { "url": "https://mcp.linear.app/mcp", "auth": { "type": "oauth" },
      //             "answerTimeoutMs": 300000,  // how long you have to answer a server's question
      //             "roots": "workspace" }      // "none": offer the server no folder
    }
  },

  "heartbeat": {
    "every": "30m",                           // how often to go through HEARTBEAT.md; "0" turns it off
    "activeHours": { "start": "08:00", "end": "22:00" }, // only between these times, in "timezone"
    // "model": "claude-haiku-4-5",           // it runs often: default a Haiku with Anthropic, else your main model
    "maxTokens": 1024,                        // longest heartbeat answer
    "pauseAfterIdle": "7d",                   // pause after this long without a message from you ("0": never)
    "tools": []                               // tools it may use, e.g. ["memory_search"]; each costs tokens every tick
  },

  // Scheduled jobs and the heartbeat: an answer meant for the terminal while no \`${hearthCmd("chat")}\`
  // is open waits there for the next one, unless "fallback" names a chat channel to send it to.
  // "cron": { "fallback": "telegram" },

  // Asking you (with buttons in your chat) before the assistant acts: "risky" asks before the
  // built-in list (rm -r, git push --force, installs, sudo…) and, once an answer read outside
  // content, before it reaches the network or sends data out; "always" every command; "off" never.
  "approvals": {
    "exec": "risky",
    "timeoutSeconds": 300,                    // unanswered this long counts as Deny
    "grantMinutes": 30,                       // how long "Allow for 30 min" lasts
    "ask": [],                                // command patterns always asked about, e.g. ["make deploy*"]
    "allow": []                               // command patterns never asked about
  },

  // Background tasks (spawn_task, \`hearth cron add --task\`): a separate agent works while you keep
  // talking, and its result comes back to your chat once. See docs/automation.md.
  "tasks": {
    "maxConcurrent": 3,                       // tasks at work at once; more wait for a free slot
    "maxMinutes": 30,                         // a task running longer is stopped and says so
    "maxCostUsd": 1,                          // a task whose model calls cost more is stopped and says so
    // "model": "claude-haiku-4-5",           // the tasks' model; default the main model
    "maxDepth": 1                             // 1: only your conversations start tasks; 2: tasks may start one more level
  },

  // Spending limits in US dollars (unset = no limit); \`hearth usage\` shows what was spent.
  // At 80 % you are told once; at 100 % groups, paired people, the heartbeat and scheduled jobs
  // stop until the next day (or month); your own messages still run, marked "over budget".
  // "budget": {
  //   "daily": 5,
  //   "monthly": 60,
  //   "hardStop": false,                     // true: at 100 % your own messages stop too (/budget raise 5 lifts it for today)
  //   "shared": { "daily": 1 }               // groups and paired people together; default a fifth of "daily"
  // },

  // Prices in USD per million tokens, by model id or id prefix, over the built-in list prices.
  // "pricing": { "my-proxy-model": { "input": 3, "output": 15, "cacheWrite5m": 3.75, "cacheWrite1h": 6, "cacheRead": 0.3 } },

  // "compaction": { "model": "claude-haiku-4-5" }, // summaries and the memory flush; default the main model

  // The web dashboard on this machine: \`${hearthCmd("dashboard")}\` prints a one-time login link.
  // "dashboard": {
  //   "enabled": true,
  //   "host": "127.0.0.1",                   // anything but loopback also needs "allowRemote": true
  //   "port": 7420,                          // 0: any free port (\`${hearthCmd("status")}\` says which)
  //   "allowRemote": false
  // },

  // Scheduled backups of this folder (secrets left out); \`${hearthCmd("backup restore FILE")}\` brings one back.
  // "backup": { "every": "1d", "keep": 7, "dir": "backups" },
  // Hybrid recall: memory_search by meaning too (docs/memory.md shows Ollama's nomic-embed-text).
  // "memory": { "embeddings": { "baseUrl": "https://api.openai.com/v1", "model": "text-embedding-3-small", "apiKeyEnv": "OPENAI_API_KEY",
  //   "pricing": { "perMillionTokensUsd": 0.02 } } },

  // Photos, documents and voice notes.
  "media": {
    // Voice notes → text (key: HEARTH_TRANSCRIPTION_API_KEY); docs/media.md lists Groq and local servers.
    // "transcription": { "baseUrl": "https://api.openai.com/v1", "model": "gpt-4o-transcribe",
    //   "pricing": { "perMinuteUsd": 0.006 } },   // a minute's price, when the built-in list does not know it
    "maxBytes": 20971520,                     // the largest attachment downloaded (20 MB, Telegram's limit)
    "keepTurns": 3                            // pictures stay in view for a group of this many of your messages
  },

  // Spoken replies: answers also as audio (a Telegram voice message, a Discord attachment).
  // "voice": {
  //   "tts": { "baseUrl": "https://api.openai.com/v1", "apiKeyEnv": "OPENAI_API_KEY", "model": "gpt-4o-mini-tts", "voice": "alloy",
  //     "pricing": { "perMillionCharsUsd": 15 } },  // what a million spoken characters cost (a local server: 0)
  //   "reply": "auto"                        // auto: answer a voice note with a voice note | always | never
  // },

  "log": { "level": "info" }                  // debug | info | warn | error (or set HEARTH_LOG)
}
`;
}
