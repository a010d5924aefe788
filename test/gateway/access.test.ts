import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/channel.ts";
import { decideAccess, type AccessRules } from "../../src/gateway/access.ts";
import { parseCommand } from "../../src/gateway/commands.ts";
import { CODE_LENGTH, CODE_TTL_MS, MAX_PENDING, PairingStore } from "../../src/gateway/pairing.ts";
import { silentLogger } from "../../src/log.ts";

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
  chat: { id: sender, type: "dm" },
  sender: { id: sender, name: `user${sender}`, isOwner: sender === "1" },
  text: "hi",
  addressed: true,
  receivedAt: 0,
});
const group = (chat: string, addressed: boolean, extra: Partial<InboundMessage["chat"]> = {}): InboundMessage => ({
  ...dm("5"),
  chat: { id: chat, type: "group", ...extra },
  addressed,
});

describe("access", () => {
  it("puts the owner's DM in main and others' in their own shared session", () => {
    expect(decideAccess(dm("1"), rules(), pairing)).toEqual({ type: "allow", sessionKey: "main", scope: "main", isOwner: true });
    expect(decideAccess(dm("7"), rules(), pairing)).toEqual({ type: "allow", sessionKey: "dm:telegram:7", scope: "shared", isOwner: false });
  });

  it("asks strangers to pair, and admits them once approved", () => {
    expect(decideAccess(dm("9"), rules(), pairing)).toEqual({ type: "pair" });
    const req = pairing.request("telegram", "9", "Nine");
    expect(req.type === "code" && pairing.approve(req.code.toLowerCase())).toMatchObject({ userId: "9" });
    expect(decideAccess(dm("9"), rules(), pairing)).toMatchObject({ type: "allow", sessionKey: "dm:telegram:9", scope: "shared" });
  });

  it("refuses strangers under allowlist and everyone but the owner under disabled", () => {
    expect(decideAccess(dm("9"), rules({ dmPolicy: "allowlist" }), pairing).type).toBe("refuse");
    expect(decideAccess(dm("7"), rules({ dmPolicy: "disabled" }), pairing).type).toBe("refuse");
    expect(decideAccess(dm("1"), rules({ dmPolicy: "disabled" }), pairing).type).toBe("allow");
  });

  it("fails closed for groups not on the allowlist and observes unaddressed ones", () => {
    expect(decideAccess(group("-200", true), rules(), pairing).type).toBe("refuse");
    expect(decideAccess(group("-100", false), rules(), pairing).type).toBe("observe");
    expect(decideAccess(group("-100", true, { threadId: "3" }), rules(), pairing)).toMatchObject({ sessionKey: "group:telegram:-100:3", scope: "shared" });
    expect(decideAccess(group("chan", true, { scopeIds: ["-100"] }), rules(), pairing).type).toBe("allow");
    expect(decideAccess(group("-300", false), rules({ groups: { policy: "open", allow: [], requireMention: false } }), pairing).type).toBe("allow");
    expect(decideAccess(group("-100", true), rules({ groups: { policy: "disabled", allow: ["-100"], requireMention: true } }), pairing).type).toBe("refuse");
  });

  it("puts the owner in a group into the group's shared session, not main", () => {
    expect(decideAccess({ ...group("-100", true), sender: { id: "1", name: "Owner", isOwner: true } }, rules(), pairing)).toMatchObject({ scope: "shared" });
  });
});

describe("pairing codes", () => {
  it("are 8 unambiguous characters, reused per sender, at most 3 pending, expiring after an hour", () => {
    const a = pairing.request("telegram", "a", "A");
    expect(a.type === "code" && a.code).toMatch(new RegExp(`^[A-HJKMNP-Z2-9]{${CODE_LENGTH}}$`));
    expect(pairing.request("telegram", "a", "A")).toEqual({ ...a, isNew: false });
    for (let i = 1; i < MAX_PENDING; i++) pairing.request("telegram", `u${i}`, "U");
    expect(pairing.request("telegram", "late", "L")).toEqual({ type: "full" });
    now += CODE_TTL_MS;
    expect(pairing.request("telegram", "late", "L").type).toBe("code");
    expect(a.type === "code" && pairing.approve(a.code)).toBeNull();
  });

  it("persist approvals and revocations", () => {
    const r = pairing.request("discord", "42", "Fortytwo");
    if (r.type === "code") pairing.approve(r.code);
    expect(PairingStore.open(join(dir, "pairing.json"), silentLogger).isApproved("discord", "42")).toBe(true);
    expect(pairing.revoke("discord", "42")).toBe(true);
    expect(PairingStore.open(join(dir, "pairing.json"), silentLogger).isApproved("discord", "42")).toBe(false);
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
