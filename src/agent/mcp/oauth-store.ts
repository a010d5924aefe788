// What Hearth keeps of its OAuth sessions with MCP servers: one file per server under the home's
// `mcp-auth/` (0600, in a 0700 folder) with the tokens, the client registration, the discovery
// results, the PKCE verifier of a login under way and the scopes a server asked for. The values
// are registered as secrets as soon as they are read or written, so no log line carries them.
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { registerSecret } from "../../process/log.ts";
import { writeFileAtomic } from "../../state/storage.ts";

const json = z.record(z.string(), z.unknown());

const recordSchema = z.object({
  /** The server URL these belong to: a record for another URL is ignored (the config changed). */
  url: z.string(),
  tokens: json.optional(),
  client: json.optional(),
  discovery: json.optional(),
  verifier: z.string().optional(),
  /** Scopes the server named in a `403 insufficient_scope`: the next login asks for them. */
  scope: z.string().optional(),
});

export type AuthRecord = z.output<typeof recordSchema>;

export class McpAuthStore {
  readonly #dir: string;

  /** `dir`: the home's `mcp-auth` folder (created on the first write). */
  constructor(dir: string) {
    this.#dir = dir;
  }

  /** The record of `name` for `url`; an empty one when there is none or it was for another URL. */
  read(name: string, url: string): AuthRecord {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(this.#file(name), "utf8"));
    } catch {
      return { url };
    }
    const parsed = recordSchema.safeParse(raw);
    if (!parsed.success || parsed.data.url !== url) return { url };
    registerRecordSecrets(parsed.data);
    return parsed.data;
  }

  /** Changes the record of `name` for `url` and writes it at once (atomically, 0600). */
  update(name: string, url: string, change: (r: AuthRecord) => AuthRecord): AuthRecord {
    const next = change(this.read(name, url));
    registerRecordSecrets(next);
    writeFileAtomic(this.#file(name), `${JSON.stringify(next, null, 2)}\n`, 0o600);
    return next;
  }

  /** Forgets everything about `name`; false when there was nothing. */
  forget(name: string): boolean {
    const file = this.#file(name);
    try {
      readFileSync(file);
    } catch {
      return false;
    }
    rmSync(file, { force: true });
    return true;
  }

  /** Whether tokens are stored for `name` at `url`. */
  hasTokens(name: string, url: string): boolean {
    return this.read(name, url).tokens !== undefined;
  }

  #file(name: string): string {
    // Server names are letters, digits and hyphens (config.ts): safe as a file name.
    return path.join(this.#dir, `${name}.json`);
  }
}

function registerRecordSecrets(r: AuthRecord): void {
  for (const v of [r.tokens?.access_token, r.tokens?.refresh_token, r.tokens?.id_token, r.client?.client_secret, r.verifier]) {
    if (typeof v === "string") registerSecret(v);
  }
}
