// The terminal's mailbox file: bounded, durable, labelled, and never a reason for a chat to hang.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_LETTERS, TerminalMailboxFile } from "../../../src/gateway/delivery/terminal-mailbox.ts";
import { createLogger } from "../../../src/process/log.ts";

let dir: string;
let logged: string[];
const log = () => createLogger({ level: "debug", sink: { write: (l) => void logged.push(l) } });
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-mailbox-"));
  logged = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const AT = Date.UTC(2026, 10, 25, 7, 0);

describe("TerminalMailboxFile", () => {
  it("keeps letters with their time in the owner's zone, on disk before keep returns, and hands each out once", () => {
    const file = join(dir, "terminal-mailbox.json");
    const box = TerminalMailboxFile.open(file, log(), "Europe/Berlin", AT);
    box.keep({ from: 'cron job "Stretch" (a1b2c3d4)', at: AT, text: "Stretch!" });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ version: 1, letters: [{ from: 'cron job "Stretch" (a1b2c3d4)', at: AT, when: "2026-11-25 08:00", text: "Stretch!" }] });
    const reopened = TerminalMailboxFile.open(file, log(), "Europe/Berlin", AT);
    expect(reopened.count()).toBe(1);
    expect(reopened.takeAll().map((l) => l.text)).toEqual(["Stretch!"]);
    expect(reopened.takeAll()).toEqual([]);
    expect(TerminalMailboxFile.open(file, log(), "UTC", AT).count()).toBe(0);
  });

  it("keeps the last 50 and logs what it dropped", () => {
    const box = TerminalMailboxFile.open(join(dir, "m.json"), log(), "UTC", AT);
    for (let i = 1; i <= MAX_LETTERS + 2; i++) box.keep({ from: "Hearth", at: AT + i, text: `n${i}` });
    const letters = box.takeAll();
    expect(letters).toHaveLength(MAX_LETTERS);
    expect(letters[0]!.text).toBe("n3");
    expect(logged.filter((l) => l.includes("mailbox.dropped_oldest"))).toHaveLength(2);
  });

  it("a mailbox whose emptied file cannot be written still hands its letters out (a repeat later, never a hang)", () => {
    const file = join(dir, "m.json");
    const box = TerminalMailboxFile.open(file, log(), "UTC", AT);
    box.keep({ from: "heartbeat", at: AT, text: "Check the oven." });
    // A folder where the file was: the atomic rename onto it fails, whoever runs the test.
    rmSync(file);
    mkdirSync(file);
    writeFileSync(join(file, "x"), "");
    expect(box.takeAll().map((l) => l.text)).toEqual(["Check the oven."]);
    expect(box.count()).toBe(0);
    expect(logged.some((l) => l.includes("mailbox.clear_failed"))).toBe(true);
  });
});
