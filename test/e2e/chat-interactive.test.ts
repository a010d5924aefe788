// `hearth chat` as a conversation: lines in, streamed answers out, Ctrl+C stops an answer
// without ending the program, end of input (Ctrl+D) quits.
import { spawn } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hearthBin, isolatedEnv, repoRoot } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";

let fake: FakeModel;
let daemon: Daemon | undefined;
let home: string;
beforeEach(async () => {
  fake = await startFakeModel();
  home = makeHome({});
  daemon = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await fake.close();
});

function interactive(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [hearthBin, "chat"], { env, cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  return { child, exited, out: () => stdout, err: () => stderr, say: (line: string) => child.stdin.write(`${line}\n`) };
}

describe("hearth chat (interactive)", () => {
  for (const mode of ["daemon", "embedded"] as const) {
    it(`streams answers with tool lines, stops an answer on Ctrl+C and quits at end of input (${mode})`, async () => {
      const env = isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
      if (mode === "daemon") daemon = await startDaemon(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
      const chat = interactive(env);

      fake.enqueue(toolCall("exec", { command: "echo ok" }), text("First answer, streamed.", { chunkSize: 4, chunkDelayMs: 20 }));
      chat.say("first question");
      await waitFor("the first answer", () => chat.out().includes("First answer, streamed."));
      expect(chat.err()).toContain("→ exec: echo ok");

      fake.enqueue(toolCall("exec", { command: "sleep 30" }));
      chat.say("run something slow");
      await waitFor("the slow tool to start", () => chat.err().includes("→ exec: sleep 30"));
      chat.child.kill("SIGINT");
      await waitFor("the answer to stop", () => chat.out().includes("(Stopped.)"));
      expect(chat.child.exitCode).toBeNull();

      fake.enqueue(text("Still here."));
      chat.say("are you still there?");
      await waitFor("the third answer", () => chat.out().includes("Still here."));
      chat.child.stdin.end();
      expect(await chat.exited).toBe(0);
      expect(fake.requests).toHaveLength(4); // 2 for the first answer, 1 before the stop, 1 after
    });
  }
});

describe("/help in the terminal", () => {
  it("lists the chat commands, then /attach, which the terminal handles itself", async () => {
    const env = isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
    daemon = await startDaemon(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
    const chat = interactive(env);
    chat.say("/help");
    const attach = "/attach PATH [message] — attach a file from this machine: with a message, sent at once; alone, it goes with your next message\n";
    await waitFor("the help", () => chat.out().includes(attach));
    chat.child.stdin.end();
    expect(await chat.exited).toBe(0);
    expect(chat.out()).toMatch(/^Commands:\n\/stop — stop the current answer and drop queued messages\n[^]*\n\/help — this list\n\/attach PATH \[message\] — attach a file from this machine: with a message, sent at once; alone, it goes with your next message\n$/);
    expect(fake.requests).toHaveLength(0);
  });
});
