import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../../src/channels/channel.ts";
import { decideAccess, type AccessRules } from "../../../src/gateway/access/access.ts";
import { parseCommand } from "../../../src/gateway/commands.ts";
import { ANSWER_INTERVAL_MS, CODE_LENGTH, CODE_TTL_MS, MAX_PENDING, PairingStore, RENEWAL_COOLDOWN_MS, type PairingRequest } from "../../../src/gateway/access/pairing.ts";
import { silentLogger } from "../../../src/process/log.ts";

let dir: string;
let now: number;
let pairing: PairingStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-access-"));
  now = 1_000_000;
  pairing = PairingStore.open(join(dir, "pairing.json"), silentLogger, () => now);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const rules = (over: Partial<AccessRules> = {}): AccessRules => ({
  ownerIds: ["1"],
  dmPolicy: "pairing",
  allowFrom: ["7"],
  groups: { policy: "allowlist", allow: ["-100"], requireMention: true },
  queueMode: null,
  ...over,
});
const dm = (sender: string): InboundMessage => ({
  id: "m",
  channel: "telegram",
  chat: { id: sender, type: "dm", members: [sender] },
  sender: { id: sender, name: `user${sender}`, isOwner: sender === "1" },
  text: "hi",
  addressed: true,
  receivedAt: 0,
});
const group = (chat: string, addressed: boolean, extra: { threadId?: string; scopeIds?: string[] } = {}): InboundMessage => ({
  ...dm("5"),
  chat: { id: chat, type: "group", ...extra },
  addressed,
});
/** How audience.ts judged the chat: the sender alone with the bot, a group, or a direct chat others can read. */
const PRIVATE = { type: "private" } as const;
const GROUP = { type: "shared", direct: false } as const;
const GROWN = { type: "shared", direct: true } as const;

describe("access", () => {
  it("puts the owner's DM in main and others' in their own shared session", () => {
    expect(decideAccess(dm("1"), rules(), pairing, PRIVATE)).toEqual({ type: "allow", sessionKey: "main", scope: "main", isOwner: true });
    expect(decideAccess(dm("7"), rules(), pairing, PRIVATE)).toEqual({ type: "allow", sessionKey: "dm:telegram:7", scope: "shared", isOwner: false });
  });

  it("asks strangers to pair, and admits them once approved", () => {
    expect(decideAccess(dm("9"), rules(), pairing, PRIVATE)).toEqual({ type: "pair" });
    const req = pairing.request("telegram", "9", "Nine");
    expect(req.type === "code" && pairing.approve(req.code.toLowerCase())).toMatchObject({ userId: "9" });
    expect(decideAccess(dm("9"), rules(), pairing, PRIVATE)).toMatchObject({ type: "allow", sessionKey: "dm:telegram:9", scope: "shared" });
  });

  it("refuses strangers under allowlist and everyone but the owner under disabled", () => {
    expect(decideAccess(dm("9"), rules({ dmPolicy: "allowlist" }), pairing, PRIVATE).type).toBe("refuse");
    expect(decideAccess(dm("7"), rules({ dmPolicy: "disabled" }), pairing, PRIVATE).type).toBe("refuse");
    expect(decideAccess(dm("1"), rules({ dmPolicy: "disabled" }), pairing, PRIVATE).type).toBe("allow");
  });

  it("fails closed for groups not on the allowlist and observes unaddressed ones", () => {
    expect(decideAccess(group("-200", true), rules(), pairing, GROUP).type).toBe("refuse");
    expect(decideAccess(group("-100", false), rules(), pairing, GROUP).type).toBe("observe");
    expect(decideAccess(group("-100", true, { threadId: "3" }), rules(), pairing, GROUP)).toMatchObject({ sessionKey: "group:telegram:-100:3", scope: "shared" });
    expect(decideAccess(group("chan", true, { scopeIds: ["-100"] }), rules(), pairing, GROUP).type).toBe("allow");
    expect(decideAccess(group("-300", false), rules({ groups: { policy: "open", allow: [], requireMention: false } }), pairing, GROUP).type).toBe("allow");
    expect(decideAccess(group("-100", true), rules({ groups: { policy: "disabled", allow: ["-100"], requireMention: true } }), pairing, GROUP).type).toBe("refuse");
  });

  it("answers the owner in a direct chat others can read in its shared session, and anyone else there as in a group", () => {
    const owner = { ...dm("1"), chat: { id: "1", type: "dm" as const, members: ["1", "9"] } };
    expect(decideAccess(owner, rules(), pairing, GROWN)).toEqual({ type: "allow", sessionKey: "group:telegram:1", scope: "shared", isOwner: true });
    expect(decideAccess(owner, rules({ groups: { policy: "disabled", allow: [], requireMention: true } }), pairing, GROWN)).toMatchObject({ type: "allow", scope: "shared" });
    expect(decideAccess({ ...owner, addressed: false }, rules(), pairing, GROWN)).toEqual({ type: "observe" });
    // The newcomer, and a paired person whose chat someone joined: the group rules, not their DM's.
    expect(decideAccess({ ...dm("9"), chat: owner.chat }, rules(), pairing, GROWN).type).toBe("refuse");
    expect(decideAccess({ ...dm("7"), chat: { id: "7", type: "dm", members: ["7", "9"] } }, rules(), pairing, GROWN).type).toBe("refuse");
    expect(decideAccess({ ...dm("9"), chat: owner.chat }, rules({ groups: { policy: "open", allow: [], requireMention: true } }), pairing, GROWN)).toMatchObject({ sessionKey: "group:telegram:1", scope: "shared", isOwner: false });
  });

  it("puts the owner in a group into the group's shared session, not main", () => {
    expect(decideAccess({ ...group("-100", true), sender: { id: "1", name: "Owner", isOwner: true } }, rules(), pairing, GROUP)).toMatchObject({ scope: "shared" });
  });
});

