// What `hearth setup` writes: the answers set into config.json's text key by key (the owner's
// other settings, comments and layout kept; a new home starts from `hearth init`'s commented
// template), the keys and tokens into the home's `.env`. Never a secret in config.json.
import { mkdirSync, readFileSync } from "node:fs";
import { applyEdits, modify, type JSONPath } from "jsonc-parser";
import { CONFIGURABLE, type ConfigurableId } from "../channels/registry.ts";
import type { Logger } from "../process/log.ts";
import { writeFileAtomic } from "../state/storage.ts";
import { homePaths } from "./home.ts";
import { configTemplate } from "./init.ts";
import { CONFIG_VERSION, migrateConfigFile } from "./migrations.ts";
import { liveTemplateKey } from "./template-keys.ts";
import { writeSecrets } from "./secrets.ts";

/** The model side of the answers. */
export type ModelAnswer =
  | { kind: "anthropic"; model: string; baseUrl?: string; apiKey?: string }
  /** Any OpenAI-compatible server; Hearth names it provider "endpoint". */
  | { kind: "openai"; model: string; baseUrl: string; apiKey?: string }
  | { kind: "ollama"; model: string; baseUrl?: string };

/** A chat channel connected by setup: its credential, the owner found, and its API address when not the default. */
export interface ChannelAnswer {
  token: string;
  /** The channel's further credentials by variable (Slack's app-level token). */
  more?: Record<string, string>;
  ownerId: string;
  api?: string;
}

export interface SetupAnswers {
  model: ModelAnswer;
  /** By channel id (channels/registry.ts), in the registry's order. */
  channels: Partial<Record<ConfigurableId, ChannelAnswer>>;
  /** Channels linked as a device (descriptor.linkSetup): the keys of their section to write. */
  linked?: Partial<Record<ConfigurableId, Record<string, unknown>>>;
  /** Further variables for `.env` by name (a linked channel's password). */
  secrets?: Record<string, string>;
  /** Turn the web dashboard on (dashboard.enabled). */
  dashboard?: boolean;
}

/** The provider name an OpenAI-compatible endpoint gets, and its key's variable. */
export const ENDPOINT_PROVIDER = "endpoint";
export const ENDPOINT_KEY_ENV = "HEARTH_ENDPOINT_API_KEY";

/** model.name as config.json spells it for these answers. */
export function modelName(m: ModelAnswer): string {
  switch (m.kind) {
    case "anthropic":
      return m.model;
    case "openai":
      return `${ENDPOINT_PROVIDER}/${m.model}`;
    case "ollama":
      return `ollama/${m.model}`;
  }
}

/**
 * Writes the answers: an older config.json is migrated first (kept as config.json.v<N>.bak),
 * then each answer replaces its key only. Secrets go to `.env` (0600). Returns the config path.
 */
export function writeSetup(home: string, answers: SetupAnswers, log: Logger): string {
  const paths = homePaths(home);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  migrateConfigFile(home, log);
  let text: string;
  try {
    text = readFileSync(paths.config, "utf8");
  } catch {
    text = configTemplate();
  }
  const set = (path: JSONPath, value: unknown) => {
    text = applyEdits(text, modify(text, path, value, { formattingOptions: { insertSpaces: true, tabSize: 2, eol: "\n" } }));
  };
  set(["version"], CONFIG_VERSION);
  const secrets: Record<string, string> = {};
  const m = answers.model;
  set(["model", "name"], modelName(m));
  switch (m.kind) {
    case "anthropic":
      if (m.baseUrl) {
        text = liveTemplateKey(text, ["model", "baseUrl"]);
        set(["model", "baseUrl"], m.baseUrl);
      }
      if (m.apiKey) secrets.ANTHROPIC_API_KEY = m.apiKey;
      break;
    case "openai":
      set(["providers", ENDPOINT_PROVIDER], { type: "openai", baseUrl: m.baseUrl, ...(m.apiKey ? { apiKeyEnv: ENDPOINT_KEY_ENV } : {}) });
      if (m.apiKey) secrets[ENDPOINT_KEY_ENV] = m.apiKey;
      break;
    case "ollama":
      if (m.baseUrl) set(["providers", "ollama", "baseUrl"], m.baseUrl);
      break;
  }
  for (const c of CONFIGURABLE) {
    const a = answers.channels[c.id];
    if (!a || !c.setup || !c.credentials?.[0]) continue;
    const apiKey = c.setup.apiKey;
    text = liveTemplateKey(text, ["channels", c.id], ["ownerIds", ...(a.api ? [apiKey] : [])]);
    set(["channels", c.id, "ownerIds"], [a.ownerId]);
    if (a.api) set(["channels", c.id, apiKey], a.api);
    secrets[c.credentials[0].variable] = a.token;
    for (const k of c.credentials.slice(1)) if (a.more?.[k.variable]) secrets[k.variable] = a.more[k.variable]!;
  }
  for (const [id, section] of Object.entries(answers.linked ?? {})) {
    if (!section) continue;
    text = liveTemplateKey(text, ["channels", id], Object.keys(section));
    for (const [key, value] of Object.entries(section)) set(["channels", id, key], value);
  }
  if (answers.dashboard) {
    text = liveTemplateKey(text, ["dashboard"], ["enabled"]);
    set(["dashboard", "enabled"], true);
  }
  Object.assign(secrets, answers.secrets);
  // Secrets first: a config naming a channel whose token is missing would not start.
  if (Object.keys(secrets).length > 0) writeSecrets(home, secrets);
  writeFileAtomic(paths.config, text, 0o600);
  return paths.config;
}
