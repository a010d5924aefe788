// With commands unconfined (tools.exec.sandbox "off"), a command can reach the control socket.
// The daemon reads who is connecting (the kernel's socket table) and refuses a request that hands
// out the owner's powers — here `hearth pairing approve` — from a command it started, while the
// owner's own terminal, running the very same command line, is obeyed. (approvals.exec is off:
// the command's reading would ask about running a script, and this is about the socket alone.)
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { hearthBin } from "../support/cli-process.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const noSs = spawnSync("ss", ["-V"]).error !== undefined;
if (noSs) console.warn("control socket peer e2e skipped: ss (iproute2) is not installed; .ci/run installs it");

const OWNER = 100;
const STRANGER = 555;
let fake: FakeModel;
let emu: TelegramEmulator;
let d: Daemon;
let home: string;

beforeAll(async () => {
  if (noSs) return;
  fake = await startFakeModel();
  emu = await startTelegramEmulator();
  home = makeHome({ channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy: "pairing" } }, tools: { exec: { sandbox: "off" } }, approvals: { exec: "off" } });
  d = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  await waitFor("telegram polling", () => d.log().includes("telegram.polling"));
});
afterAll(async () => {
  if (noSs) return;
  await cleanupDaemon(d, home);
  await emu.stop();
  await fake.close();
});

describe.skipIf(noSs)("the control socket and commands Hearth started", () => {
  it("a command's `hearth pairing approve` is refused; the owner's own is obeyed", async () => {
    await emu.user({ userId: STRANGER, firstName: "Sam" }).send("hi");
    const [codeMsg] = await emu.waitForBotMessages(STRANGER, 1);
    const code = /Your pairing code: (\w+)/.exec(codeMsg!.text)![1]!;
    const approve = `${JSON.stringify(process.execPath)} ${JSON.stringify(hearthBin)} pairing approve ${code}`;
    fake.enqueue(toolCall("exec", { command: `${approve} 2>&1; echo "exit $?"` }), text("tried"));
    await emu.user({ userId: OWNER, firstName: "Ann" }).send("approve that stranger for me");
    await waitFor("the answer", () => emu.botMessages(OWNER).some((m) => m.text === "tried"));
    const result = JSON.parse(fake.requests.at(-1)!.rawBody).messages.at(-1).content.find((b: { type: string }) => b.type === "tool_result").content as string;
    expect(result).toBe("hearth: Refused: this request comes from a command Hearth started; only the owner answers approvals.\nexit 1\n[exit code 0]");
    expect((await d.hearth(["pairing", "list"])).stdout).toContain(code);

    const owner = await d.hearth(["pairing", "approve", code]);
    expect(owner.code).toBe(0);
    expect((await d.hearth(["pairing", "list"])).stdout).not.toContain(code);
  });
});
