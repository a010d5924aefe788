// State files carry versions: an older file is migrated by steps (the old one kept as
// <name>.v<N>.bak), a newer one is refused whole and left untouched, never salvaged.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { PairingStore } from "../src/gateway/pairing.ts";
import { SessionStore } from "../src/gateway/sessions.ts";
import { createLogger } from "../src/log.ts";
import { JobStore } from "../src/scheduler/job-store.ts";
import { loadJsonFile, NewerStateError, type StateVersions } from "../src/storage.ts";

let dir: string;
let lines: string[];
const log = () => createLogger({ level: "debug", sink: { write: (l: string) => void lines.push(l) } });
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-versions-"));
  lines = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("loadJsonFile with versions", () => {
  const schema = z.object({ version: z.literal(3), items: z.array(z.object({ name: z.string(), size: z.number() })) });
  const versions: StateVersions = {
    current: 3,
    steps: [
      { from: 0, name: "wrapInObject", apply: (raw) => ({ items: raw.list }) },
      { from: 1, name: "renameTitle", apply: (raw) => ({ ...raw, items: (raw.items as { title: string }[]).map((i) => ({ name: i.title })) }) },
      { from: 2, name: "addSize", apply: (raw) => ({ ...raw, items: (raw.items as { name: string }[]).map((i) => ({ ...i, size: 0 })) }) },
    ],
  };

  it("runs every step from the file's version, keeps the old file, rewrites it and logs one line per step", () => {
    const file = join(dir, "state.json");
    const original = `{"list":[{"title":"a"}]}`;
    writeFileSync(file, original);
    const loaded = loadJsonFile(file, { schema, log: log(), versions });
    expect(loaded).toEqual({ status: "ok", value: { version: 3, items: [{ name: "a", size: 0 }] } });
    expect(readFileSync(`${file}.v0.bak`, "utf8")).toBe(original);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ version: 3, items: [{ name: "a", size: 0 }] });
    const steps = lines.map((l) => JSON.parse(l)).filter((e) => e.event === "state.migrated");
    expect(steps.map((e) => [e.from, e.to, e.step])).toEqual([
      [0, 1, "wrapInObject"],
      [1, 2, "renameTitle"],
      [2, 3, "addSize"],
    ]);
    // Read again: nothing left to do.
    lines = [];
    expect(loadJsonFile(file, { schema, log: log(), versions }).status).toBe("ok");
    expect(lines.filter((l) => l.includes("state.migrated"))).toEqual([]);
  });

  it("refuses a newer file and leaves it exactly as it was, with nothing set aside", () => {
    const file = join(dir, "state.json");
    const text = `{"version":4,"items":[{"name":"a","size":1,"colour":"red"}]}`;
    writeFileSync(file, text);
    expect(() => loadJsonFile(file, { schema, log: log(), versions })).toThrow(NewerStateError);
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(readdirSync(dir)).toEqual(["state.json"]);
  });
});

describe("Hearth's state files", () => {
  it("a sessions index from a newer Hearth stops the store with a clear sentence instead of dropping its sessions", () => {
    const file = join(dir, "index.json");
    const text = JSON.stringify({ version: 2, sessions: { main: { key: "main", scope: { kind: "main" }, createdAt: 1, lastActivityAt: 1, contextTokens: 0, future: true } }, today: { date: "2026-11-25", usage: {}, costUsd: 0, runs: 0 } });
    writeFileSync(file, text);
    expect(() => SessionStore.open(file, log(), "UTC")).toThrow(
      `${file} is state version 2, written by a newer Hearth; this one reads versions up to 1. Update Hearth (git pull && npm install), or restore the file this version wrote (index.json.v1.bak, if an upgrade left one).`,
    );
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(readdirSync(dir)).toEqual(["index.json"]);
  });

  it("a cron jobs file from a newer Hearth is refused, not emptied", () => {
    const file = join(dir, "jobs.json");
    const text = JSON.stringify({ version: 2, jobs: [{ id: "x", future: true }] });
    writeFileSync(file, text);
    expect(() => new JobStore(file, { timezone: "UTC", minEveryMs: 60_000 }, log()).load()).toThrow(NewerStateError);
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("pairing.json from before versions is migrated: every approved sender and pending code kept", () => {
    const file = join(dir, "pairing.json");
    const v0 = { pending: [{ code: "ABCD2345", channel: "telegram", userId: "7", name: "Ann", createdAt: Date.now() }], approved: [{ channel: "discord", userId: "9", name: "Bo", approvedAt: 5 }] };
    writeFileSync(file, JSON.stringify(v0));
    const store = PairingStore.open(file, log());
    expect(store.isApproved("discord", "9")).toBe(true);
    expect(store.list()).toEqual({ pending: v0.pending, approved: v0.approved });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ version: 1, ...v0 });
    expect(JSON.parse(readFileSync(`${file}.v0.bak`, "utf8"))).toEqual(v0);
  });
});
