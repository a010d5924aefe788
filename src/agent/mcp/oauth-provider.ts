// Hearth's side of the MCP authorization flow (spec revision 2025-11-25), as the SDK's `auth()`
// drives it: this provider keeps what the flow learns in the McpAuthStore, refuses an
// authorization server whose metadata does not advertise PKCE with S256 (a 2025-03-26 server
// without metadata gets the default endpoints), always names the MCP server as
// the RFC 8707 `resource`, and — when no login is under way — stops the flow with
// LoginRequiredError instead of sending anyone anywhere: a daemon has no browser.
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { expandVariables, type McpAuthConfig } from "./config.ts";
import type { AuthRecord, McpAuthStore } from "./oauth-store.ts";
import { registerSecret } from "../../process/log.ts";

/** The server needs the owner to log in (`hearth mcp login NAME`, or the link sent to the chat). */
export class LoginRequiredError extends Error {
  override name = "LoginRequiredError";
  readonly server: string;
  constructor(server: string, why = "it needs you to log in") {
    super(`The MCP server "${server}" is not authorized: ${why}. Log in with \`hearth mcp login ${server}\`.`);
    this.server = server;
  }
}

/** The authorization server does not advertise PKCE with S256: the spec forbids logging in there. */
export class PkceUnsupportedError extends Error {
  override name = "PkceUnsupportedError";
  constructor(server: string, authorizationServer: string) {
    super(
      `The authorization server of the MCP server "${server}" (${authorizationServer}) does not say it supports PKCE with S256 ` +
        "(code_challenge_methods_supported in its metadata), so Hearth refuses to log in there: the MCP authorization spec requires it.",
    );
  }
}

/** A tool call was refused for lack of scope (`403 insufficient_scope`): the owner must log in again. */
export class StepUpRequiredError extends Error {
  override name = "StepUpRequiredError";
  readonly scope: string;
  constructor(server: string, scope: string) {
    super(`The MCP server "${server}" needs more permission (scope "${scope}") for this: the owner must log in again to grant it.`);
    this.scope = scope;
  }
}

/** A login under way: where the browser comes back to, and the state it must bring. */
export interface LoginSession {
  redirectUrl: string;
  state: string;
  /** Called once with the authorization URL the owner must open. Must not throw. */
  onAuthorizationUrl: (url: URL) => void;
}

export interface ProviderOptions {
  server: string;
  url: string;
  auth: McpAuthConfig | undefined;
  store: McpAuthStore;
  env: NodeJS.ProcessEnv;
  /** Absent: no login is under way (the daemon connecting on its own). */
  login?: LoginSession;
}

/** Stands in for the redirect URI outside a login: the flow never gets as far as using it. */
const NO_REDIRECT = "http://127.0.0.1/callback";

export class HearthOAuthProvider implements OAuthClientProvider {
  readonly #o: ProviderOptions;
  readonly #auth: McpAuthConfig | undefined;
  readonly clientMetadataUrl?: string;

  constructor(o: ProviderOptions) {
    this.#o = o;
    this.#auth = o.auth ? expandAuth(o.auth, o.env, o.server) : undefined;
    if (this.#auth?.type === "oauth" && this.#auth.clientMetadataUrl) this.clientMetadataUrl = this.#auth.clientMetadataUrl;
    if (this.#auth?.type === "client_credentials" && this.#auth.privateKeyJwt) {
      const { privateKey, algorithm } = this.#auth.privateKeyJwt;
      const clientId = this.#auth.clientId;
      this.addClientAuthentication = async (headers, params, url, metadata) => {
        const { createPrivateKeyJwtAuth } = await import("@modelcontextprotocol/sdk/client/auth-extensions.js");
        const add = createPrivateKeyJwtAuth({ issuer: clientId, subject: clientId, privateKey, alg: algorithm, audience: metadata?.issuer ?? String(url) });
        await add(headers, params, url, metadata);
      };
    }
  }

  addClientAuthentication?: OAuthClientProvider["addClientAuthentication"];

  get #machine(): boolean {
    return this.#auth?.type === "client_credentials";
  }

