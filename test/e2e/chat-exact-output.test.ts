// The terminal prints each answer exactly once, in every mode: the whole stdout is compared.
// Each case runs through the daemon and with the gateway embedded in the chat process.
import { spawn } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hearthBin, isolatedEnv, repoRoot, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { requestText, startFakeModel, text, type FakeModel } from "../support/fake-model.ts";

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

const modelEnv = () => ({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
const env = () => isolatedEnv({ HEARTH_HOME: home, ...modelEnv() });

/** A tool call preceded by some text in the same model message. */
const sayThenRun = (said: string, command: string) => ({ type: "message" as const, blocks: [{ text: said }, { tool: "exec", input: { command } }] });

function interactive() {
  const child = spawn(process.execPath, [hearthBin, "chat"], { env: env(), cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  return { child, exited, out: () => stdout, err: () => stderr, say: (line: string) => child.stdin.write(`${line}\n`) };
}

for (const mode of ["daemon", "embedded"] as const) {
  describe(`hearth chat prints each answer once (${mode})`, () => {
    beforeEach(async () => {
      if (mode === "daemon") daemon = await startDaemon(home, modelEnv());
    });

    it("chat -m with a tool run: the reply exactly, tool progress on stderr", async () => {
      fake.enqueue(sayThenRun("Checking.", "echo files"), text("Here are your files.", { chunkSize: 5 }));
      const r = await runHearth(["chat", "-m", "list my files"], env());
      expect(r.stdout).toEqual("Checking.\n\nHere are your files.\n");
      expect(r.stderr).not.toContain("restarted");
      expect(r.stderr).toContain("→ exec: echo files\n");
      expect(r.code).toBe(0);
    });

    it("chat -m stopped by Ctrl+C: the partial answer and the note, once", async () => {
      fake.enqueue(sayThenRun("Starting the long job.", "sleep 30"));
      let stderr = "";
      let interrupted = false;
      const r = await runHearth(["chat", "-m", "run the long job"], env(), {
        onSpawn: (child) => {
          child.stderr!.on("data", (d: Buffer) => {
            stderr += d.toString();
            // One Ctrl+C: a second one after the answer ended would end the program, as in a shell.
            if (!interrupted && stderr.includes("→ exec: sleep 30")) {
              interrupted = true;
              child.kill("SIGINT");
            }
          });
        },
      });
      expect(r.stdout).toEqual("Starting the long job.\n\n(Stopped.)\n");
      expect(r.stderr).toEqual("→ exec: sleep 30\n  ■ exec stopped\n");
      expect(r.code).toBe(130);
    });

    it("interactive through a pipe: two questions, two answers, each once", async () => {
      const chat = interactive();
      fake.enqueue(text("ok"));
      chat.say("hi");
      await fake.waitForRequests(1);
      await waitFor("the first answer", () => chat.out() === "ok\n");
      fake.enqueue(sayThenRun("Looking.", "echo x"), text("Found it.", { chunkSize: 3 }));
      chat.say("find it");
      chat.child.stdin.end();
      expect(await chat.exited).toBe(0);
      expect(chat.out()).toEqual("ok\nLooking.\n\nFound it.\n");
      expect(chat.err()).not.toContain("restarted");
    });

    it("interactive, Ctrl+C mid-answer: the partial answer once, then the next answer", async () => {
      const chat = interactive();
      fake.enqueue(sayThenRun("Working on it.", "sleep 30"));
      chat.say("do the slow thing");
      await waitFor("the slow tool", () => chat.err().includes("→ exec: sleep 30"));
      chat.child.kill("SIGINT");
      await waitFor("the stop", () => chat.out().includes("(Stopped.)"));
      fake.enqueue(text("Still here."));
      chat.say("still there?");
      await waitFor("the next answer", () => chat.out().includes("Still here."));
      chat.child.stdin.end();
      expect(await chat.exited).toBe(0);
      expect(chat.out()).toEqual("Working on it.\n\n(Stopped.)\nStill here.\n");
      expect(chat.err()).toEqual("→ exec: sleep 30\n  ■ exec stopped\n");
    });

    it("interactive, a message that steers the running answer: one answer, printed once", async () => {
      const chat = interactive();
      fake.enqueue(sayThenRun("Let me look.", "sleep 2"), text("Both done: the report and the summary.", { chunkSize: 4 }));
      chat.say("write the report");
      await waitFor("the tool", () => chat.err().includes("→ exec: sleep 2"));
      chat.say("and add a summary");
      await fake.waitForRequests(2);
      chat.child.stdin.end();
      expect(await chat.exited).toBe(0);
      // The second message joined the run: the model saw it in the same run's next request.
      expect(requestText(fake.requests[1]!)).toContain("and add a summary");
      expect(fake.requests).toHaveLength(2);
      expect(chat.out()).toEqual("Let me look.\n\nBoth done: the report and the summary.\n");
    });

    it("interactive, followup mode: a message sent during a run gets its own answer after it, each printed once", async () => {
      const chat = interactive();
      chat.say("/queue followup");
      await waitFor("the queue mode", () => chat.out() === "Queue mode for this conversation: followup.\n");
      fake.enqueue(sayThenRun("On it.", "sleep 1"), text("Report written."), text("Summary added."));
      chat.say("write the report");
      await waitFor("the tool", () => chat.err().includes("→ exec: sleep 1"));
      chat.say("then add a summary");
      await fake.waitForRequests(3);
      chat.child.stdin.end();
      expect(await chat.exited).toBe(0);
      expect(chat.out()).toEqual("Queue mode for this conversation: followup.\nOn it.\n\nReport written.\nSummary added.\n");
    });
  });
}

describe("hearth chat without a daemon (embedded gateway)", () => {
  it("shows a model retry as one short line on stderr, not a JSON log line, as with a daemon", async () => {
    fake.enqueue({ type: "http_error", status: 529 }, text("Recovered."));
    const r = await runHearth(["chat", "-m", "hello"], env());
    expect(r.stdout).toEqual("Recovered.\n");
    expect(r.stderr).toMatch(/^\(The model API is overloaded \(HTTP 529\)\. Trying again in [1-3] s…\)\n$/);
    expect(r.code).toBe(0);
  });
});
