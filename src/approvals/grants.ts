// Grants (`<home>/grants.json`): what the owner allowed for a while ("Allow for 30 min") or for
// good ("Always"). A press grants exactly the call the question showed (a command's words,
// however quoted), in that folder, in that chat, perhaps only towards one host; a connection's,
// exactly the tool and action that connected, to that host and port (connection-grants.ts). A
// wider grant exists only when the owner chose one: a connection question's own worded choices
// (any command or fetch to the host and port, or to the host on any port), or `/grant PATTERN`.
// The file is read again for every question and listing, so `hearth grants revoke N` takes
// effect in a running daemon at once; it is written atomically. An expired grant is never used
// and is dropped at the next write.
import { readFileSync } from "node:fs";
import { z } from "zod";
import type { DeliveryTarget } from "../channels/channel.ts";
import type { Logger } from "../process/log.ts";
import { loadJsonFile, salvageArray, writeFileAtomic, type StateVersions } from "../state/storage.ts";
import { CONNECT, coversConnection, destinationText, wideReachText } from "./connection-grants.ts";
import { grantSchema, type Grant } from "./grant.ts";
import { execHostOf, patternMatches, type ActionFacts } from "./policy.ts";

export type { Grant };

const VERSION = 3;
const fileSchema = z.object({ version: z.literal(VERSION), grants: z.array(grantSchema) });

/**
 * grants.json's format versions: 0 is the file from before versions ({ grants }); 2 adds each
 * grant's kind and chat; 3 adds the port and the connection grants' reach. A version 1 grant is
 * a pattern a press made wider than the question showed (`rm -r *` from `rm -r build`), valid in
 * every chat: it is dropped, not guessed into a chat (the file before is kept as
 * grants.json.v1.bak, and the start logs how many went). A version 2 connection grant covered its
 * host for any command on any port, and the question it was pressed under said so ("Always
 * cover: host (any port), in this chat"): it becomes a `host` grant, which covers just that and is
 * listed in those words; narrowing it to one command or port would guess what the press was for.
 * Every other grant gets no port.
 */
const GRANTS_VERSIONS: StateVersions = {
  current: VERSION,
  steps: [
    { from: 0, name: "addVersion", apply: (raw) => raw },
    { from: 1, name: "dropGrantsWithoutChat", apply: (raw) => ({ ...raw, grants: [] }) },
    { from: 2, name: "keepHostGrantsHostWide", apply: (raw) => ({ ...raw, grants: Array.isArray(raw.grants) ? raw.grants.map(hostWide) : raw.grants }) },
  ],
};

/** A version 2 grant at version 3 (see GRANTS_VERSIONS). */
function hostWide(g: unknown): unknown {
  if (typeof g !== "object" || g === null) return g;
  const grant = g as Record<string, unknown>;
  return grant.tool === CONNECT ? { ...grant, kind: "host", port: null } : { ...grant, port: null };
}

/** The chat a run's grants belong to: its channel and chat id, or for background work without a chat, its session. */
export const chatKeyOf = (chat: DeliveryTarget | null, sessionKey: string): string => (chat ? `${chat.channel}:${chat.chatId}` : `session:${sessionKey}`);

export class GrantStore {
  readonly #path: string;
  readonly #log: Logger;
  readonly #clock: () => number;

  /** Reads the file once: an older one is migrated now, a newer one throws NewerStateError (a start then exits 2). */
  constructor(path: string, log: Logger, clock: () => number) {
    this.#path = path;
    this.#log = log;
    this.#clock = clock;
    const dropped = grantsBeforeChats(path);
    this.#read();
    if (dropped > 0) log.warn("approvals.grants_dropped", { file: path, count: dropped, reason: "made before grants were per chat and per exact command; the owner is asked again", keptAs: `${path}.v1.bak` });
  }

  /** The grants in force now, oldest first: `/grants` and `hearth grants` number them from 1 in this order. */
  active(): Grant[] {
    const now = this.#clock();
    return this.#read().filter((g) => g.expiresAt === null || g.expiresAt > now);
  }

