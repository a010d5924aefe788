// `hearth setup`: from nothing to a daemon that answers its owner. Asks for the model provider
// and its key (checked with one free request), the Telegram and/or Discord bot token (checked
// with getMe / users/@me), finds the owner by a handshake ("send /start to @bot now"; for
// Discord, a direct message to the bot over the gateway, setup-discord.ts) that must carry a
// one-time code shown here (owner-code.ts), then writes
// config.json (config/setup-config.ts keeps every other setting and comment) and the keys into
// the home's 0600 `.env`. Interactive in a terminal (@clack/prompts, loaded only here);
// `--non-interactive` takes the same answers from flags and the environment, for scripts.
// Nothing is written until every check passed.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../config/config.ts";
import { parseDuration } from "../config/fields.ts";
import { homePaths } from "../config/home.ts";
import { ENDPOINT_KEY_ENV, modelName, writeSetup, type ModelAnswer, type SetupAnswers } from "../config/setup-config.ts";
import { hearthCmd } from "../hearth-command.ts";
import { createLogger } from "../log.ts";
import { parse, UsageError } from "./args.ts";
import { newOwnerCode, telegramStartLink } from "./owner-code.ts";
import { awaitTelegramOwner, checkDiscordToken, checkModelKey, checkTelegramToken, greetOwner, type TelegramSender } from "./setup-checks.ts";
import type { Io } from "../cli.ts";

const OPTIONS = {
  "non-interactive": { type: "boolean" },
  provider: { type: "string" },
  model: { type: "string" },
  "base-url": { type: "string" },
  telegram: { type: "boolean" },
  "telegram-api-root": { type: "string" },
  "telegram-owner": { type: "string" },
  "handshake-timeout": { type: "string" },
  discord: { type: "boolean" },
  "discord-api-base": { type: "string" },
  "discord-owner": { type: "string" },
  pm2: { type: "boolean" },
} as const;

const DEFAULT_MODEL = { anthropic: "claude-sonnet-5-5", ollama: "llama3.2" } as const;
export const TELEGRAM_API = "https://api.telegram.org";
export const DISCORD_API = "https://discord.com/api";
export const OWNER_GREETING = "Hearth: you are now this bot's owner. Once Hearth runs, talk to it here.";

type Env = NodeJS.ProcessEnv;

export async function runSetup(home: string, args: string[], io: Io, env: Env = process.env): Promise<number> {
  const { values } = parse(args, OPTIONS);
  const handshakeMs = parseDuration(values["handshake-timeout"] ?? "5m");
  if (!handshakeMs) throw new UsageError(`--handshake-timeout takes a duration such as 5m`);
  // A config.json with a mistake (or from a newer Hearth) is reported as it is: setup edits a
  // file it can read, or none.
  loadConfig({ home, env });
  if (values["non-interactive"]) return await nonInteractive(home, values, handshakeMs, io, env);
  if (!(io.stdin as NodeJS.ReadStream).isTTY) throw new UsageError("setup asks its questions in a terminal; in a script, use --non-interactive with flags (see below)");
  return await (await import("./setup-interactive.ts")).interactiveSetup(home, io, env, {
    handshakeMs,
    telegramApiRoot: values["telegram-api-root"] ?? TELEGRAM_API,
    discordApiBase: values["discord-api-base"] ?? DISCORD_API,
    ...(values["base-url"] ? { baseUrl: values["base-url"] } : {}),
  });
}

type Values = ReturnType<typeof parse<typeof OPTIONS>>["values"];
const say = (io: Io, line: string) => io.stdout.write(`${line}\n`);

async function nonInteractive(home: string, v: Values, handshakeMs: number, io: Io, env: Env): Promise<number> {
  const model = modelFromFlags(v, env);
  const telegramToken = v.telegram ? need(env, "TELEGRAM_BOT_TOKEN", "--telegram") : undefined;
  const discordToken = v.discord ? need(env, "DISCORD_BOT_TOKEN", "--discord") : undefined;
  say(io, `Hearth setup: home ${home}`);
  const answers: SetupAnswers = { model };
  // Messages without the code are told on stderr, one log line each, so stdout stays the story.
  const log = createLogger({ level: "info", sink: { write: (l) => io.stderr.write(l) } });
  const ignored = (channel: string) => (s: { id: string; name: string }) => log.warn("setup.owner_code_missing", { channel, user: s.id, name: s.name });

  const key = await checkModelKey(model);
  if (!key.ok) return fail(io, "model", key.problem);
  say(io, `✓ model: ${key.detail}`);

  if (telegramToken) {
    const apiRoot = v["telegram-api-root"] ?? TELEGRAM_API;
    const bot = await checkTelegramToken(telegramToken, apiRoot);
    if (!bot.ok) return fail(io, "telegram", bot.problem);
    say(io, `✓ telegram: the bot is @${bot.bot.username}`);
    let ownerId = v["telegram-owner"];
    if (!ownerId) {
      const code = newOwnerCode();
      const owner = await awaitTelegramOwner(telegramToken, apiRoot, {
        code,
        signal: AbortSignal.timeout(handshakeMs),
        ready: () => say(io, `… ${telegramCodeRequest(bot.bot.username, code)} (waiting up to ${v["handshake-timeout"] ?? "5m"}).`),
        accept: async () => true,
        ignored: ignored("telegram"),
      });
      if (!owner) return fail(io, "telegram owner", `no private message with the code reached @${bot.bot.username} in time; run setup again, or pass --telegram-owner ID`);
      say(io, `✓ telegram owner: ${describeSender(owner)}`);
      await greetOwner(telegramToken, apiRoot, owner.id, OWNER_GREETING);
      ownerId = owner.id;
    }
    answers.telegram = { token: telegramToken, ownerId, ...(v["telegram-api-root"] ? { apiRoot } : {}) };
  }
  if (discordToken) {
    const apiBase = v["discord-api-base"] ?? DISCORD_API;
    const bot = await checkDiscordToken(discordToken, apiBase);
    if (!bot.ok) return fail(io, "discord", bot.problem);
    say(io, `✓ discord: ${bot.detail}`);
    let ownerId = v["discord-owner"];
    if (!ownerId) {
      const { awaitDiscordOwner } = await import("./setup-discord.ts");
      let botName = "the bot";
      const code = newOwnerCode();
      const handshake = await awaitDiscordOwner(discordToken, apiBase, {
        code,
        waitMs: handshakeMs,
        ready: (name) => {
          botName = name;
          say(io, `… ${discordCodeRequest(name, code)} (waiting up to ${v["handshake-timeout"] ?? "5m"}).`);
        },
        accept: async () => true,
        ignored: ignored("discord"),
        greeting: OWNER_GREETING,
      });
      switch (handshake.kind) {
        case "failed":
          return fail(io, "discord owner", handshake.problem);
        case "timeout":
          return fail(io, "discord owner", `no direct message with the code reached ${botName} in time; run setup again, or pass --discord-owner ID`);
        case "owner":
          say(io, `✓ discord owner: ${describeSender(handshake.sender)}`);
          ownerId = handshake.sender.id;
          break;
        default:
          handshake satisfies never;
      }
    }
    answers.discord = { token: discordToken, ownerId: ownerId!, ...(v["discord-api-base"] ? { apiBase } : {}) };
  }
  finish(home, answers, io);
  if (v.pm2) return installPm2(home, io);
  say(io, `Next: ${hearthCmd("start")}   (or as a service: ${hearthCmd("setup --non-interactive … --pm2")}, or npx pm2 start ecosystem.config.cjs)`);
  return 0;
}

