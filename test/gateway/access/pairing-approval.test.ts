// An approved person is told in their private chat; a passing refusal of the platform is tried
// again, so nobody waits for a welcome that one failed request swallowed.
import { describe, expect, it } from "vitest";
import { APPROVED_TEXT, tellApproved, type PairingApprovalDeps } from "../../../src/gateway/access/pairing-approval.ts";
import { createLogger } from "../../../src/process/log.ts";

function deps(failures: number) {
  const sent: Array<{ chatId: string; text: string }> = [];
  const lines: string[] = [];
  let calls = 0;
  const channels = {
    async send(to: { chatId: string }, text: string) {
      calls++;
      if (calls <= failures) throw new Error("503 Service Unavailable");
      sent.push({ chatId: to.chatId, text });
      return { type: "delivered" as const };
    },
  };
  const ctx = { channels, log: createLogger({ level: "warn", sink: { write: (l) => void lines.push(l) } }), pairing: {} } as unknown as PairingApprovalDeps;
  return { ctx, sent, lines, calls: () => calls };
}

describe("telling an approved person", () => {
  it("tries again after a failed send, and tells them once", async () => {
    const d = deps(2);
    await tellApproved(d.ctx, { channel: "discord", userId: "42", name: "Sam", approvedAt: 0, chatId: "900" }, [1, 1]);
    expect(d.sent).toEqual([{ chatId: "900", text: APPROVED_TEXT }]);
    expect(d.calls()).toBe(3);
    expect(d.lines.filter((l) => l.includes("pairing.welcome_failed"))).toHaveLength(2);
  });

  it("gives up after the last attempt, logged, without throwing", async () => {
    const d = deps(10);
    await tellApproved(d.ctx, { channel: "discord", userId: "42", name: "Sam", approvedAt: 0, chatId: "900" }, [1]);
    expect(d.sent).toEqual([]);
    expect(d.calls()).toBe(2);
  });

  it("a Telegram person's chat is their id; a Discord person's without a recorded chat is not known", async () => {
    const t = deps(0);
    await tellApproved(t.ctx, { channel: "telegram", userId: "4242", name: "Ann", approvedAt: 0 }, []);
    expect(t.sent).toEqual([{ chatId: "4242", text: APPROVED_TEXT }]);
    const dc = deps(0);
    await tellApproved(dc.ctx, { channel: "discord", userId: "42", name: "Sam", approvedAt: 0 }, []);
    expect(dc.calls()).toBe(0);
  });
});