  get redirectUrl(): string | undefined {
    if (this.#machine) return undefined;
    return this.#o.login?.redirectUrl ?? NO_REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    const scope = this.#auth?.scope;
    if (this.#machine) return { client_name: "Hearth", redirect_uris: [], grant_types: ["client_credentials"], ...(scope ? { scope } : {}) };
    return {
      client_name: "Hearth",
      redirect_uris: [this.redirectUrl!],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: this.#auth?.type === "oauth" && this.#auth.clientSecret ? "client_secret_basic" : "none",
      ...(scope ? { scope } : {}),
    };
  }

  state(): string {
    return this.#o.login?.state ?? "";
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const a = this.#auth;
    const stored = this.#record().client as OAuthClientInformationMixed | undefined;
    if (a?.type === "client_credentials") return { client_id: a.clientId, ...(a.clientSecret ? { client_secret: a.clientSecret } : {}), ...issuerOf(stored) };
    if (a?.type === "oauth" && a.clientId) return { client_id: a.clientId, ...(a.clientSecret ? { client_secret: a.clientSecret } : {}), ...issuerOf(stored) };
    // A daemon without a login under way must not register a client it could never use.
    if (!stored && !this.#o.login) throw new LoginRequiredError(this.#o.server);
    return stored;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.#update((r) => ({ ...r, client: { ...info } }));
  }

  tokens(): OAuthTokens | undefined {
    // A login asks the owner afresh (a refresh would bring back the old scopes); the stored
    // tokens stay in use by the connection until the login saves new ones.
    if (this.#o.login) return undefined;
    return this.#record().tokens as OAuthTokens | undefined;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#update((r) => {
      const { scope: _asked, ...rest } = r;
      return { ...rest, tokens: { ...tokens } };
    });
  }

  redirectToAuthorization(url: URL): void {
    if (!this.#o.login) throw new LoginRequiredError(this.#o.server);
    this.#o.login.onAuthorizationUrl(url);
  }

  saveCodeVerifier(verifier: string): void {
    registerSecret(verifier);
    this.#update((r) => ({ ...r, verifier }));
  }

  codeVerifier(): string {
    const v = this.#record().verifier;
    if (!v) throw new Error(`No login to ${this.#o.server} is under way (no PKCE verifier is stored).`);
    return v;
  }

  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (!this.#machine) return undefined;
    const params = new URLSearchParams({ grant_type: "client_credentials" });
    const s = scope ?? this.#auth?.scope;
    if (s) params.set("scope", s);
    return params;
  }

  /** The resource indicator is always the MCP server itself (or the path above it it names). */
  async validateResourceURL(serverUrl: string | URL, resource?: string): Promise<URL | undefined> {
    const server = new URL(serverUrl);
    server.hash = "";
    if (!resource) return server;
    const r = new URL(resource);
    const within = r.origin === server.origin && server.pathname.startsWith(r.pathname.replace(/\/$/, ""));
    if (!within) throw new Error(`The MCP server "${this.#o.server}" names the resource ${resource}, which is not itself: Hearth will not ask for tokens for it.`);
    return r;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    this.#update((r) => {
      const next = { ...r };
      if (scope === "all" || scope === "tokens") delete next.tokens;
      if (scope === "all" || scope === "client") delete next.client;
      if (scope === "all" || scope === "verifier") delete next.verifier;
      if (scope === "all" || scope === "discovery") delete next.discovery;
      return next;
    });
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    // Metadata that leaves S256 out is refused. No metadata at all is a 2025-03-26 server: the
    // flow uses the default endpoints (/authorize, /token, /register at its origin), and that
    // revision makes PKCE mandatory for every server with nothing to advertise it in; the
    // challenge is sent all the same.
    const metadata = state.authorizationServerMetadata;
    if (!this.#machine && metadata && !metadata.code_challenge_methods_supported?.includes("S256")) {
      throw new PkceUnsupportedError(this.#o.server, String(state.authorizationServerUrl));
    }
    this.#update((r) => ({ ...r, discovery: JSON.parse(JSON.stringify(state)) as Record<string, unknown> }));
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#record().discovery as OAuthDiscoveryState | undefined;
  }

  #record(): AuthRecord {
    return this.#o.store.read(this.#o.server, this.#o.url);
  }

  #update(change: (r: AuthRecord) => AuthRecord): void {
    this.#o.store.update(this.#o.server, this.#o.url, change);
  }
}

const issuerOf = (stored: OAuthClientInformationMixed | undefined): { issuer?: string } => {
  const issuer = (stored as { issuer?: unknown } | undefined)?.issuer;
  return typeof issuer === "string" ? { issuer } : {};
};

function expandAuth(auth: McpAuthConfig, env: NodeJS.ProcessEnv, server: string): McpAuthConfig {
  const where = `mcp.servers.${server}.auth`;
  const strings: Record<string, string> = {};
  for (const [k, v] of Object.entries(auth)) if (typeof v === "string") strings[k] = v;
  if (auth.type === "client_credentials" && auth.privateKeyJwt) strings.privateKey = auth.privateKeyJwt.privateKey;
  const x = expandVariables(strings, env, where);
  for (const k of ["clientSecret", "privateKey"]) registerSecret(x[k]);
  if (auth.type === "client_credentials") {
    return {
      ...auth,
      clientId: x.clientId!,
      ...(x.clientSecret ? { clientSecret: x.clientSecret } : {}),
      ...(auth.privateKeyJwt ? { privateKeyJwt: { ...auth.privateKeyJwt, privateKey: x.privateKey! } } : {}),
    };
  }
  return { ...auth, ...(x.clientId ? { clientId: x.clientId } : {}), ...(x.clientSecret ? { clientSecret: x.clientSecret } : {}) };
}
