// Model names and the providers that need no config entry. A model is named
// "<provider>/<model>"; a bare name ("claude-sonnet-5-5") is an Anthropic model, so configs
// written before providers existed keep working.

export const providerTypes = ["anthropic", "openai"] as const;
export type ProviderType = (typeof providerTypes)[number];

export interface ProviderPreset {
  type: ProviderType;
  /** Absent for "anthropic": the SDK's default (or model.baseUrl / ANTHROPIC_BASE_URL). */
  baseUrl?: string;
  /** The environment variable that holds its key. */
  keyEnv?: string;
  /** A hosted API refuses every request without a key; a local server needs none. */
  needsKey: boolean;
}

export const PROVIDER_PRESETS: Readonly<Record<string, ProviderPreset>> = {
  anthropic: { type: "anthropic", keyEnv: "ANTHROPIC_API_KEY", needsKey: true },
  openai: { type: "openai", baseUrl: "https://api.openai.com/v1", keyEnv: "OPENAI_API_KEY", needsKey: true },
  openrouter: { type: "openai", baseUrl: "https://openrouter.ai/api/v1", keyEnv: "OPENROUTER_API_KEY", needsKey: true },
  groq: { type: "openai", baseUrl: "https://api.groq.com/openai/v1", keyEnv: "GROQ_API_KEY", needsKey: true },
  ollama: { type: "openai", baseUrl: "http://127.0.0.1:11434/v1", needsKey: false },
  lmstudio: { type: "openai", baseUrl: "http://127.0.0.1:1234/v1", needsKey: false },
  vllm: { type: "openai", baseUrl: "http://127.0.0.1:8000/v1", needsKey: false },
};

/** Environment variables that hold provider keys: registered with the log redactor at load. */
export const PROVIDER_KEY_ENVS = Object.values(PROVIDER_PRESETS).flatMap((p) => (p.keyEnv ? [p.keyEnv] : []));

/** "ollama/llama3.2" → ollama + llama3.2; "openrouter/meta-llama/llama-3.3-70b" keeps the rest whole; a bare name is Anthropic's. */
export function splitModelName(name: string): { provider: string; model: string } {
  const slash = name.indexOf("/");
  if (slash <= 0) return { provider: "anthropic", model: name };
  return { provider: name.slice(0, slash), model: name.slice(slash + 1) };
}

/**
 * The variable a non-Anthropic provider's key should come from when it needs one and has none;
 * null when it has a key or needs none. A key is needed when the owner named its variable
 * (`apiKeyEnv`), or for a hosted preset at its own address; a local server (or a custom address
 * without `apiKeyEnv`) needs none, and then no Authorization header is made up for it.
 */
export function missingKeyOf(name: string, p: { apiKey?: string | undefined; apiKeyEnv?: string | undefined; baseUrl?: string | undefined } | undefined): { keyEnv: string | undefined } | null {
  if (p?.apiKey) return null;
  if (p?.apiKeyEnv) return { keyEnv: p.apiKeyEnv };
  const preset = PROVIDER_PRESETS[name];
  if (preset?.needsKey && (!p?.baseUrl || p.baseUrl === preset.baseUrl)) return { keyEnv: preset.keyEnv };
  return null;
}
