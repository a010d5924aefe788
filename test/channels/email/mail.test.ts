import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readMail, withoutQuotedTail, wordsOf } from "../../../src/channels/email/mail-reading.ts";
import { answerMail, replySubject, simpleHtml } from "../../../src/channels/email/outbound.ts";
import { MailState } from "../../../src/channels/email/state.ts";
import { stopParsing } from "../../../src/parse/pool.ts";
import { NewerStateError } from "../../../src/state/versions.ts";

const mail = (headers: string, body = "Hello.") => Buffer.from(`${headers.trim().split("\n").join("\r\n")}\r\n\r\n${body}\r\n`);

describe("reading a mail", () => {
  afterEach(() => stopParsing());

  it("finds the thread's root in References, else In-Reply-To, else the mail itself", async () => {
    expect((await readMail(mail("From: a@b.test\nMessage-ID: <3@b.test>\nIn-Reply-To: <2@b.test>\nReferences: <1@b.test> <2@b.test>"), "<f@x>")).root).toBe("<1@b.test>");
    expect((await readMail(mail("From: a@b.test\nMessage-ID: <3@b.test>\nIn-Reply-To: <2@b.test>"), "<f@x>")).root).toBe("<2@b.test>");
    expect((await readMail(mail("From: a@b.test\nMessage-ID: <3@b.test>"), "<f@x>")).root).toBe("<3@b.test>");
    expect((await readMail(mail("From: a@b.test"), "<f@x>")).messageId).toBe("<f@x>");
  });

  it("names the mail it answers by In-Reply-To, else the last of its References (a question's mail is named either way)", async () => {
    expect((await readMail(mail("From: a@b.test\nMessage-ID: <3@b.test>\nIn-Reply-To: <2@b.test>\nReferences: <1@b.test> <9@b.test>"), "<f@x>")).parent).toBe("<2@b.test>");
    expect((await readMail(mail("From: a@b.test\nMessage-ID: <3@b.test>\nReferences: <1@b.test> <2@b.test>"), "<f@x>")).parent).toBe("<2@b.test>");
    expect((await readMail(mail("From: a@b.test\nMessage-ID: <3@b.test>"), "<f@x>")).parent).toBeUndefined();
  });

  it("keeps the Authentication-Results headers top first, and knows mail sent by a program", async () => {
    const m = await readMail(mail("Authentication-Results: mx.test; dkim=pass header.d=b.test\nAuthentication-Results: other.test; spf=fail\nFrom: A <A@B.test>\nAuto-Submitted: auto-replied"), "<f@x>");
    expect(m.authResults).toEqual(["mx.test; dkim=pass header.d=b.test", "other.test; spf=fail"]);
    expect(m.from).toEqual({ address: "a@b.test", name: "A" });
    expect(m.automatic).toBe(true);
    expect((await readMail(mail("From: a@b.test\nAuto-Submitted: no"), "<f@x>")).automatic).toBe(false);
    expect((await readMail(mail("From: a@b.test\nPrecedence: bulk"), "<f@x>")).automatic).toBe(true);
  });

  it("makes the sender's name and the subject printable", async () => {
    const m = await readMail(mail("From: =?utf-8?B?" + Buffer.from("Ann\u001b[8mBob").toString("base64") + "?= <a@b.test>\nSubject: =?utf-8?B?" + Buffer.from("Rent\u202edue").toString("base64") + "?="), "<f@x>");
    expect(m.from).toEqual({ address: "a@b.test", name: "Ann\ufffd[8mBob" });
    expect(m.subject).toBe("Rent\ufffddue");
  });

  it("takes no sender from a From: with two addresses", async () => {
    expect((await readMail(mail("From: a@b.test, c@d.test"), "<f@x>")).from).toBeNull();
  });

  it("leaves out the quoted mail an answer ends with, not quotes in its middle", () => {
    expect(withoutQuotedTail("Yes, Friday.\n\nOn Sat, 28 Nov 2026, Hearth wrote:\n> When?\n>\n> Later.\n\n")).toBe("Yes, Friday.\n");
    expect(withoutQuotedTail("> you said\nI agree.\n")).toBe("> you said\nI agree.");
    expect(withoutQuotedTail("2\n\n> 1. Allow once\n> 2. Deny")).toBe("2");
  });

  it("names the headers RFC 5322 allows once that a mail has twice, and none of a mail that follows the grammar", async () => {
    expect((await readMail(mail("From: a@b.test\nSubject: Lunch\nSubject: Wire the money\nTo: h@x.test\nTo: e@evil.test\nReceived: x\nReceived: y"), "<f@x>")).repeated).toEqual(["subject", "to"]);
    expect((await readMail(mail("From: a@b.test\nSubject: Lunch\nReceived: x\nReceived: y\nAuthentication-Results: mx.test; none\nAuthentication-Results: o.test; none"), "<f@x>")).repeated).toEqual([]);
  });

  it("reads an HTML-only body in the parse pool", async () => {
    const m = await readMail(mail("From: a@b.test\nContent-Type: text/html; charset=utf-8", "<html><body><h1>Rent</h1><p>Due on <b>Friday</b>.</p></body></html>"), "<f@x>");
    expect(m.text).toBe("");
    expect(await wordsOf(m)).toContain("Due on **Friday**.");
  });
});

