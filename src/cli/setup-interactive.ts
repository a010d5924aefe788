// The terminal side of `hearth setup`: the same answers as the flags, asked with @clack/prompts.
// A check that fails asks again; Ctrl+C at any prompt ends setup with nothing written.
import * as p from "@clack/prompts";
import type { Readable, Writable } from "node:stream";
import { ENDPOINT_KEY_ENV, type ModelAnswer, type SetupAnswers } from "../config/setup-config.ts";
import { homePaths } from "../config/home.ts";
import { liveHolder } from "../gateway/upkeep/lock.ts";
import type { Io } from "./io.ts";
import { newOwnerCode } from "../channels/owner-code.ts";
import { CONFIGURABLE } from "../channels/registry.ts";
import { checkModelKey } from "./setup-checks.ts";
import { describeSender, ensurePackages, finish, installPm2, nextSteps, OWNER_GREETING } from "./setup-steps.ts";

class Cancelled extends Error {}

/** Where the wizard talks to: the public services unless flags named others (a proxy, a self-hosted Bot API server). */
export interface Endpoints {
  handshakeMs: number;
  /** Each channel's API address, by channel id (its default unless a flag named another). */
  apis: Record<string, string>;
  /** The model provider's address, for Anthropic (a proxy) and as the default for the others. */
  baseUrl?: string;
  /** config.json has the dashboard on already (then setup does not offer it). */
  dashboardEnabled?: boolean;
}

