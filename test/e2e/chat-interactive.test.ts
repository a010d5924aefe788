// `hearth chat` as a conversation: lines in, streamed answers out, Ctrl+C stops an answer
// without ending the program, end of input (Ctrl+D) quits.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hearthBin, isolatedEnv, repoRoot } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { requestText, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { rendered } from "../support/terminal-screen.ts";

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

/** `hearth chat` in a pseudo-terminal (test/support/pty-run.py): keys in, the screen out. */
function onTerminal(env: NodeJS.ProcessEnv) {
  const child = spawn("python3", [join(import.meta.dirname, "..", "support", "pty-run.py"), process.execPath, hearthBin, "chat"], {
    cwd: repoRoot,
    env: { ...env, TERM: "xterm", COLUMNS: "200", LINES: "50" },
    stdio: ["pipe", "pipe", "inherit"],
  });
  let raw = "";
  child.stdout!.on("data", (d: Buffer) => (raw += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const screen = () => rendered(raw);
  return { child, exited, screen, type: (keys: string) => child.stdin!.write(keys), lines: () => screen().split("\n") };
}

const WENT_AWAY = "hearth: The Hearth daemon went away (stopped or crashed). Waiting for it to come back; what you type meanwhile is sent then.";
const QUEUED = "(The daemon is not running: this goes when it is back; Ctrl+C drops it.)";
const daemonEnv = () => ({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });

describe("hearth chat across a daemon restart", () => {
  it("on a terminal: says at once that the daemon went away, sends what was typed meanwhile once it is back, and Ctrl+C, Ctrl+D still work", async () => {
    daemon = await startDaemon(home, daemonEnv());
    const chat = onTerminal(isolatedEnv({ HEARTH_HOME: home }));
    try {
      await waitFor("the prompt", () => chat.screen().endsWith("› "));
      fake.enqueue(text("Before the restart."));
      chat.type("first\r");
      await waitFor("the first answer", () => chat.screen().includes("\nBefore the restart.\n› "));

      expect(await daemon.stop()).toBe(0);
      await waitFor("the chat told", () => chat.lines().includes(WENT_AWAY));
      expect(chat.screen().endsWith(`${WENT_AWAY}\n› `)).toBe(true);
      chat.type("typed while it was away\r");
      await waitFor("the line kept", () => chat.lines().includes(QUEUED));

      fake.enqueue(text("Answered after the restart."));
      daemon = await startDaemon(home, daemonEnv());
      await waitFor("the answer after the restart", () => chat.screen().includes("\nAnswered after the restart.\n› "));
      const screen = chat.screen();
      expect(screen.slice(screen.indexOf(WENT_AWAY))).toBe(`${WENT_AWAY}\n› typed while it was away\n${QUEUED}\nConnected to the Hearth daemon again.\nAnswered after the restart.\n› `);
      expect(requestText(fake.requests.at(-1)!)).toContain("typed while it was away");
      expect(fake.requests).toHaveLength(2);

      chat.type("\x03");
      await waitFor("Ctrl+C's hint", () => chat.screen().endsWith("(Ctrl+D quits)\n› "));
      chat.type("\x04");
      expect(await chat.exited).toBe(0);
    } finally {
      chat.child.kill("SIGKILL");
    }
  });

  it("on a terminal: Ctrl+C drops a line waiting for the daemon, and says so; the daemon back, nothing of it is sent", async () => {
    daemon = await startDaemon(home, daemonEnv());
    const chat = onTerminal(isolatedEnv({ HEARTH_HOME: home }));
    try {
      await waitFor("the prompt", () => chat.screen().endsWith("› "));
      expect(await daemon.stop()).toBe(0);
      await waitFor("the chat told", () => chat.lines().includes(WENT_AWAY));
      chat.type("never mind this\r");
      await waitFor("the line kept", () => chat.lines().includes(QUEUED));
      chat.type("\x03");
      await waitFor("the drop", () => chat.lines().includes('hearth: Not sent (the daemon is not running): "never mind this"'));
      daemon = await startDaemon(home, daemonEnv());
      await waitFor("connected again", () => chat.screen().endsWith("Connected to the Hearth daemon again.\n› "));
      fake.enqueue(text("Only this one."));
      chat.type("and this\r");
      await waitFor("its answer", () => chat.screen().endsWith("\nOnly this one.\n› "));
      expect(fake.requests.map((r) => requestText(r))).toEqual([expect.stringContaining("and this")]);
      expect(fake.requests.some((r) => requestText(r).includes("never mind this"))).toBe(false);
      chat.type("\x04");
      expect(await chat.exited).toBe(0);
    } finally {
      chat.child.kill("SIGKILL");
    }
  });

  it("piped: end of input while the daemon is away says what was not sent, and exits 1 without hanging", async () => {
    daemon = await startDaemon(home, daemonEnv());
    const chat = interactive(isolatedEnv({ HEARTH_HOME: home }));
    fake.enqueue(text("Before."));
    chat.say("one");
    await waitFor("the first answer", () => chat.out() === "Before.\n");
    expect(await daemon.stop()).toBe(0);
    await waitFor("the chat told", () => chat.err().includes(WENT_AWAY));
    chat.say("two");
    await waitFor("the line kept", () => chat.err().includes(QUEUED));
    chat.child.stdin.end();
    expect(await chat.exited).toBe(1);
    expect(chat.err()).toBe(`${WENT_AWAY}\n${QUEUED}\nhearth: Not sent (the daemon is not running): "two"\n`);
    expect(chat.out()).toBe("Before.\n");
  });

  it("a message the daemon had taken when it was killed is answered after the restart, in the chat that reconnected", async () => {
    daemon = await startDaemon(home, daemonEnv());
    const chat = interactive(isolatedEnv({ HEARTH_HOME: home }));
    fake.enqueue(toolCall("exec", { command: "sleep 30" }));
    chat.say("do the slow thing");
    await waitFor("the slow tool", () => chat.err().includes("→ exec: sleep 30"));
    daemon.proc.kill("SIGKILL");
    await daemon.exited;
    await waitFor("the chat told", () => chat.err().includes(WENT_AWAY));
    expect(chat.err()).toBe(`→ exec: sleep 30\n${WENT_AWAY} The answer you were waiting for comes when it is back.\n`);
    // The restarted daemon runs the message again; its answer waits a moment, so that the chat
    // is connected again when it comes (else the mailbox hands it over, which is shown too).
    fake.enqueue(text("Done after the restart.", { headDelayMs: 1500 }));
    daemon = await startDaemon(home, daemonEnv());
    await waitFor("the answer", () => chat.out().includes("Done after the restart."));
    expect([
      '\n(the answer to "do the slow thing", which came after its chat closed)\nDone after the restart.\n',
      '── while no terminal was open: the answer to "do the slow thing", ',
    ].some((shown) => chat.out().includes(shown))).toBe(true);
    chat.child.stdin.end();
    expect(await chat.exited).toBe(0);
    expect(chat.err()).toBe(`→ exec: sleep 30\n${WENT_AWAY} The answer you were waiting for comes when it is back.\nConnected to the Hearth daemon again.\n`);
  });
});

describe("typing while an answer streams (terminal)", () => {
  it("keeps what is typed out of the answer's text: a half-typed line shows again at the prompt, a line sent meanwhile once that answer is whole", async () => {
    daemon = await startDaemon(home, daemonEnv());
    const chat = onTerminal(isolatedEnv({ HEARTH_HOME: home }));
    try {
      await waitFor("the prompt", () => chat.screen().endsWith("› "));
      const slow = "The quick brown fox jumps over the lazy dog, slowly, word by word.";
      fake.enqueue(text(slow, { chunkSize: 3, chunkDelayMs: 60 }));
      chat.type("tell me slowly\r");
      await waitFor("the answer streaming", () => chat.screen().includes("The quick"));
      chat.type("half typed");
      await waitFor("the whole answer", () => chat.screen().includes(`\n${slow}\n`));
      await waitFor("the prompt with the half-typed line", () => chat.screen().endsWith(`\n${slow}\n› half typed`));
      expect(chat.lines().filter((l) => l.includes("half typed"))).toEqual(["› half typed"]);

      // Sent while the next answer streams: it steers that run, and is shown as typed once the answer is whole.
      fake.enqueue(text(slow, { chunkSize: 3, chunkDelayMs: 60 }), text("The second one."));
      chat.type("\x15again please\r");
      await waitFor("the second answer streaming", () => chat.screen().split("The quick").length === 3);
      chat.type("and then this\r");
      await waitFor("the steered answer", () => chat.screen().endsWith("(typed during the answer above)\n› "));
      const screen = chat.screen();
      expect(screen.slice(screen.indexOf("› again please"))).toBe(`› again please\n${slow}\n\nThe second one.\n› and then this   (typed during the answer above)\n› `);
      expect(requestText(fake.requests[1]!)).toContain("again please");
      expect(requestText(fake.requests[1]!)).not.toContain("half typed");
      chat.type("\x04");
      expect(await chat.exited).toBe(0);
    } finally {
      chat.child.kill("SIGKILL");
    }
  });
});