describe("an answer as a mail", () => {
  it("keeps the subject with one Re:, escapes the HTML and threads by In-Reply-To and References", () => {
    expect(replySubject("Rent")).toBe("Re: Rent");
    expect(replySubject("RE: Rent")).toBe("RE: Rent");
    expect(replySubject("")).toBe("Re: (no subject)");
    expect(simpleHtml("a < b & c\nd\n\ne")).toBe('<!doctype html><html><body>\n<p>a &lt; b &amp; c<br>\nd</p>\n<p>e</p>\n</body></html>\n');
    const m = answerMail({ to: "a@b.test", subject: "Rent", last: "<2@b.test>", references: ["<1@b.test>", "<2@b.test>"], at: 0 }, "Friday.", "hearth@mail.test");
    expect(m).toMatchObject({ to: "a@b.test", subject: "Re: Rent", text: "Friday.\n", inReplyTo: "<2@b.test>", references: ["<1@b.test>", "<2@b.test>"] });
    expect(m.messageId).toMatch(/^<hearth\.[a-z0-9.-]+@mail\.test>$/);
  });

  it("derives a part's Message-ID from its key, so a mail sent again after a crash is the same mail", () => {
    const thread = { to: "a@b.test", subject: "Rent", last: "<2@b.test>", references: ["<2@b.test>"], at: 0 };
    const once = answerMail(thread, "Friday.", "hearth@mail.test", "email:7:41:0").messageId;
    expect(once).toMatch(/^<hearth\.[0-9a-f]{32}@mail\.test>$/);
    expect(answerMail(thread, "Friday.", "hearth@mail.test", "email:7:41:0").messageId).toBe(once);
    expect(answerMail(thread, "Friday.", "hearth@mail.test", "email:7:41:1").messageId).not.toBe(once);
    expect(answerMail(thread, "Friday.", "hearth@mail.test").messageId).not.toBe(answerMail(thread, "Friday.", "hearth@mail.test").messageId);
  });
});

describe("where reading stopped", () => {
  let home: string | undefined;
  afterEach(() => home && rmSync(home, { recursive: true, force: true }));

  it("starts at the folder's next UID the first time, keeps the cursor across a restart, and starts anew when the folder is renumbered", () => {
    home = mkdtempSync(join(tmpdir(), "hearth-mailstate-"));
    const first = new MailState(home, "INBOX");
    expect(first.cursor("7", 41)).toEqual({ lastUid: 40, fresh: true });
    first.noteMail("<1@b.test>", { to: "a@b.test", subject: "Rent", messageId: "<1@b.test>", references: [], uid: 41 });
    first.handled(41);
    const again = new MailState(home, "INBOX");
    expect(again.cursor("7", 45)).toEqual({ lastUid: 41, fresh: false });
    expect(again.thread("<1@b.test>")).toMatchObject({ to: "a@b.test", unseen: [41] });
    expect(again.cursor("8", 3)).toEqual({ lastUid: 2, fresh: true });
    expect(again.thread("<1@b.test>")?.unseen).toBeUndefined();
  });

  it("knows a sender's Message-ID read before as another mail (a replay) across a restart, and the same mail read again as no replay", () => {
    home = mkdtempSync(join(tmpdir(), "hearth-mailstate-"));
    const first = new MailState(home, "INBOX");
    first.cursor("7", 41);
    expect(first.replayed("a@b.test", "<1@b.test>", 41)).toBe(false);
    expect(first.replayed("a@b.test", "<1@b.test>", 41)).toBe(false);
    expect(first.replayed("a@b.test", "<1@b.test>", 42)).toBe(true);
    // Someone else who reuses it writes a mail of their own.
    expect(first.replayed("c@d.test", "<1@b.test>", 43)).toBe(false);
    const again = new MailState(home, "INBOX");
    expect(again.replayed("a@b.test", "<1@b.test>", 44)).toBe(true);
    expect(again.replayed("a@b.test", "<1@b.test>", 41)).toBe(false);
  });

  it("sets a damaged file aside and starts from now; refuses a newer one", () => {
    home = mkdtempSync(join(tmpdir(), "hearth-mailstate-"));
    writeFileSync(join(home, "email-state.json"), '{"version":1,"lastUid":');
    const state = new MailState(home, "INBOX");
    expect(state.damagedCopy).toMatch(/email-state\.json\.damaged-/);
    expect(existsSync(state.damagedCopy!)).toBe(true);
    expect(state.cursor("7", 10)).toEqual({ lastUid: 9, fresh: true });
    writeFileSync(join(home, "email-state.json"), JSON.stringify({ version: 2, folder: "INBOX", uidValidity: "7", lastUid: 3, threads: {} }));
    expect(() => new MailState(home!, "INBOX")).toThrow(NewerStateError);
  });
});
