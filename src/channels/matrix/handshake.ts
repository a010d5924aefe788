// The Matrix owner handshake of `hearth setup`, on the client-server API alone (no SDK): the
// wizard syncs as the bot from now on (an old message can never count), joins the direct chats
// it is invited to, and the first message carrying the one-time code (../owner-code.ts) whose
// sender `accept` confirms names the owner. Unencrypted direct chats only: the wizard has no
// crypto, so the owner is asked to start the chat without encryption or to type the code in any
// room the bot was invited to. Failures are values that never contain the token.
import { carriesOwnerCode } from "../owner-code.ts";
import { printable } from "../printable.ts";
import type { OwnerHandshake, SetupSender } from "../descriptor.ts";
import { getJson, unreachable } from "../online-check.ts";

export async function awaitMatrixOwner(
  token: string,
  homeserverUrl: string,
  o: { code: string; botName: string; waitMs: number; greeting: string; ready(botName: string): void; accept(s: SetupSender): Promise<boolean>; ignored(s: SetupSender): void },
): Promise<OwnerHandshake> {
  const base = homeserverUrl.replace(/\/+$/, "");
  const auth = { Authorization: `Bearer ${token}` };
  const where = new URL(base).host;
  const api = (p: string) => `${base}/_matrix/client/v3${p}`;
  let since: string;
  try {
    const first = await getJson(api("/sync?timeout=0&filter=" + encodeURIComponent(JSON.stringify({ room: { timeline: { limit: 0 } } }))), auth);
    if (first.status !== 200) return { kind: "failed", problem: `the homeserver at ${where} answered HTTP ${first.status} to /sync` };
    since = first.body.next_batch;
  } catch (err) {
    const u = unreachable(where, err);
    return { kind: "failed", problem: u.problem };
  }
  o.ready(o.botName);
  const until = Date.now() + o.waitMs;
  while (Date.now() < until) {
    let r: { status: number; body: any };
    try {
      r = await getJson(api(`/sync?timeout=${Math.min(10_000, Math.max(0, until - Date.now()))}&since=${encodeURIComponent(since)}`), auth);
    } catch {
      continue;
    }
    if (r.status !== 200) return { kind: "failed", problem: `the homeserver at ${where} answered HTTP ${r.status} to /sync` };
    since = r.body.next_batch;
    for (const roomId of Object.keys(r.body.rooms?.invite ?? {})) await getJson(api(`/rooms/${encodeURIComponent(roomId)}/join`), auth, undefined, {}).catch(() => {});
    for (const [roomId, room] of Object.entries<any>(r.body.rooms?.join ?? {})) {
      for (const e of room.timeline?.events ?? []) {
        if (e.type !== "m.room.message" || e.sender === o.botName) continue;
        const sender: SetupSender = { id: e.sender, name: printable(e.sender) };
        if (!carriesOwnerCode(e.content?.body, o.code)) {
          o.ignored(sender);
          continue;
        }
        if (!(await o.accept(sender))) continue;
        const txn = `hearth-setup-${Date.now()}`;
        await fetch(api(`/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${txn}`), { method: "PUT", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ msgtype: "m.text", body: o.greeting }) }).catch(() => {});
        return { kind: "owner", sender };
      }
    }
  }
  return { kind: "timeout" };
}