export async function interactiveSetup(home: string, io: Io, env: NodeJS.ProcessEnv, at: Endpoints): Promise<number> {
  const streams = { input: io.stdin as Readable, output: io.stdout as Writable };
  const answer = <T>(v: T): Exclude<T, symbol> => {
    if (p.isCancel(v)) throw new Cancelled();
    return v as Exclude<T, symbol>;
  };
  const ask = async (message: string, opts: { placeholder?: string; initialValue?: string; secret?: boolean } = {}) =>
    answer(opts.secret ? await p.password({ message, ...streams }) : await p.text({ message, ...streams, ...(opts.placeholder ? { placeholder: opts.placeholder } : {}), ...(opts.initialValue ? { initialValue: opts.initialValue } : {}) })).trim();
  const yes = async (message: string, initialValue = true) => answer(await p.confirm({ message, initialValue, ...streams }));

  try {
    p.intro(`Hearth setup — home ${home}`, streams);
    const answers: SetupAnswers = { model: await askModel(), channels: {} };

    for (const c of CONFIGURABLE) {
      const setup = c.setup;
      if (!setup || !(await yes(setup.offer, setup.offerDefault))) continue;
      const api = at.apis[c.id] ?? setup.defaultApi;
      const libs = await ensurePackages(home, c, io);
      if (libs) {
        p.log.error(libs, streams);
        continue;
      }
      if (setup.steps) p.note(setup.steps, `${c.name}: first, in ${c.name}`, streams);
      for (;;) {
        const token = await ask(setup.tokenPrompt, { secret: true });
        const more: Record<string, string> = {};
        for (const k of c.credentials?.slice(1) ?? []) more[k.variable] = await ask(`${c.name} ${k.variable} (${k.source})`, { secret: true });
        const bot = await setup.checkToken(token, api, more);
        if (!bot.ok) {
          p.log.error(bot.problem, streams);
          continue;
        }
        p.log.success(`The bot is ${setup.botHandle(bot.botName)}`, streams);
        const spin = p.spinner(streams);
        spin.start(`Connecting to ${c.name}`);
        const code = newOwnerCode();
        let botName = bot.botName;
        const handshake = await setup.findOwner(token, api, {
          code,
          botName,
          waitMs: at.handshakeMs,
          greeting: OWNER_GREETING,
          ready: (name) => spin.message(setup.codeRequest((botName = name), code)),
          accept: async (s) => {
            spin.stop(`A ${setup.dm} with the code from ${describeSender(s)}`);
            const mine = await yes("Is this you (the owner)?");
            if (!mine) spin.start(`Waiting for the owner's ${setup.dm} with the code ${code}`);
            return mine;
          },
          ignored: (s) => spin.message(`Ignored a ${setup.dm} without the code from ${describeSender(s)}; waiting for one saying ${code} to ${setup.botHandle(botName)}`),
          more,
        });
        if (handshake.kind !== "owner") {
          spin.error(handshake.kind === "timeout" ? `No ${setup.dm} with the code arrived in time.` : handshake.problem);
          continue;
        }
        answers.channels[c.id] = { token, ...(Object.keys(more).length ? { more } : {}), ownerId: handshake.sender.id, ...(api !== setup.defaultApi ? { api } : {}) };
        break;
      }
    }

    for (const c of CONFIGURABLE) {
      const link = c.linkSetup;
      if (!link || !(await yes(link.offer, link.offerDefault))) continue;
      const libs = await ensurePackages(home, c, io);
      if (libs) {
        p.log.error(libs, streams);
        continue;
      }
      const ui = {
        ask: (message: string, { initialValue, placeholder, secret }: { initialValue?: string; placeholder?: string; secret?: boolean } = {}) =>
          ask(message, { ...(initialValue !== undefined ? { initialValue } : {}), ...(placeholder !== undefined ? { placeholder } : {}), ...(secret ? { secret } : {}) }),
        choose: async <T extends string>(message: string, options: Array<{ value: T; label: string }>, { initialValue }: { initialValue?: T } = {}) =>
          answer(await p.select<T>({ message, options: options as never, ...(initialValue !== undefined ? { initialValue } : {}), ...streams })) as T,
        say: (text: string) => p.log.message(text, streams),
      };
      for (;;) {
        const r = await link.run(ui, home, at.handshakeMs);
        if (r.ok) {
          p.log.success(r.linked, streams);
          (answers.linked ??= {})[c.id] = r.section;
          if (r.secrets) Object.assign((answers.secrets ??= {}), r.secrets);
          break;
        }
        p.log.error(r.problem, streams);
        if (!(await yes(`Try ${c.name} again?`))) break;
      }
    }

    if (!at.dashboardEnabled && (await yes("Turn on the web dashboard (a page on this machine only: chats, memory, schedule, approvals, logs)?", false))) answers.dashboard = true;

    finish(home, answers, io);
    const running = liveHolder(homePaths(home).lock);
    if (!running && (await yes("Run Hearth as a service with pm2 now (restarts on crash and at boot)?", false))) {
      const code = installPm2(home, io);
      if (code === 0 && answers.dashboard) p.outro(nextSteps(home, answers).at(-1)!, streams);
      return code;
    }
    p.outro(nextSteps(home, answers).join("\n").replace(/^Next: /, "Start it with: "), streams);
    return 0;
  } catch (err) {
    if (!(err instanceof Cancelled)) throw err;
    p.cancel("Setup cancelled; nothing was written.", streams);
    return 1;
  }

  async function askModel(): Promise<ModelAnswer> {
    const kind = answer(
      await p.select({
        message: "Which model provider?",
        options: [
          { value: "anthropic" as const, label: "Anthropic (Claude)" },
          { value: "openai" as const, label: "An OpenAI-compatible endpoint (OpenRouter, vLLM, LM Studio, …)" },
          { value: "ollama" as const, label: "A local Ollama" },
        ],
        ...streams,
      }),
    );
    let m: ModelAnswer | undefined;
    let unlisted = false;
    for (;;) {
      if (m && unlisted) {
        // The key and the address were accepted: only the model is asked again.
        m = { ...m, model: await ask("Model (one of those listed)") };
      } else if (kind === "anthropic") {
        const apiKey = env.ANTHROPIC_API_KEY?.trim() || (await ask("Anthropic API key (Console → Settings → API keys)", { secret: true }));
        // The daemon reads ANTHROPIC_BASE_URL too: the key is checked where it will be sent.
        const baseUrl = at.baseUrl ?? (env.ANTHROPIC_BASE_URL?.trim() || undefined);
        m = { kind, model: await ask("Model", { initialValue: "claude-sonnet-5-5" }), apiKey, ...(baseUrl ? { baseUrl } : {}) };
      } else if (kind === "openai") {
        const baseUrl = await ask("Endpoint address (where /models is served)", at.baseUrl ? { initialValue: at.baseUrl } : { placeholder: "http://127.0.0.1:8000/v1" });
        const apiKey = env[ENDPOINT_KEY_ENV]?.trim() || (await ask("API key (empty if none)", { secret: true }));
        m = { kind, model: await ask("Model"), baseUrl, ...(apiKey ? { apiKey } : {}) };
      } else {
        m = { kind, model: await ask("Model", { initialValue: "llama3.2" }), baseUrl: await ask("Ollama address", { initialValue: at.baseUrl ?? "http://127.0.0.1:11434/v1" }) };
      }
      const spin = p.spinner(streams);
      spin.start("Checking the key");
      const r = await checkModelKey(m);
      if (r.ok) {
        spin.stop(r.detail);
        return m;
      }
      spin.error(r.problem);
      unlisted = "unlisted" in r;
    }
  }
}
