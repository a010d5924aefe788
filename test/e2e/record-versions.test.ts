// Append-only state files version each record ("v", absent: 1). A record written by a newer Hearth
// stops `hearth start` and `hearth usage` with exit 2 and one sentence naming the file and line,
// and the file is left byte for byte as it was; a file from before versions is read as always.
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CONFIG_VERSION } from "../../src/config/migrations.ts";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { makeHome } from "../support/daemon.ts";

let home: string;
beforeEach(() => {
  home = makeHome({ version: CONFIG_VERSION, heartbeat: { every: "0" } });
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

// The fake key never reaches a model: the start stops before anything is sent.
const env = () => isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" });

/** A usage.jsonl line as Hearth wrote it before records had versions. */
const OLD_LINE = '{"kind":"model","at":"2026-11-20T09:00:00.000Z","day":"2026-11-20","session":"main","scope":"main","purpose":"chat","model":"claude-sonnet-4-5","inputTokens":1200,"outputTokens":80,"cacheReadTokens":0,"cacheWrite5mTokens":0,"cacheWrite1hTokens":0,"costUsd":0.0048}';
const NEWER_LINE = JSON.stringify({ v: 2, ...JSON.parse(OLD_LINE), currency: "EUR" });

/** What a person reads on the terminal: stderr without the daemon's JSON log lines. */
const said = (stderr: string) =>
  stderr
    .split("\n")
    .filter((l) => l && !l.startsWith("{"))
    .map((l) => `${l}\n`)
    .join("");

const refusal = (file: string, line: number) =>
  `hearth: ${file} line ${line} is record version 2, written by a newer Hearth; this one reads versions up to 1. Update Hearth (git pull && npm install); the file was left as it is.\n`;

describe("JSON-lines record versions (e2e)", () => {
  it("a usage record from a newer Hearth stops `hearth usage` and `hearth start` with exit 2, the file untouched", async () => {
    const file = join(home, "usage.jsonl");
    const text = `${OLD_LINE}\n${NEWER_LINE}\n`;
    writeFileSync(file, text);

    const usage = await runHearth(["usage", "--since", "2026-11-01"], env());
    expect(usage.stderr).toBe(refusal(file, 2));
    expect(usage.stdout).toBe("");
    expect(usage.code).toBe(2);

    const start = await runHearth(["start"], env());
    expect(said(start.stderr)).toBe(refusal(file, 2));
    expect(start.code).toBe(2);

    expect(readFileSync(file, "utf8")).toBe(text);
    expect(readdirSync(home).filter((n) => n.startsWith("usage.jsonl"))).toEqual(["usage.jsonl"]);
  });

  it("a tasks.jsonl record from a newer Hearth stops `hearth start` with exit 2, the file untouched", async () => {
    const file = join(home, "tasks.jsonl");
    const text = `{"v":2,"type":"spawned","id":"t1","label":"look","task":"look","parent":"main","target":{"channel":"cli","chatId":"local"},"depth":1,"at":1,"priority":"high"}\n`;
    writeFileSync(file, text);
    const start = await runHearth(["start"], env());
    expect(said(start.stderr)).toBe(refusal(file, 1));
    expect(start.code).toBe(2);
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("usage.jsonl from before versions: `hearth usage` reports it as it always did", async () => {
    writeFileSync(join(home, "usage.jsonl"), `${OLD_LINE}\n`);
    const usage = await runHearth(["usage", "--since", "2026-11-01", "--json"], env());
    expect(usage.stderr).toBe("");
    expect(usage.code).toBe(0);
    expect(JSON.parse(usage.stdout)).toMatchObject({ rows: [{ key: "2026-11-20", calls: 1, inputTokens: 1200, outputTokens: 80, costUsd: 0.0048 }], total: { calls: 1, costUsd: 0.0048 } });
  });
});
