// A background task's approvals, through a real gateway in this process with a channel that has
// buttons: the question goes to the chat that started the task (not the owner's first chat) and
// names the task; the owner's press lets the child go on, and its result reaches that chat.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { firstUserText, lastUserText } from "../support/task-script.ts";
import { ButtonChannel } from "../support/test-channel.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";


let fake: FakeModel;
let gw: TestGateway;
beforeEach(async () => {
  fake = await startFakeModel();
});
afterEach(async () => {
  await gw?.stop();
  await fake.close();
});

describe("a background task's approvals", () => {
  it("are asked in the chat that started the task, naming the task", async () => {
    const channel = new ButtonChannel();
    gw = await startTestGateway(fake.url, { config: { approvals: { exec: "always" } }, telegram: { ownerIds: ["1", "7"] }, memory: false, channel });
    fake.setDefault({
      type: "respond",
      fn: (req) => {
        const first = firstUserText(req);
        const last = lastUserText(req);
        if (first.includes("Background task")) return last.includes("ran") ? text("It ran.") : toolCall("exec", { command: "echo ran" });
        const started = /Started background task ([0-9a-f]{6})/.exec(last);
        if (started) return text(`Started ${started[1]}.`);
        return toolCall("spawn_task", { task: "Run the check.", label: "check" });
      },
    });
    channel.deliver({ id: "m1", channel: "telegram", chat: { id: "7", type: "dm", members: ["7"] }, sender: { id: "7", name: "Ann", isOwner: true }, text: "start the check", addressed: true, receivedAt: Date.now() });
    await waitFor("the question", () => channel.questions.length === 1);
    const [v] = gw.gateway.context.tasks.list();
    const { q, to } = channel.questions[0]!;
    expect(to).toEqual({ channel: "telegram", chatId: "7" });
    expect(q.text).toBe(`🔐 Approve this?\ntask: check (${v!.id})\nexec: echo ran\nin ${gw.config.workspace}\nwhy: every command is asked about (approvals.exec: always)\nAllow for 30 min / Always cover: echo ran in ${gw.config.workspace}, in this chat`);
    expect(await channel.handler!({ key: q.key, choiceId: "once", channel: "telegram", by: { id: "7", name: "Ann", isOwner: true } })).toBe("Allowed.");
    await waitFor("the result", () => (channel.replies.get(`send:7`) ?? []).some((t) => t.startsWith(`✅ Task ${v!.id}`)));
    expect(channel.replies.get("send:7")!.filter((t) => t.startsWith(`✅ Task ${v!.id}`))).toEqual([expect.stringMatching(new RegExp(`^✅ Task ${v!.id} "check" is done \\(\\d+s, \\$0\\.\\d{4}\\):\\n\\nIt ran\\.$`))]);
  }, 60_000);
});
