// The names Hearth knows its people and groups by, for the owner's screens: "Sam" for
// `dm:telegram:3003` (the name they paired with) and "Family" for `group:telegram:-2001` or
// `telegram:-2001` (the group's title as its last message carried it). An id alone tells the
// owner nothing; a name they did not give is never made up.
import type { PairingStore } from "../access/pairing.ts";
import type { SessionStore } from "../sessions.ts";

/**
 * Returns a lookup: a session key (`dm:<channel>:<userId>`, `group:<channel>:<chatId>[:<thread>]`)
 * or a chat (`<channel>:<id>`) → its name, or null when none is known (`main` included). The
 * lookup reads the stores as they are when it is made.
 */
export function chatNames(ctx: { sessions: Pick<SessionStore, "get" | "all">; pairing: Pick<PairingStore, "list"> }): (ref: string) => string | null {
  const names = new Map<string, string>();
  for (const s of ctx.sessions.all()) {
    if (!s.title) continue;
    names.set(s.key, s.title);
    const group = /^group:([a-z]+):([^:]+)/.exec(s.key);
    if (group && !names.has(`${group[1]}:${group[2]}`)) names.set(`${group[1]}:${group[2]}`, s.title);
  }
  for (const a of ctx.pairing.list().approved) {
    names.set(`${a.channel}:${a.userId}`, a.name);
    names.set(`dm:${a.channel}:${a.userId}`, a.name);
  }
  return (ref) => names.get(ref) ?? null;
}