function modelFromFlags(v: Values, env: Env): ModelAnswer {
  const provider = v.provider ?? "anthropic";
  // The daemon reads ANTHROPIC_BASE_URL too: setup checks the key where the daemon will send it.
  const baseUrl = v["base-url"] ?? (provider === "anthropic" ? env.ANTHROPIC_BASE_URL?.trim() || undefined : undefined);
  switch (provider) {
    case "anthropic":
      return { kind: "anthropic", model: v.model ?? DEFAULT_MODEL.anthropic, apiKey: need(env, "ANTHROPIC_API_KEY", "--provider anthropic"), ...(baseUrl ? { baseUrl } : {}) };
    case "openai": {
      if (!baseUrl || !v.model) throw new UsageError("--provider openai needs --base-url URL (where /models is served, often …/v1) and --model NAME");
      const apiKey = env[ENDPOINT_KEY_ENV]?.trim();
      return { kind: "openai", model: v.model, baseUrl, ...(apiKey ? { apiKey } : {}) };
    }
    case "ollama":
      return { kind: "ollama", model: v.model ?? DEFAULT_MODEL.ollama, ...(baseUrl ? { baseUrl } : {}) };
    default:
      throw new UsageError(`--provider is anthropic, openai (any OpenAI-compatible server) or ollama, not "${provider}"`);
  }
}

function need(env: Env, variable: string, flag: string): string {
  const value = env[variable]?.trim();
  if (!value) throw new UsageError(`${flag} takes its key from ${variable}, which is not set (keys never go on the command line, where other users can see them)`);
  return value;
}

function fail(io: Io, what: string, problem: string): number {
  io.stdout.write(`✗ ${what}: ${problem}\nNothing was written.\n`);
  return 1;
}

/** What the owner sends for the Telegram handshake: the code, typed or through the link's Start button. */
export function telegramCodeRequest(botUsername: string, code: string): string {
  return `Send /start ${code} to @${botUsername} in Telegram now, or open ${telegramStartLink(botUsername, code)}; only a private message with this code names the owner`;
}

/** Where the owner writes for the Discord handshake: a bot is reached from a server both are in. */
export function discordCodeRequest(botName: string, code: string): string {
  return `Send a direct message saying ${code} to ${botName} in Discord now (its profile in a server you share → Message); only a message with this code names the owner`;
}

/** A sender as the wizard shows them; the names are printable already (setup-checks.ts, setup-discord.ts). */
export function describeSender(s: TelegramSender): string {
  return `${s.name}${s.username ? ` (@${s.username}, id ${s.id})` : ` (id ${s.id})`}`;
}

/** Writes the answers and says where. */
export function finish(home: string, answers: SetupAnswers, io: Io): void {
  const log = createLogger({ level: "warn", sink: { write: (l) => io.stderr.write(l) } });
  const file = writeSetup(home, answers, log);
  const paths = homePaths(home);
  const keys = answers.telegram || answers.discord || ("apiKey" in answers.model && answers.model.apiKey);
  say(io, `✓ wrote ${file} (model ${modelName(answers.model)})${keys ? `; keys and tokens in ${paths.secrets} (mode 600)` : ""}`);
}

/** Starts the daemon under pm2 with this home, and saves pm2's list so a reboot brings it back. */
export function installPm2(home: string, io: Io): number {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const pm2 = `${root}node_modules/.bin/pm2`;
  const env = { ...process.env, HEARTH_HOME: home };
  for (const args of [["start", "ecosystem.config.cjs"], ["save"]]) {
    const r = spawnSync(pm2, args, { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] });
    if (r.status !== 0) {
      io.stdout.write(`✗ pm2 ${args.join(" ")} failed; run it yourself in ${root}: npx pm2 ${args.join(" ")}\n`);
      return 1;
    }
  }
  say(io, "✓ Hearth runs under pm2 (npx pm2 startup makes pm2 itself start at boot).");
  return 0;
}
