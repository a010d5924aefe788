// What a home's own files (config.json and .env, not the shell's environment) lack for Hearth to
// run as configured: the model's key, the bot tokens of the channels it names. A restore without
// --include-secrets says this, so that the owner learns before the start that the bot would be
// silent, and what brings it back.
import { CONFIGURABLE, channelSection } from "../channels/registry.ts";
import { assertModelCredentials, MissingApiKeyError } from "./credentials.ts";
import { loadConfig } from "./config.ts";
import { PROVIDER_PRESETS, splitModelName } from "../agent/providers/presets.ts";

export interface MissingSecret {
  /** "the model's API key", "the Telegram bot token". */
  what: string;
  /** The variable of `.env` that holds it. */
  variable: string;
  /** What Hearth does without it. */
  effect: string;
}

/** [] when nothing is missing, or when config.json does not load (then its own error says why). */
export function missingSecrets(home: string): MissingSecret[] {
  let config;
  try {
    config = loadConfig({ home, env: {} });
  } catch {
    return [];
  }
  const out: MissingSecret[] = [];
  try {
    assertModelCredentials(config, home);
  } catch (err) {
    if (!(err instanceof MissingApiKeyError)) throw err;
    const provider = splitModelName(config.model.name).provider;
    const variable = config.providers[provider]?.apiKeyEnv ?? PROVIDER_PRESETS[provider]?.keyEnv ?? "ANTHROPIC_API_KEY";
    out.push({ what: "the model's API key", variable, effect: "Hearth does not start without it" });
  }
  for (const c of CONFIGURABLE) {
    const section = channelSection(config.channels, c.id);
    if (!section) continue;
    for (const k of c.credentials ?? []) {
      if (!section[k.key]) out.push({ what: `the ${c.name} bot ${k.key}`, variable: k.variable, effect: `Hearth starts without ${c.name}` });
    }
  }
  return out;
}
