// Whether the configured models have the API keys they need, checked before anything starts; a
// missing one is an error that says where to put it.
import { existsSync } from "node:fs";
import { missingKeyOf, splitModelName } from "../agent/providers/presets.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import { homePaths } from "./home.ts";
import type { Config } from "./schema.ts";

export class MissingApiKeyError extends Error {
  /**
   * `home`: the Hearth home (its config.json is named only when it exists; otherwise the message
   * says how to create it). `provider`: a provider other than Anthropic, and the variable that
   * holds its key.
   */
  constructor(home: string, provider?: { name: string; keyEnv: string | undefined }) {
    const configPath = homePaths(home).config;
    const inConfig = (json: string) =>
      existsSync(configPath)
        ? `  or in ${configPath}:  ${json}\n`
        : `  or put it in a config file: \`${hearthCmd("init")}\` creates ${configPath}, then set ${json} there\n`;
    // The wizard is the way in for a new home; it checks the key and keeps it out of config.json.
    const setup = `  Run \`${hearthCmd("setup")}\`: it asks for the key, checks it and keeps it in ${homePaths(home).secrets}\n`;
    super(
      provider
        ? `Hearth needs an API key for the provider "${provider.name}" to talk to the model.\n` +
            setup +
            (provider.keyEnv ? `  or set it in your shell:  export ${provider.keyEnv}=...\n` : "") +
            inConfig(`"providers": { "${provider.name}": { "apiKey": "..." } }`) +
            `Then run the command again.`
        : `Hearth needs an Anthropic API key to talk to the model.\n` +
            setup +
            `  or set it in your shell:  export ANTHROPIC_API_KEY=sk-ant-...\n` +
            inConfig(`"model": { "apiKey": "sk-ant-..." }`) +
            `Create a key in the Anthropic Console (Settings → API keys), then run the command again.`,
    );
    this.name = "MissingApiKeyError";
  }
}

/**
 * Throws MissingApiKeyError when model.name's provider has no key and needs one (Anthropic
 * without a custom endpoint; see missingKeyOf for the others), or when another provider in use
 * (a fallback) names a key variable that is not set.
 */
export function assertModelCredentials(config: Config, home: string): void {
  const { provider } = splitModelName(config.model.name);
  const settings = config.providers[provider];
  if (provider === "anthropic") {
    if (!settings?.apiKey && !config.model.baseUrl && !settings?.baseUrl) throw new MissingApiKeyError(home);
  }
  for (const name of new Set([config.model.name, ...config.model.fallbacks].map((n) => splitModelName(n).provider))) {
    if (name === "anthropic") continue;
    const missing = missingKeyOf(name, config.providers[name]);
    if (missing) throw new MissingApiKeyError(home, { name, keyEnv: missing.keyEnv });
  }
}
