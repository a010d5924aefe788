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
