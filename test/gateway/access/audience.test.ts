// Who can read a chat, judged on every message from the members the adapter reports: private
// only while the platform's direct chat holds its sender alone; shared from the first message with
// anyone else in it, and still shared after they leave, across restarts, until the owner's /private.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ChatMembers, InboundMessage } from "../../../src/channels/channel.ts";
import { ChatAudiences } from "../../../src/gateway/access/audience.ts";
import { grownChatText } from "../../../src/gateway/access/grown-chat.ts";
import { silentLogger } from "../../../src/process/log.ts";

const OWNER = "@ann:hs";
const GUEST = "@bob:hs";
let dir: string;
let file: string;
let now: number;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-audience-"));
  file = join(dir, "chat-audiences.json");
  now = 1_000;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const open = () => ChatAudiences.open(file, silentLogger, () => ++now);
const msg = (sender: string, members: ChatMembers, opts: { type?: "dm" | "group"; chat?: string; title?: string } = {}): InboundMessage => ({
  id: `m${++now}`,
  channel: "matrix",
  chat: opts.type === "group" ? { id: opts.chat ?? "!room:hs", type: "group", members } : { id: opts.chat ?? "!room:hs", type: "dm", members, ...(opts.title ? { title: opts.title } : {}) },
  sender: { id: sender, name: sender, isOwner: sender === OWNER },
  text: "hi",
  addressed: true,
  receivedAt: now,
});
const PRIVATE = { type: "private" };
const SHARED_DIRECT = { type: "shared", direct: true };

describe("a chat's audience", () => {
  it("is private only for a direct chat whose members are its sender alone; anything else, or not knowing, is shared", () => {
    const a = open();
    expect(a.judge(msg(OWNER, [OWNER]), [OWNER]).audience).toEqual(PRIVATE);
    expect(a.judge(msg(OWNER, [OWNER, GUEST], { chat: "!b:hs" }), [OWNER]).audience).toEqual(SHARED_DIRECT);
    expect(a.judge(msg(OWNER, "unknown", { chat: "!c:hs" }), [OWNER]).audience).toEqual(SHARED_DIRECT);
    expect(a.judge(msg(OWNER, [GUEST], { chat: "!d:hs" }), [OWNER]).audience).toEqual(SHARED_DIRECT);
    expect(a.judge(msg(OWNER, [OWNER], { type: "group", chat: "!e:hs" }), [OWNER]).audience).toEqual({ type: "shared", direct: false });
    // A message from before members were reported (an old inbox line, a cast): shared.
    const bare = msg(OWNER, [OWNER], { chat: "!f:hs" });
    delete (bare.chat as { members?: unknown }).members;
    expect(a.judge(bare, [OWNER]).audience).toEqual(SHARED_DIRECT);
  });

  it("turns shared with the first message after someone joins, says so once, and stays shared after they leave, across a restart", () => {
    const a = open();
    const first = msg(OWNER, [OWNER], { title: "Plans" });
    expect(a.judge(first, [OWNER])).toEqual({ audience: PRIVATE });
    a.notePrivate(first, true);
    expect(a.ownerChats()).toEqual([{ channel: "matrix", chatId: "!room:hs" }]);

    const joined = a.judge(msg(OWNER, [OWNER, GUEST]), [OWNER]);
    expect(joined).toEqual({ audience: SHARED_DIRECT, grew: { owners: true, others: [GUEST] } });
    expect(a.judge(msg(OWNER, [OWNER, GUEST]), [OWNER])).toEqual({ audience: SHARED_DIRECT });
    expect(a.judge(msg(OWNER, [OWNER]), [OWNER])).toEqual({ audience: SHARED_DIRECT });
    expect(a.ownerChats()).toEqual([]);
    expect(a.isShared({ channel: "matrix", chatId: "!room:hs" })).toBe(true);

    const later = open();
    expect(later.judge(msg(OWNER, [OWNER]), [OWNER])).toEqual({ audience: SHARED_DIRECT });
    expect(grownChatText(first, joined.grew!.others)).toBe(
      "🔓 @bob:hs can now read “Plans” (Matrix), a chat you had with me alone. I answer there as in a group from now on, without your private memory or our conversation. Once only you and I are in it again, send /private there.",
    );
  });

  it("is noticed on the newcomer's message too, and when the owner left and someone else is alone in it", () => {
    const a = open();
    a.notePrivate(msg(OWNER, [OWNER]), true);
    expect(a.judge(msg(GUEST, [OWNER, GUEST]), [OWNER]).grew).toEqual({ owners: true, others: [GUEST] });
    a.notePrivate(msg(OWNER, [OWNER], { chat: "!two:hs" }), true);
    expect(a.judge(msg(GUEST, [GUEST], { chat: "!two:hs" }), [OWNER])).toEqual({ audience: SHARED_DIRECT, grew: { owners: true, others: [GUEST] } });
    // A chat never answered as private, with someone alone in it: theirs (a stranger gets a pairing code).
    expect(a.judge(msg(GUEST, [GUEST], { chat: "!three:hs" }), [OWNER])).toEqual({ audience: PRIVATE });
  });

  it("keeps a room the platform no longer calls direct (a third member joined) shared and direct when it was private", () => {
    const a = open();
    a.notePrivate(msg(OWNER, [OWNER]), true);
    expect(a.judge(msg(OWNER, "unknown", { type: "group" }), [OWNER])).toEqual({ audience: SHARED_DIRECT, grew: { owners: true, others: [] } });
  });

  it("marks a direct chat the owner is in with others, but not a stranger's room of three", () => {
    const a = open();
    expect(a.judge(msg(GUEST, [GUEST, "@eve:hs"], { chat: "!x:hs" }), [OWNER])).toEqual({ audience: SHARED_DIRECT });
    expect(existsSync(file)).toBe(false);
    expect(a.judge(msg(OWNER, [OWNER, GUEST], { chat: "!y:hs" }), [OWNER])).toEqual({ audience: SHARED_DIRECT, grew: { owners: false, others: [GUEST] } });
    expect(a.judge(msg(OWNER, [OWNER], { chat: "!y:hs" }), [OWNER]).audience).toEqual(SHARED_DIRECT);
  });

  it("is private again only by the owner's /private on a message whose members are the owner alone", () => {
    const a = open();
    a.notePrivate(msg(OWNER, [OWNER]), true);
    a.judge(msg(OWNER, [OWNER, GUEST]), [OWNER]);
    expect(a.reopen(msg(OWNER, [OWNER, GUEST]))).toEqual({ type: "others", others: [GUEST] });
    expect(a.reopen(msg(OWNER, "unknown"))).toEqual({ type: "others", others: [] });
    expect(a.judge(msg(OWNER, [OWNER]), [OWNER]).audience).toEqual(SHARED_DIRECT);
    expect(a.reopen(msg(OWNER, [OWNER]))).toEqual({ type: "reopened" });
    expect(open().judge(msg(OWNER, [OWNER]), [OWNER])).toEqual({ audience: PRIVATE });
    expect(a.reopen(msg(OWNER, [OWNER]))).toEqual({ type: "private" });
    expect(a.reopen(msg(OWNER, [OWNER], { type: "group", chat: "!g:hs" }))).toEqual({ type: "group" });
  });
});
