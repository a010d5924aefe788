// The interactive chat's line editing on a terminal: Ctrl+C drops a half-typed line, so the
// next thing typed is sent alone.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { CliEvent } from "../../src/channels/terminal/channel.ts";
import { chatInteractive } from "../../src/cli/chat.ts";
import type { ChatEnd, GatewayClient } from "../../src/cli/client.ts";

function fakeClient(sent: string[]): GatewayClient {
  return {
    kind: "daemon",
    chat: async (text: string, onEvent: (e: CliEvent) => void): Promise<ChatEnd> => {
      sent.push(text);
      const end: ChatEnd = { type: "final", requestId: "r", text: `echo: ${text}`, outcome: "answered" };
      onEvent(end);
      return end;
    },
    abort: () => {},
    onQuestion: () => {},
    choose: () => {},
    status: async () => {
      throw new Error("not used");
    },
    rpc: async () => null,
    onNotice: () => {},
    listen: async () => [],
    close: async () => {},
  };
}

describe("interactive chat on a terminal", () => {
  it("Ctrl+C on a half-typed line discards it: the next line is sent alone", async () => {
    const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => stdin });
    const stdout = Object.assign(new PassThrough(), { isTTY: true, columns: 80 });
    const stderr = new PassThrough();
    let out = "";
    stdout.on("data", (d: Buffer) => (out += d.toString()));
    stderr.resume();
    const sent: string[] = [];
    const done = chatInteractive(fakeClient(sent), { stdin, stdout, stderr });
    await new Promise((r) => setImmediate(r));
    stdin.write("half a thou");
    stdin.write("\x03");
    stdin.write("hello\r");
    while (!out.includes("echo: hello")) await new Promise((r) => setTimeout(r, 5));
    stdin.write("\x04"); // Ctrl+D on an empty line quits
    expect(await done).toBe(0);
    expect(sent).toEqual(["hello"]);
    expect(out).toContain("echo: hello");
  });
});
