// Approvals in `hearth chat`: the question appears on stderr with numbered choices, a typed
// number answers it (piped, as a keypress would), and stdout stays the answer alone.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hearthBin, isolatedEnv, repoRoot } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";

let fake: FakeModel;
let daemon: Daemon;
let home: string;
beforeAll(async () => {
  fake = await startFakeModel();
  home = makeHome({ approvals: { exec: "always" } });
  daemon = await startDaemon(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
});
afterAll(async () => {
  await cleanupDaemon(daemon, home);
  await fake.close();
});

describe("approvals in hearth chat", () => {
  it("asks on stderr with numbered choices; a typed 4 denies, a typed 1 allows once; stdout is the answers alone", async () => {
    const child = spawn(process.execPath, [hearthBin, "chat"], { env: isolatedEnv({ HEARTH_HOME: home }), cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    const say = (line: string) => child.stdin.write(`${line}\n`);
    const question = (command: string) =>
      `🔐 Approve this?\nexec: ${command}\nin ${join(home, "workspace")}\nwhy: every command is asked about (approvals.exec: always)\n[1] Allow once  [2] Allow for 30 min  [3] Always  [4] Deny — type a number and Enter\n`;

    fake.enqueue(toolCall("exec", { command: "touch denied.txt" }), text("Not done."));
    say("make the first file");
    await waitFor("the first question", () => stderr.includes(question("touch denied.txt")));
    say("4");
    await waitFor("the first answer", () => stdout.includes("Not done."));
    // The reply's own tool line may come between the two: the question is shown the moment it is asked.
    expect(stderr.indexOf("\n❌ Denied by you (terminal).\n")).toBeGreaterThan(stderr.indexOf(question("touch denied.txt")));
    expect(existsSync(join(home, "workspace", "denied.txt"))).toBe(false);

    fake.enqueue(toolCall("exec", { command: "echo ran >> once.txt" }), text("Done."));
    say("make the second file");
    await waitFor("the second question", () => stderr.includes(question("echo ran >> once.txt")));
    say("1");
    await waitFor("the second answer", () => stdout.includes("Done."));
    expect(stderr.indexOf("\n✅ Allowed once by you (terminal).\n")).toBeGreaterThan(stderr.indexOf(question("echo ran >> once.txt")));
    expect(readFileSync(join(home, "workspace", "once.txt"), "utf8")).toBe("ran\n");
    child.stdin.end();
    expect(await exited).toBe(0);
    expect(stdout).toBe("Not done.\nDone.\n");
  });
});
