// Turns the providers of the configuration into model clients: `clientFor("ollama/llama3.2")`
// streams from that model, then from the configured fallbacks (of any provider), by the shared
// policy. Targets are made once per model name, so what is learned about a model (it cannot
// call tools) holds for every client that uses it.
import type { Logger } from "../../process/log.ts";
import { anthropicConnection, anthropicTarget } from "./anthropic/client.ts";
import type { ModelCapabilities, ModelClient } from "./model.ts";
import { openaiConnection, openaiTarget } from "./openai/client.ts";
import { createModelClient, type ModelTarget, type RetryPolicy } from "./policy.ts";
import { PROVIDER_PRESETS, splitModelName, type ProviderType } from "./presets.ts";

export interface ModelSpec {
  contextWindow?: number | undefined;
  maxTokens?: number | undefined;
  pricing?: { input: number; output: number } | undefined;
  vision?: boolean | undefined;
  tools: boolean;
}

/** One provider as config.ts resolves it (type, address and key filled in). */
export interface ProviderSettings {
  type?: ProviderType | undefined;
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  apiKeyEnv?: string | undefined;
  headers?: Record<string, string> | undefined;
  models: Record<string, ModelSpec>;
}

export interface RegistryOptions {
  providers: Record<string, ProviderSettings>;
  /** model.name, model.fallbacks and the window and output defaults of model.* */
  primary: string;
  fallbacks: string[];
  contextWindow: number;
  maxTokens: number;
  retry?: Partial<RetryPolicy>;
  log: Logger;
  /** The policy's wait between retries (tests). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  random?: () => number;
}

/** A model name resolved against the providers. */
export interface ResolvedModel {
  /** As config spells it. */
  name: string;
  provider: string;
  type: ProviderType;
  /** The API's model id. */
  model: string;
  contextWindow: number;
  maxTokens: number;
  capabilities: ModelCapabilities;
  /** USD per million tokens, from config; absent when config does not say. */
  pricing?: { input: number; output: number };
}

/** A model name that refers to no configured or preset provider. */
export class UnknownModelError extends Error {
  override name = "UnknownModelError";
  constructor(model: string, provider: string) {
    super(`"${model}" names the provider "${provider}", which is neither in providers of config.json nor a preset (${Object.keys(PROVIDER_PRESETS).join(", ")}).`);
  }
}

export class ModelRegistry {
  readonly #opts: RegistryOptions;
  readonly #targets = new Map<string, ModelTarget>();
  readonly #connections = new Map<string, () => Promise<never>>();
  readonly #clients = new Map<string, ModelClient>();

  constructor(opts: RegistryOptions) {
    this.#opts = opts;
  }

  /** The primary model from config. */
  get primary(): string {
    return this.#opts.primary;
  }

  /** Throws UnknownModelError. */
  resolve(name: string): ResolvedModel {
    const { provider, model } = splitModelName(name);
    const settings = this.#opts.providers[provider];
    const preset = PROVIDER_PRESETS[provider];
    const type = settings?.type ?? preset?.type;
    if (!type || !model) throw new UnknownModelError(name, provider);
    const spec = settings?.models[model];
    const window = spec?.contextWindow ?? this.#opts.contextWindow;
    const toolsOff = spec?.tools === false;
    return {
      name,
      provider,
      type,
      model,
      contextWindow: window,
      maxTokens: Math.min(spec?.maxTokens ?? this.#opts.maxTokens, window - 1),
      capabilities: { tools: !toolsOff, vision: spec?.vision ?? type === "anthropic", ...(toolsOff ? { toolsOffReason: "config" } : {}) },
      ...(spec?.pricing ? { pricing: spec.pricing } : {}),
    };
  }

  /** Streams from `name`, then from the configured fallbacks it is not one of. Throws UnknownModelError. */
  clientFor(name: string = this.#opts.primary): ModelClient {
    const chain = [name, ...this.#opts.fallbacks.filter((f) => f !== name)];
    const key = chain.join("\n");
    let client = this.#clients.get(key);
    if (!client) {
      const { log, retry, sleep, random } = this.#opts;
      client = createModelClient({ targets: chain.map((n) => this.#target(n)), log, ...(retry ? { retry } : {}), ...(sleep ? { sleep } : {}), ...(random ? { random } : {}) });
      this.#clients.set(key, client);
    }
    return client;
  }

  /** The names /model offers: model.name, the fallbacks, then every model listed under providers. */
  choices(): string[] {
    const listed = Object.entries(this.#opts.providers).flatMap(([provider, p]) =>
      Object.keys(p.models).map((m) => (provider === "anthropic" ? m : `${provider}/${m}`)),
    );
    return [...new Set([this.#opts.primary, ...this.#opts.fallbacks, ...listed])];
  }

  /** The model's capabilities as learned so far (a model that refused tools reports it). */
  capabilities(name: string): ModelCapabilities {
    return { ...this.#target(name).capabilities };
  }

  #target(name: string): ModelTarget {
    let target = this.#targets.get(name);
    if (target) return target;
    const r = this.resolve(name);
    const settings = this.#opts.providers[r.provider];
    const preset = PROVIDER_PRESETS[r.provider];
    if (r.type === "anthropic") {
      const connect = this.#connection(r.provider, () => anthropicConnection({ apiKey: settings?.apiKey, baseURL: settings?.baseUrl, headers: settings?.headers }));
      target = anthropicTarget(connect, name, r.model, r.capabilities);
    } else {
      const baseURL = settings?.baseUrl ?? preset?.baseUrl;
      if (!baseURL) throw new UnknownModelError(name, r.provider);
      const keyEnv = settings?.apiKeyEnv ?? preset?.keyEnv;
      const keyHint = keyEnv ? `${keyEnv} (in Hearth's .env, or the environment)` : `providers.${r.provider}.apiKey in config.json`;
      const connect = this.#connection(r.provider, () => openaiConnection({ apiKey: settings?.apiKey, baseURL, headers: settings?.headers }));
      target = openaiTarget(connect, { name, model: r.model, capabilities: r.capabilities, keyHint });
    }
    this.#targets.set(name, target);
    return target;
  }

  /** One SDK client per provider, shared by its models. */
  #connection<T>(provider: string, make: () => () => Promise<T>): () => Promise<T> {
    let c = this.#connections.get(provider) as (() => Promise<T>) | undefined;
    if (!c) {
      c = make();
      this.#connections.set(provider, c as () => Promise<never>);
    }
    return c;
  }
}
