// Grants (`<home>/grants.json`): what the owner allowed for a while ("Allow for 30 min") or for
// good ("Always"): a command pattern in a folder, perhaps only towards one host. The file is read
// again for every question and listing, so `hearth grants revoke N` takes effect in a running
// daemon at once; it is written atomically. An expired grant is never used and is dropped at the
// next write.
import { z } from "zod";
import type { Logger } from "../log.ts";
import { loadJsonFile, salvageArray, writeFileAtomic, type StateVersions } from "../storage.ts";
import { execHostOf, patternMatches, type ActionFacts } from "./policy.ts";

const grantSchema = z.object({
  /** The tool it covers: exec, send_file, web_fetch. */
  tool: z.string().min(1),
  pattern: z.string().min(1),
  folder: z.string().min(1),
  /** Only towards this host (a tainted run's network access); null: any host or none. */
  host: z.string().nullable(),
  /** Milliseconds since the epoch; null: until revoked ("Always"). */
  expiresAt: z.number().nullable(),
  /** Who approved it (the name the chat shows) and when. */
  by: z.string(),
  at: z.number(),
});
export type Grant = z.output<typeof grantSchema>;

const fileSchema = z.object({ version: z.literal(1), grants: z.array(grantSchema) });

/** grants.json's format versions: 0 is the file from before versions ({ grants }). */
const GRANTS_VERSIONS: StateVersions = { current: 1, steps: [{ from: 0, name: "addVersion", apply: (raw) => raw }] };

export class GrantStore {
  readonly #path: string;
  readonly #log: Logger;
  readonly #clock: () => number;

  /** Reads the file once: an older one is migrated now, a newer one throws NewerStateError (a start then exits 2). */
  constructor(path: string, log: Logger, clock: () => number) {
    this.#path = path;
    this.#log = log;
    this.#clock = clock;
    this.#read();
  }

  /** The grants in force now, oldest first: `/grants` and `hearth grants` number them from 1 in this order. */
  active(): Grant[] {
    const now = this.#clock();
    return this.#read().filter((g) => g.expiresAt === null || g.expiresAt > now);
  }

  /** The connection grant in force for `host` in `place` (a chat: service.ts chatPlace), or null. Never another host's, never another chat's. */
  coveringHost(host: string, place: string): Grant | null {
    return this.active().find((g) => g.tool === "connect" && g.folder === place && g.host === host) ?? null;
  }

  /** The grant in force that covers `facts`, or null. */
  covering(facts: ActionFacts): Grant | null {
    return this.active().find((g) => covers(g, facts)) ?? null;
  }

  add(grant: Grant): void {
    this.#write([...this.active(), grant]);
  }

  /** Removes grant `n` (1-based, as `active()` lists them); returns it, or null when there is none. */
  revoke(n: number): Grant | null {
    const grants = this.active();
    if (!Number.isInteger(n) || n < 1 || n > grants.length) return null;
    const [gone] = grants.splice(n - 1, 1);
    this.#write(grants);
    return gone!;
  }

  #read(): Grant[] {
    const loaded = loadJsonFile(this.#path, {
      schema: fileSchema,
      log: this.#log,
      versions: GRANTS_VERSIONS,
      salvage: (raw) => {
        const s = salvageArray((raw as { grants?: unknown } | null)?.grants, "grants", grantSchema);
        return { value: { version: 1 as const, grants: s.value }, dropped: s.dropped };
      },
      now: this.#clock(),
    });
    return loaded.status === "ok" ? loaded.value.grants : [];
  }

  #write(grants: Grant[]): void {
    writeFileAtomic(this.#path, `${JSON.stringify({ version: 1, grants }, null, 2)}\n`);
  }
}

/**
 * Same tool, same place (folder, or SSH exec host: policy.ts `placeOf`), the pattern matches,
 * and, when the grant names a host, the call reaches that host and no other.
 */
export function covers(g: Grant, facts: ActionFacts): boolean {
  if (g.tool !== facts.tool || g.folder !== facts.folder) return false;
  if (!patternMatches(g.pattern, facts.command)) return false;
  return g.host === null || (facts.hosts.length > 0 && facts.hosts.every((h) => h === g.host));
}

/** One line per grant, numbered as `revoke` takes them; `now` for "for 23 more min". */
export function grantLines(grants: readonly Grant[], now: number, timezone: string): string[] {
  return grants.map((g, i) => {
    const left = g.expiresAt === null ? "always" : `${Math.max(1, Math.ceil((g.expiresAt - now) / 60_000))} more min`;
    const host = g.host ? ` → ${g.host}` : "";
    const when = new Intl.DateTimeFormat("en-GB", { timeZone: timezone, dateStyle: "short", timeStyle: "short" }).format(g.at);
    return `${i + 1}. ${g.tool === "exec" ? "" : `${g.tool}: `}${g.pattern} ${placeText(g.folder)}${host} — ${left} (by ${g.by}, ${when})`;
  });
}

/** The place of a connection grant: a chat (`chat:telegram:42`), or a session without one (`session:task:ab12`). */
export const CHAT_PLACE = "chat:";
export const SESSION_PLACE = "session:";

/** Where a call acts, for people: "in ~/code/site", "on nas" for a command on an SSH exec host, "in telegram chat 42" for a connection. */
export function placeText(place: string): string {
  if (place.startsWith(CHAT_PLACE)) {
    const [channel, ...id] = place.slice(CHAT_PLACE.length).split(":");
    return `in ${channel} chat ${id.join(":")}`;
  }
  if (place.startsWith(SESSION_PLACE)) return `in ${place.slice(SESSION_PLACE.length)}`;
  const host = execHostOf(place);
  return host === null ? `in ${shortFolder(place)}` : `on ${host}`;
}

/** `/home/ann/code/site` → `~/code/site` (the owner's home folder, not Hearth's). */
export function shortFolder(folder: string, userHome = process.env.HOME ?? ""): string {
  return userHome && (folder === userHome || folder.startsWith(`${userHome}/`)) ? `~${folder.slice(userHome.length)}` : folder;
}
