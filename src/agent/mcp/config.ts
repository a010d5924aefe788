// `mcp.servers.<name>` in config.json: a stdio command or a Streamable HTTP (or SSE) URL.
import { z } from "zod";
import { secretMap, secretValue, type SecretMove } from "../../fields/secret-fields.ts";

/** Server names become part of tool names (`mcp__<server>__<tool>`): no underscores in them. */
export const SERVER_NAME = /^[A-Za-z0-9-]{1,32}$/;

/** Environment variables and headers: values may be tokens (a map marked secret, src/fields/secret-fields.ts). */
const secretStringMap = z.record(z.string(), z.string()).meta(secretMap()).default({});

/**
 * An auth secret moves to `.env` as HEARTH_MCP_<SERVER>_<FIELD> and stays in config.json as a
 * `${VAR}` reference, which the auth expands (oauth-provider.ts).
 */
const toReference = (field: string): SecretMove => ({
  variable: ([server = ""]) => `HEARTH_MCP_${server.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_${field}`,
  leaves: () => ({ kind: "reference" }),
});
const clientSecret = z.string().min(1).meta(secretValue(toReference("CLIENT_SECRET")));

/**
 * How Hearth authorizes itself to an HTTP server (values may use ${VAR}). Absent: the MCP
 * authorization flow runs when the server answers 401 (discovery, registration, a login by the
 * owner through `hearth mcp login`).
 */
export const mcpAuthSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("oauth"),
    /** A client registered by hand with the authorization server (else dynamic registration). */
    clientId: z.string().min(1).optional(),
    clientSecret: clientSecret.optional(),
    /** Scopes to ask for when the server names none. */
    scope: z.string().min(1).optional(),
    /** An HTTPS URL of a client ID metadata document, used where the server supports them. */
    clientMetadataUrl: z.url({ protocol: /^https$/ }).optional(),
  }),
  z
    .strictObject({
      type: z.literal("client_credentials"),
      clientId: z.string().min(1),
      clientSecret: clientSecret.optional(),
      /** A PKCS#8 PEM private key (or ${VAR}) for private_key_jwt client authentication. */
      privateKeyJwt: z.strictObject({ privateKey: z.string().min(1).meta(secretValue(toReference("PRIVATE_KEY"))), algorithm: z.string().min(1).default("RS256") }).optional(),
      scope: z.string().min(1).optional(),
    })
    .refine((a) => (a.clientSecret === undefined) !== (a.privateKeyJwt === undefined), { message: 'give "clientSecret" or "privateKeyJwt" (exactly one)' }),
]);

export type McpAuthConfig = z.output<typeof mcpAuthSchema>;

export const mcpServerSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    /** "shared": groups and paired DMs may use its tools too. */
    scope: z.enum(["main", "shared"]).default("main"),
    /** Per call, and for the connection handshake. */
    timeoutMs: z.int().positive().max(3_600_000).default(60_000),
    /** How long the person asked a server's question (elicitation) has to answer before it is declined; the call's timeout stops meanwhile. */
    answerTimeoutMs: z.int().positive().max(86_400_000).default(300_000),
    /**
     * The roots offered to the server: "workspace" (main-scope servers only; shared ones get
     * none, see client-features.ts) or "none". Some servers (server-filesystem) replace their own
     * folders with them.
     */
    roots: z.enum(["workspace", "none"]).default("workspace"),
    tools: z
      .strictObject({
        /** Only these tools of the server (absent: all of them). */
        allow: z.array(z.string().min(1)).optional(),
        deny: z.array(z.string().min(1)).default([]),
      })
      .prefault({}),
    /**
     * Tools (the server's names) a run that read outside content may call without asking the
     * owner, or "*" for all of them. Absent: every call of such a run is asked (approvals). What
     * a server says of its own tools (readOnlyHint…) is shown in the question, never trusted.
     */
    trust: z.union([z.literal("*"), z.array(z.string().min(1))]).default([]),
    // stdio
    command: z.string().trim().min(1).optional(),
    args: z.array(z.string()).default([]),
    /** Added to the daemon's environment (minus Hearth's secrets); values may use ${VAR}. */
    env: secretStringMap,
    cwd: z.string().min(1).optional(),
    /** false: the process runs outside the exec sandbox and reaches any address directly (doctor names it). */
    sandbox: z.boolean().default(true),
    // Streamable HTTP, falling back to SSE
    url: z.url({ protocol: /^https?$/ }).optional(),
    /** Sent with every request; values may use ${VAR}. */
    headers: secretStringMap,
    auth: mcpAuthSchema.optional(),
  })
  .superRefine((s, ctx) => {
    if (s.command && s.url) ctx.addIssue({ code: "custom", message: 'give either "command" (stdio) or "url" (HTTP), not both' });
    if (s.command && s.auth) ctx.addIssue({ code: "custom", path: ["auth"], message: '"auth" is for HTTP servers ("url"); a stdio server gets its credentials through "env"' });
    if (!s.command && !s.url) ctx.addIssue({ code: "custom", message: 'give "command" (a stdio server) or "url" (a Streamable HTTP server)' });
  });

export const mcpSchema = z
  .strictObject({
    servers: z
      .record(z.string(), mcpServerSchema)
      .superRefine((servers, ctx) => {
        for (const name of Object.keys(servers)) {
          if (!SERVER_NAME.test(name)) ctx.addIssue({ code: "custom", path: [name], message: "server names are 1–32 letters, digits or hyphens (they become part of tool names)" });
        }
      })
      .default({}),
  })
  .prefault({});

export type McpServerConfig = z.output<typeof mcpServerSchema>;
export type McpConfig = z.output<typeof mcpSchema>;

export class MissingVariableError extends Error {
  override name = "MissingVariableError";
  readonly variable: string;
  constructor(variable: string, where: string) {
    super(`${where} uses \${${variable}}, which is not set in the daemon's environment`);
    this.variable = variable;
  }
}

/** Replaces each `${VAR}` with the variable's value; throws MissingVariableError for an unset one. */
export function expandVariables(values: Record<string, string>, env: NodeJS.ProcessEnv, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    out[key] = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
      const v = env[name];
      if (v === undefined) throw new MissingVariableError(name, `${where}.${key}`);
      return v;
    });
  }
  return out;
}