  /** The grant in force that covers `facts` (a call, or a connection: connection-grants.ts) in the chat `chat` (`chatKeyOf`), or null. */
  covering(facts: ActionFacts, chat: string): Grant | null {
    return this.active().find((g) => covers(g, facts, chat)) ?? null;
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
        return { value: { version: VERSION as typeof VERSION, grants: s.value }, dropped: s.dropped };
      },
      now: this.#clock(),
    });
    return loaded.status === "ok" ? loaded.value.grants : [];
  }

  #write(grants: Grant[]): void {
    writeFileAtomic(this.#path, `${JSON.stringify({ version: VERSION, grants }, null, 2)}\n`);
  }
}

/** How many grants a file from before version 2 holds (the upgrade drops them); 0 when none or unreadable. */
function grantsBeforeChats(path: string): number {
  try {
    const raw = JSON.parse(readFileSync(path, "utf8")) as { version?: unknown; grants?: unknown };
    return (raw.version === undefined || raw.version === 0 || raw.version === 1) && Array.isArray(raw.grants) ? raw.grants.length : 0;
  } catch {
    return 0;
  }
}

/**
 * Same tool, same chat; a connection as its reach says (connection-grants.ts); any other call in
 * the same place (folder, or SSH exec host: policy.ts `placeOf`), the same command (a button's
 * grant) or one the owner's pattern matches, and, when the grant names a host, a call that names
 * that host alone and nothing that could send it elsewhere (a proxy, a config file, a second
 * destination).
 */
export function covers(g: Grant, facts: ActionFacts, chat: string): boolean {
  if (g.tool !== facts.tool || g.chat !== chat) return false;
  if (g.tool === CONNECT) return coversConnection(g, facts);
  if (g.folder !== facts.folder) return false;
  if (g.kind === "command" ? g.pattern !== facts.canonical : !patternMatches(g.pattern, facts.canonical)) return false;
  return g.host === null || (facts.hosts.length === 1 && facts.hosts[0] === g.host && !facts.reroutes);
}

/** Where a grant holds, for people: "chat telegram:100", "session cron:backup". */
export const chatText = (chat: string): string => (chat.startsWith("session:") ? `session ${chat.slice(8)}` : `chat ${chat}`);

/**
 * A grant for people: "rm -r build in ~/site (chat telegram:100)", "make * (your pattern) in ~/site …",
 * a connection's "exec: curl … in ~/site → example.com:443 (chat …)", "any command or fetch → example.com, any port (chat …)".
 */
export const grantText = (g: Grant): string => `${coverText(g)} (${chatText(g.chat)})`;

/** What a grant covers, without its chat: the dashboard shows the chat on a line of its own. */
export function coverText(g: Grant): string {
  if (g.tool === CONNECT) {
    if (g.kind === "destination" || g.kind === "host") return wideReachText(g.host ?? g.pattern, g.kind, g.port);
    return `${g.pattern}${g.folder === g.chat ? "" : ` ${placeText(g.folder)}`} → ${destinationText(g.host ?? "", g.port)}`;
  }
  return `${g.tool === "exec" ? "" : `${g.tool}: `}${g.pattern}${g.kind === "pattern" ? " (your pattern)" : ""} ${placeText(g.folder)}${g.host ? ` → ${g.host}` : ""}`;
}

/** One line per grant, numbered as `revoke` takes them; `now` for "for 23 more min". */
export function grantLines(grants: readonly Grant[], now: number, timezone: string): string[] {
  return grants.map((g, i) => {
    const left = g.expiresAt === null ? "always" : `${Math.max(1, Math.ceil((g.expiresAt - now) / 60_000))} more min`;
    const when = new Intl.DateTimeFormat("en-GB", { timeZone: timezone, dateStyle: "short", timeStyle: "short" }).format(g.at);
    return `${i + 1}. ${grantText(g)} — ${left} (by ${g.by}, ${when})`;
  });
}

/** Where a call acts, for people: "in ~/code/site", or "on nas" for a command on an SSH exec host. */
export function placeText(place: string): string {
  const host = execHostOf(place);
  return host === null ? `in ${shortFolder(place)}` : `on ${host}`;
}

/** `/home/ann/code/site` → `~/code/site` (the owner's home folder, not Hearth's). */
export function shortFolder(folder: string, userHome = process.env.HOME ?? ""): string {
  return userHome && (folder === userHome || folder.startsWith(`${userHome}/`)) ? `~${folder.slice(userHome.length)}` : folder;
}
