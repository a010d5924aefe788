// Approvals in `hearth chat`: the question appears on stderr with numbered choices; piped, a
// line with the number answers it, on a terminal one keypress does (driven through a
// pseudo-terminal); other text while it waits is refused with a hint. Allow for 30 min covers
// the same command until the window has passed; a restart while waiting asks once more, in the
// next chat, and runs the command once; no answer within timeoutSeconds is a denial.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hearthBin, isolatedEnv, repoRoot } from "../support/cli-process.ts";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { rendered } from "../support/terminal-screen.ts";

let fake: FakeModel;
let daemon: Daemon;
let home: string;
const start = () => startDaemon(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
beforeAll(async () => {
  fake = await startFakeModel();
  home = makeHome({ approvals: { exec: "always" } });
  daemon = await start();
});
afterAll(async () => {
  await cleanupDaemon(daemon, home);
  await fake.close();
});

const workspace = () => join(home, "workspace");
const question = (command: string, how = "type 1–4 and Enter") =>
  `🔐 Approve this?\nexec: ${command}\nin ${workspace()}\nwhy: every command is asked about (approvals.exec: always)\nAllow for 30 min / Always cover: ${command} in ${workspace()}, in this chat\n[1] Allow once  [2] Allow for 30 min  [3] Always  [4] Deny — ${how}\n`;

interface Chat {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  say: (line: string) => void;
  exited: Promise<number | null>;
}

/** `hearth chat` with piped stdin, stdout and stderr. */
function openChat(): Chat {
  const child = spawn(process.execPath, [hearthBin, "chat"], { env: isolatedEnv({ HEARTH_HOME: home }), cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, say: (line) => child.stdin!.write(`${line}\n`), exited };
}

async function closeChat(chat: Chat): Promise<number | null> {
  chat.child.stdin!.end();
  return chat.exited;
}

describe("approvals in hearth chat", () => {
  it("asks on stderr with numbered choices; a typed 4 denies, a typed 1 allows once; stdout is the answers alone", async () => {
    const chat = openChat();
    fake.enqueue(toolCall("exec", { command: "touch denied.txt" }), text("Not done."));
    chat.say("make the first file");
    await waitFor("the first question", () => chat.stderr().includes(question("touch denied.txt")));
    chat.say("4");
    await waitFor("the first answer", () => chat.stdout().includes("Not done."));
    // The reply's own tool line may come between the two: the question is shown the moment it is asked.
    expect(chat.stderr().indexOf("\n❌ Denied by you (terminal).\n")).toBeGreaterThan(chat.stderr().indexOf(question("touch denied.txt")));
    expect(existsSync(join(workspace(), "denied.txt"))).toBe(false);

    fake.enqueue(toolCall("exec", { command: "echo ran >> once.txt" }), text("Done."));
    chat.say("make the second file");
    await waitFor("the second question", () => chat.stderr().includes(question("echo ran >> once.txt")));
    chat.say("1");
    await waitFor("the second answer", () => chat.stdout().includes("Done."));
    expect(chat.stderr().indexOf("\n✅ Allowed once by you (terminal).\n")).toBeGreaterThan(chat.stderr().indexOf(question("echo ran >> once.txt")));
    expect(readFileSync(join(workspace(), "once.txt"), "utf8")).toBe("ran\n");
    expect(await closeChat(chat)).toBe(0);
    expect(chat.stdout()).toBe("Not done.\nDone.\n");
  });

  it("other text while a question waits is not sent: a one-line hint says how to answer, and the question still waits", async () => {
    const chat = openChat();
    fake.enqueue(toolCall("exec", { command: "echo ran >> stray.txt" }), text("Done after the hint."));
    chat.say("make the stray file");
    await waitFor("the question", () => chat.stderr().includes(question("echo ran >> stray.txt")));
    const requests = fake.requests.length;
    chat.say("yes please");
    await waitFor("the hint", () => chat.stderr().includes("(An approval is waiting: type 1–4 and Enter to answer it, or /stop to stop. Your message was not sent.)\n"));
    chat.say("1");
    await waitFor("the answer", () => chat.stdout().includes("Done after the hint."));
    expect(fake.requests).toHaveLength(requests + 1);
    expect(fake.requests.at(-1)!.rawBody).not.toContain("yes please");
    expect(readFileSync(join(workspace(), "stray.txt"), "utf8")).toBe("ran\n");
    expect(await closeChat(chat)).toBe(0);
    expect(chat.stdout()).toBe("Done after the hint.\n");
  });

  it("Allow for 30 min (a typed 2): the same command runs again without a question; once the window has passed, it is asked again", async () => {
    const chat = openChat();
    const grantFile = join(workspace(), "grant.txt");
    fake.enqueue(toolCall("exec", { command: "echo a >> grant.txt" }), text("Made a."));
    chat.say("make a");
    await waitFor("the question", () => chat.stderr().includes(question("echo a >> grant.txt")));
    chat.say("2");
    await waitFor("the answer", () => chat.stdout().includes("Made a."));
    expect(chat.stderr()).toContain(`\n✅ Allowed for 30 min by you (terminal): echo a >> grant.txt in ${workspace()}, in this chat\n`);

    fake.enqueue(toolCall("exec", { command: "echo a >> grant.txt" }), text("Made b."));
    chat.say("make b");
    await waitFor("the answer", () => chat.stdout().includes("Made b."));
    expect(readFileSync(grantFile, "utf8")).toBe("a\na\n");
    expect(chat.stderr().split("🔐 Approve this?")).toHaveLength(2);

    // The clock moves on: the grant's window is over (grants.json is read afresh for every call).
    const file = join(home, "grants.json");
    const grants = JSON.parse(readFileSync(file, "utf8")) as { version: number; grants: Array<{ at: number; expiresAt: number }> };
    for (const g of grants.grants) (g.at -= 31 * 60_000), (g.expiresAt -= 31 * 60_000);
    writeFileSync(file, JSON.stringify(grants));

    fake.enqueue(toolCall("exec", { command: "echo a >> grant.txt" }), text("Made c."));
    chat.say("make c");
    await waitFor("asked again", () => chat.stderr().split("🔐 Approve this?").length === 3);
    expect(readFileSync(grantFile, "utf8")).toBe("a\na\n");
    chat.say("1");
    await waitFor("the answer", () => chat.stdout().includes("Made c."));
    expect(readFileSync(grantFile, "utf8")).toBe("a\na\na\n");
    expect(await closeChat(chat)).toBe(0);
    expect(chat.stdout()).toBe("Made a.\nMade b.\nMade c.\n");
  });

  it("on a terminal one keypress answers, without Enter", async () => {
    const child = spawn("python3", [join(import.meta.dirname, "..", "support", "pty-run.py"), process.execPath, hearthBin, "chat"], {
      cwd: repoRoot,
      env: isolatedEnv({ HEARTH_HOME: home, TERM: "xterm", COLUMNS: "200", LINES: "50" }),
      stdio: ["pipe", "pipe", "inherit"],
    });
    let raw = "";
    child.stdout!.on("data", (d: Buffer) => (raw += d.toString()));
    const screen = () => rendered(raw);
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      await waitFor("the prompt", () => screen().includes("› "));
      fake.enqueue(toolCall("exec", { command: "echo ran >> key.txt" }), text("Done by one key."));
      child.stdin!.write("make it by key\r");
      await waitFor("the question", () => screen().includes(question("echo ran >> key.txt", "press 1–4")));
      child.stdin!.write("1");
      await waitFor("the answer", () => screen().includes("Done by one key."));
      expect(screen()).toContain("\n✅ Allowed once by you (terminal).\n");
      expect(readFileSync(join(workspace(), "key.txt"), "utf8")).toBe("ran\n");
      // The key answered the question and left nothing behind on the line.
      await waitFor("the prompt again", () => screen().trimEnd().endsWith("›"));
      child.stdin!.write("\x04");
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("a restart while waiting: the chat says the daemon went away; the next chat is asked once more, and the command runs once", async () => {
    const first = openChat();
    const asked = daemon.log().split("approvals.asked").length;
    fake.enqueue(toolCall("exec", { command: "echo ran >> restart.txt" }));
    first.say("run it across a restart");
    await waitFor("the question", () => first.stderr().includes(question("echo ran >> restart.txt")));
    await waitFor("the question on disk", () => daemon.log().split("approvals.asked").length > asked);
    daemon.proc.kill("SIGKILL");
    await daemon.exited;
    await waitFor("the chat told", () => first.stderr().includes("hearth: The Hearth daemon went away"));
    first.child.kill("SIGKILL");
    await first.exited;

    fake.enqueue(toolCall("exec", { command: "echo ran >> restart.txt" }), text("Ran it after the restart."));
    daemon = await start();
    await waitFor("asked again", () => daemon.log().includes("approvals.asked"));
    const second = openChat();
    await waitFor("the question in the next chat", () => second.stderr().includes(question("echo ran >> restart.txt")));
    expect(existsSync(join(workspace(), "restart.txt"))).toBe(false);
    second.say("1");
    await waitFor("the command ran", () => existsSync(join(workspace(), "restart.txt")));
    await waitFor("the inbox settled", () => inboxSettled(home));
    expect(readFileSync(join(workspace(), "restart.txt"), "utf8")).toBe("ran\n");
    expect(second.stderr().split("🔐 Approve this?")).toHaveLength(2);
    // The answer to the first chat's message, whose chat is gone, reaches the chat that is open.
    await waitFor("the answer", () => second.stdout().includes('(the answer to "run it across a restart", which came after its chat closed)\nRan it after the restart.'));
    expect(await closeChat(second)).toBe(0);
  });

  it("no answer: denied after timeoutSeconds, the chat says so, and the model is told it was not approved", async () => {
    await daemon.stop();
    writeFileSync(join(home, "config.json"), JSON.stringify({ approvals: { exec: "always", timeoutSeconds: 2 } }));
    daemon = await start();
    const chat = openChat();
    fake.enqueue(toolCall("exec", { command: "echo never >> never.txt" }), text("It was not approved, so I did nothing."));
    chat.say("run the other one");
    await waitFor("the answer", () => chat.stdout().includes("It was not approved, so I did nothing."));
    expect(chat.stderr().indexOf("\n⌛ Not answered within 2 s: not run.\n")).toBeGreaterThan(chat.stderr().indexOf(question("echo never >> never.txt")));
    expect(existsSync(join(workspace(), "never.txt"))).toBe(false);
    expect(fake.requests.at(-1)!.rawBody).toContain("Not run: the owner did not approve this exec call within 2 s (no answer counts as no).");
    expect(await closeChat(chat)).toBe(0);
    expect(chat.stdout()).toBe("It was not approved, so I did nothing.\n");
  });
});
