// The terminal's mailbox: a scheduled answer for the terminal while no `hearth chat` is open is
// kept and printed when `hearth chat` next connects — once — and `hearth status` counts it.
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/scheduler/run-log.ts";
import type { JobView } from "../../src/scheduler/view.ts";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";

let fake: FakeModel;
let home: string;
let daemon: Daemon | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
  home = makeHome({ timezone: "UTC", heartbeat: { every: "0" } });
  daemon = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await fake.close();
});

const env = () => ({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
const hearth = (args: string[], input?: string, onSpawn?: (c: ChildProcess) => void) =>
  runHearth(args, isolatedEnv({ HEARTH_HOME: home, ...env() }), { ...(input === undefined ? {} : { input }), ...(onSpawn ? { onSpawn } : {}) });
const runs = (): RunRecord[] => {
  const file = join(home, "cron", "runs.jsonl");
  return existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as RunRecord) : [];
};

describe("the terminal's mailbox (daemon e2e)", () => {
  it("a cron answer for the terminal with no chat open is printed by the next hearth chat, once, and status counts it", async () => {
    daemon = await startDaemon(home, env());
    const add = await hearth(["cron", "add", "--name", "Stretch", "--cron", "0 0 1 1 *", "--message", "Tell me to stretch"]);
    expect(add.code, add.stderr).toBe(0);
    const [job] = JSON.parse((await hearth(["cron", "list", "--json"])).stdout) as JobView[];

    fake.enqueue(text("Time to stretch your legs!"));
    expect((await hearth(["cron", "run", job!.id])).code).toBe(0);
    await waitFor("the run's record", () => runs().some((r) => r.status === "ok"), 60_000);
    const done = runs().find((r) => r.status === "ok") as Extract<RunRecord, { status: "ok" | "error" }>;
    expect(done.delivery).toEqual({ status: "mailbox", to: "cli" });
    expect(done.notified).toBeUndefined();

    const list = await hearth(["cron", "list"]);
    expect(list.stdout).toContain("last ok (mailbox)");
    const status = await hearth(["status"]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`\nTerminal: 1 message waits; \`npx hearth chat\` shows it.\n`);

    // A one-shot message leaves the mailbox alone: its stdout is exactly the answer.
    fake.enqueue(text("Pong."));
    const once = await hearth(["chat", "-m", "ping"]);
    expect(once).toEqual({ code: 0, stdout: "Pong.\n", stderr: "" });

    const [letter] = (JSON.parse(readFileSync(join(home, "terminal-mailbox.json"), "utf8")) as { letters: Array<{ at: number }> }).letters;
    const when = new Date(letter!.at);
    const chat = await hearth(["chat"], "");
    expect(chat.code, chat.stderr).toBe(0);
    const stamp = `${when.toISOString().slice(0, 10)} ${when.toISOString().slice(11, 16)}`;
    expect(chat.stdout).toBe(`── while no terminal was open: cron job "Stretch" (${job!.id}), ${stamp} ──\nTime to stretch your legs!\n\n`);
    expect(chat.stderr).toBe("");

    const again = await hearth(["chat"], "");
    expect(again).toEqual({ code: 0, stdout: "", stderr: "" });
    expect((await hearth(["status"])).stdout).not.toContain("Terminal:");
  }, 120_000); // about a dozen CLI processes in a row: generous for a loaded machine

  it("the answer to a chat -m that was closed before it came is printed by the next hearth chat, labelled with the message", async () => {
    daemon = await startDaemon(home, env());
    const go = join(home, "workspace", "go");
    fake.enqueue(toolCall("exec", { command: "while [ ! -f go ]; do sleep 0.05; done" }), text("Done waiting."));
    let client: ChildProcess | undefined;
    const once = hearth(["chat", "-m", "wait for the go file"], undefined, (c) => (client = c));
    await waitFor("the model asked", () => fake.requests.length === 1);
    client!.kill("SIGKILL");
    await once.catch(() => {});
    writeFileSync(go, "");
    await waitFor("the answer kept", () => existsSync(join(home, "terminal-mailbox.json")) && readFileSync(join(home, "terminal-mailbox.json"), "utf8").includes("Done waiting."));
    const chat = await hearth(["chat"], "");
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toMatch(/^── while no terminal was open: the answer to "wait for the go file", \d{4}-\d{2}-\d{2} \d{2}:\d{2} ──\nDone waiting\.\n\n$/);
  });
});
