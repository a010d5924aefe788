// `hearth setup`: from nothing to a daemon that answers its owner. Asks for the model provider
// and its key (checked with one free request), then for each chat channel of the registry that
// the owner wants, its bot token (checked with one request, the descriptor's `setup`), finds the
// owner by a handshake ("send /start CODE to @bot now") that must carry a one-time code shown
// here (channels/owner-code.ts), then writes
// config.json (config/setup-config.ts keeps every other setting and comment) and the keys into
// the home's 0600 `.env`. Interactive in a terminal (@clack/prompts, loaded only here);
// `--non-interactive` takes the same answers from flags and the environment, for scripts.
// Nothing is written until every check passed.
import type { ParseArgsOptionsConfig } from "node:util";
import { loadConfig } from "../config/config.ts";
import { parseDuration } from "../fields/config-fields.ts";
import { ENDPOINT_KEY_ENV, type ModelAnswer, type SetupAnswers } from "../config/setup-config.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import { withSecrets } from "../config/secrets.ts";
import { createLogger } from "../process/log.ts";
import { parse, UsageError } from "./args.ts";
import { newOwnerCode } from "../channels/owner-code.ts";
import { CONFIGURABLE } from "../channels/registry.ts";
import type { LinkUi } from "../channels/descriptor.ts";
import { checkModelKey } from "./setup-checks.ts";
import { connectEmailFromFlags, EMAIL_OPTIONS } from "./setup-email.ts";
import type { Io } from "./io.ts";
import { describeSender, ensurePackages, finish, installPm2, nextSteps, OWNER_GREETING } from "./setup-steps.ts";

export { OWNER_GREETING };

/** The chat channels setup can connect, in the registry's order. */
const SETUP_CHANNELS = CONFIGURABLE.filter((c) => c.setup && c.credentials?.[0]);

const OPTIONS = {
  "non-interactive": { type: "boolean" },
  provider: { type: "string" },
  model: { type: "string" },
  "base-url": { type: "string" },
  "handshake-timeout": { type: "string" },
  pm2: { type: "boolean" },
  dashboard: { type: "boolean" },
} as const;

/** The channels linked rather than given a token (Signal, WhatsApp), answered from flags; one without `flags` has a path of its own (email: setup-email.ts). */
const LINK_CHANNELS = CONFIGURABLE.filter((c) => c.linkSetup?.flags);

/**
 * Per channel: --<id> (connect it), --<id>-owner ID (skip the handshake), its API address flag;
 * per linked channel, --<id> and one flag per question of its link (`linkSetup.flags`).
 */
const CHANNEL_OPTIONS: ParseArgsOptionsConfig = Object.fromEntries([
  ...SETUP_CHANNELS.flatMap((c) => [
    [c.id, { type: "boolean" }],
    [`${c.id}-owner`, { type: "string" }],
    [c.setup!.apiFlag, { type: "string" }],
  ]),
  ...LINK_CHANNELS.flatMap((c) => [[c.id, { type: "boolean" }], ...c.linkSetup!.flags!.map((f) => [`${c.id}-${f.name}`, { type: "string" }])]),
]);

const DEFAULT_MODEL = { anthropic: "claude-sonnet-5-5", ollama: "llama3.2" } as const;

type Env = NodeJS.ProcessEnv;

export async function runSetup(home: string, args: string[], io: Io, env: Env = process.env): Promise<number> {
  const { values } = parse(args, { ...OPTIONS, ...CHANNEL_OPTIONS, ...EMAIL_OPTIONS } as typeof OPTIONS);
  const handshakeMs = parseDuration(values["handshake-timeout"] ?? "5m");
  if (!handshakeMs) throw new UsageError(`--handshake-timeout takes a duration such as 5m`);
  // A config.json with a mistake (or from a newer Hearth) is reported as it is: setup edits a
  // file it can read, or none.
  const before = loadConfig({ home, env });
  // The keys and tokens an earlier run put in .env are given already: a run that adds a
  // channel needs only that channel's token.
  env = withSecrets(home, env);
  if (values["non-interactive"]) return await nonInteractive(home, values, handshakeMs, io, env);
  if (!(io.stdin as NodeJS.ReadStream).isTTY) throw new UsageError("setup asks its questions in a terminal; in a script, use --non-interactive with flags (see below)");
  return await (await import("./setup-interactive.ts")).interactiveSetup(home, io, env, {
    handshakeMs,
    apis: Object.fromEntries(SETUP_CHANNELS.map((c) => [c.id, text(values, c.setup!.apiFlag) ?? c.setup!.defaultApi])),
    ...(values["base-url"] ? { baseUrl: values["base-url"] } : {}),
    dashboardEnabled: before.dashboard.enabled,
  });
}

type Values = ReturnType<typeof parse<typeof OPTIONS>>["values"];
/** A flag of the registry's (typed loosely: the registry makes them). */
const flag = (v: Values, name: string): string | boolean | undefined => (v as Record<string, string | boolean | undefined>)[name];
const text = (v: Values, name: string): string | undefined => {
  const f = flag(v, name);
  return typeof f === "string" ? f : undefined;
};
const say = (io: Io, line: string) => io.stdout.write(`${line}\n`);