describe("pairing codes", () => {
  const code = (r: PairingRequest): string => {
    if (r.type !== "code") throw new Error(`expected a code, got ${JSON.stringify(r)}`);
    return r.code;
  };

  it("are 8 unambiguous characters; one per sender, who is answered at most once an hour", () => {
    const a = pairing.request("telegram", "a", "A");
    expect(code(a)).toMatch(new RegExp(`^[A-HJKMNP-Z2-9]{${CODE_LENGTH}}$`));
    expect(a).toMatchObject({ isNew: true });
    for (let i = 0; i < 29; i++) {
      now += 60_000;
      expect(pairing.request("telegram", "a", "A")).toEqual({ type: "silent" });
    }
    expect(pairing.list().pending).toHaveLength(1);
  });

  it("holds at most the channel's configured number of pending codes", () => {
    expect(pairing.request("telegram", "1", "A", 1).type).toBe("code");
    expect(pairing.request("telegram", "2", "B", 1)).toEqual({ type: "full" });
    expect(pairing.request("discord", "3", "C", 1).type).toBe("code");
    expect(pairing.list().pending.map((p) => `${p.channel}:${p.userId}`)).toEqual(["telegram:1", "discord:3"]);
  });

  it("3 accounts × 5 requests hold at most MAX_PENDING codes; after expiry they wait and others can pair", () => {
    expect(MAX_PENDING).toBe(3);
    const replies: PairingRequest[] = [];
    for (let round = 0; round < 5; round++) {
      for (const account of ["x1", "x2", "x3"]) replies.push(pairing.request("telegram", account, "Mallory"));
      now += 10 * 60_000;
    }
    expect(replies.filter((r) => r.type === "code")).toHaveLength(3);
    expect(replies.filter((r) => r.type !== "code").map((r) => r.type)).toEqual(Array(12).fill("silent"));
    expect(pairing.list().pending.map((p) => p.userId)).toEqual(["x1", "x2", "x3"]);
    // A fourth person finds the slots taken (told once), and once more after an hour.
    expect(pairing.request("telegram", "alice", "Alice")).toEqual({ type: "full" });
    expect(pairing.request("telegram", "alice", "Alice")).toEqual({ type: "silent" });

    now = 1_000_000 + CODE_TTL_MS; // the three codes expire, unapproved
    for (const account of ["x1", "x2", "x3"]) {
      expect(pairing.request("telegram", account, "Mallory")).toEqual({ type: "cooldown", until: 1_000_000 + CODE_TTL_MS + RENEWAL_COOLDOWN_MS });
    }
    const carol = code(pairing.request("telegram", "carol", "Carol"));
    expect(pairing.approve(carol)).toMatchObject({ userId: "carol" });
    now += ANSWER_INTERVAL_MS;
    code(pairing.request("telegram", "alice", "Alice"));
    expect(pairing.list().pending.map((p) => p.userId)).toEqual(["alice"]);
    // The cooldown ends an hour after the expiry: the accounts may ask again, like anyone.
    now = 1_000_000 + CODE_TTL_MS + RENEWAL_COOLDOWN_MS;
    expect(pairing.request("telegram", "x1", "Mallory")).toMatchObject({ type: "code", isNew: true });
  });

  it("a repeated request never renews a code: it expires an hour after it was made", () => {
    const first = code(pairing.request("telegram", "a", "A"));
    now += ANSWER_INTERVAL_MS - 1;
    expect(pairing.request("telegram", "a", "A")).toEqual({ type: "silent" });
    now += 1;
    expect(pairing.approve(first)).toBeNull();
    expect(pairing.list().pending).toEqual([]);
  });

  it("are limited per channel: a full Telegram does not stop Discord", () => {
    for (const u of ["1", "2", "3"]) code(pairing.request("telegram", u, "T"));
    expect(pairing.request("telegram", "4", "T")).toEqual({ type: "full" });
    expect(pairing.request("discord", "4", "D")).toMatchObject({ type: "code" });
  });

  it("codes that expire after a restart still make their senders wait", () => {
    code(pairing.request("telegram", "a", "A"));
    now += CODE_TTL_MS + 5 * 60_000;
    const restarted = PairingStore.open(join(dir, "pairing.json"), silentLogger, () => now);
    expect(restarted.request("telegram", "a", "A")).toEqual({ type: "cooldown", until: 1_000_000 + CODE_TTL_MS + RENEWAL_COOLDOWN_MS });
    expect(restarted.request("telegram", "b", "B")).toMatchObject({ type: "code" });
  });

  it("a restart does not answer a sender again within the hour of their code", () => {
    const first = code(pairing.request("telegram", "a", "A"));
    now += 20 * 60_000;
    const restarted = PairingStore.open(join(dir, "pairing.json"), silentLogger, () => now);
    expect(restarted.request("telegram", "a", "A")).toEqual({ type: "silent" });
    now = 1_000_000 + ANSWER_INTERVAL_MS - 1;
    expect(restarted.request("telegram", "a", "A")).toEqual({ type: "silent" });
    now += 1;
    // The code expires at the same moment: the sender is told to wait, never given a renewal.
    expect(restarted.request("telegram", "a", "A")).toEqual({ type: "cooldown", until: 1_000_000 + CODE_TTL_MS + RENEWAL_COOLDOWN_MS });
    expect(restarted.approve(first)).toBeNull();
  });

  it("persist approvals and revocations", () => {
    const r = pairing.request("discord", "42", "Fortytwo");
    if (r.type === "code") pairing.approve(r.code);
    expect(PairingStore.open(join(dir, "pairing.json"), silentLogger).isApproved("discord", "42")).toBe(true);
    expect(pairing.revoke("discord", "42")).toBe(true);
    expect(PairingStore.open(join(dir, "pairing.json"), silentLogger).isApproved("discord", "42")).toBe(false);
  });

  it("a denied code is gone for good, its sender is not approved and waits as after an expiry", () => {
    const c = code(pairing.request("telegram", "a", "A"));
    expect(pairing.deny(c.toLowerCase())).toMatchObject({ code: c, channel: "telegram", userId: "a" });
    expect(pairing.deny(c)).toBeNull();
    expect(pairing.approve(c)).toBeNull();
    expect(PairingStore.open(join(dir, "pairing.json"), silentLogger).list().pending).toEqual([]);
    now += ANSWER_INTERVAL_MS;
    expect(pairing.request("telegram", "a", "A").type).toBe("cooldown");
  });
});

describe("parseCommand", () => {
  it.each([
    ["/stop", { name: "stop", args: "" }],
    ["stop", { name: "stop", args: "" }],
    ["Stop!", { name: "stop", args: "" }],
    ["/queue collect", { name: "queue", args: "collect" }],
    ["/compact  keep the plan ", { name: "compact", args: "keep the plan" }],
  ])("%j", (text, expected) => expect(parseCommand(text)).toEqual(expected));

  it.each(["stop the music", "please /stop", "hello", "/", "/stop@OtherBot"])("ignores %j", (text) => expect(parseCommand(text)).toBeNull());
});