async function nonInteractive(home: string, v: Values, handshakeMs: number, io: Io, env: Env): Promise<number> {
  const model = modelFromFlags(v, env);
  const wanted = SETUP_CHANNELS.filter((c) => flag(v, c.id) === true).map((c) => ({
    c,
    token: need(env, c.credentials![0]!.variable, `--${c.id}`),
    more: Object.fromEntries(c.credentials!.slice(1).map((k) => [k.variable, need(env, k.variable, `--${c.id}`)])),
  }));
  say(io, `Hearth setup: home ${home}`);
  const answers: SetupAnswers = { model, channels: {}, ...(v.dashboard ? { dashboard: true } : {}) };
  // Messages without the code are told on stderr, one log line each, so stdout stays the story.
  const log = createLogger({ level: "info", sink: { write: (l) => io.stderr.write(l) } });

  const key = await checkModelKey(model);
  if (!key.ok) return fail(io, "model", key.problem);
  say(io, `✓ model: ${key.detail}`);

  for (const { c, token, more } of wanted) {
    const setup = c.setup!;
    const libs = await ensurePackages(home, c, io);
    if (libs) return fail(io, c.id, libs);
    const api = text(v, setup.apiFlag) ?? setup.defaultApi;
    const bot = await setup.checkToken(token, api, more);
    if (!bot.ok) return fail(io, c.id, bot.problem);
    say(io, `✓ ${c.id}: the bot is ${setup.botHandle(bot.botName)}`);
    let ownerId = text(v, `${c.id}-owner`);
    if (!ownerId) {
      let botName = bot.botName;
      const code = newOwnerCode();
      const handshake = await setup.findOwner(token, api, {
        code,
        botName,
        waitMs: handshakeMs,
        greeting: OWNER_GREETING,
        ready: (name) => {
          botName = name;
          say(io, `… ${setup.codeRequest(name, code)} (waiting up to ${text(v, "handshake-timeout") ?? "5m"}).`);
        },
        accept: async () => true,
        ignored: (s) => log.warn("setup.owner_code_missing", { channel: c.id, user: s.id, name: s.name }),
        more,
      });
      switch (handshake.kind) {
        case "failed":
          return fail(io, `${c.id} owner`, handshake.problem);
        case "timeout":
          return fail(io, `${c.id} owner`, `no ${setup.dm} with the code reached ${setup.botHandle(botName)} in time; run setup again, or pass --${c.id}-owner ID`);
        case "owner":
          say(io, `✓ ${c.id} owner: ${describeSender(handshake.sender)}`);
          ownerId = handshake.sender.id;
          break;
        default:
          handshake satisfies never;
      }
    }
    answers.channels[c.id] = { token, ...(Object.keys(more).length ? { more } : {}), ownerId: ownerId!, ...(api !== setup.defaultApi ? { api } : {}) };
  }
  for (const c of LINK_CHANNELS.filter((x) => flag(v, x.id) === true)) {
    const libs = await ensurePackages(home, c, io);
    if (libs) return fail(io, c.id, libs);
    const r = await c.linkSetup!.run(flagUi(v, c.id, io), home, handshakeMs);
    if (!r.ok) return fail(io, c.id, r.problem);
    say(io, `✓ ${r.linked}`);
    (answers.linked ??= {})[c.id] = r.section;
  }
  if (!(await connectEmailFromFlags(home, v, answers, io, env, handshakeMs, text(v, "handshake-timeout") ?? "5m"))) return 1;
  finish(home, answers, io);
  if (v.pm2) return installPm2(home, io);
  for (const line of nextSteps(home, answers, `   (or as a service: ${hearthCmd("setup --non-interactive … --pm2")}, or npx pm2 start ecosystem.config.cjs)`)) say(io, line);
  return 0;
}

/** A link setup's questions answered from `--<id>-<flag>` (else the question's default); what it shows goes to stdout. */
function flagUi(v: Values, id: string, io: Io): LinkUi {
  const given = <T extends string>(message: string, opts: { flag?: string; initialValue?: T } = {}): T => {
    const value = (opts.flag ? text(v, `${id}-${opts.flag}`)?.trim() : undefined) || opts.initialValue;
    if (value === undefined) throw new UsageError(`--${id} needs ${opts.flag ? `--${id}-${opts.flag}` : "an answer it has no flag for"} (${message})`);
    return value as T;
  };
  return {
    ask: async (message, opts) => given(message, opts),
    async choose(message, options, opts) {
      const value = given(message, opts);
      if (!options.some((o) => o.value === value)) throw new UsageError(`--${id}-${opts?.flag} takes ${options.map((o) => o.value).join(" or ")}, not "${value}" (${message})`);
      return value;
    },
    say: (line) => say(io, line),
  };
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
