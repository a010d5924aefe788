import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { CliEvent } from "../../src/channels/terminal/channel.ts";
import { ReplyPrinter } from "../../src/cli/reply-printer.ts";

function printer(tty = false) {
  let stdout = "";
  let stderr = "";
  const out = Object.assign(new PassThrough(), { isTTY: tty });
  const err = Object.assign(new PassThrough(), { isTTY: tty });
  out.on("data", (d: Buffer) => (stdout += d.toString()));
  err.on("data", (d: Buffer) => (stderr += d.toString()));
  const p = new ReplyPrinter({ stdout: out, stderr: err });
  return { play: (...events: CliEvent[]) => events.forEach(p.onEvent), stop: () => p.stopRequested(), out: () => stdout, err: () => stderr };
}

const r = "r1";

describe("ReplyPrinter", () => {
  it("prints the streamed text, then only what the final adds, and one newline", () => {
    const p = printer();
    p.play(
      { type: "joined", requestId: r, runId: "run" },
      { type: "text_delta", requestId: r, text: "Checking." },
      { type: "tool_start", requestId: r, name: "exec", summary: "ls" },
      { type: "tool_end", requestId: r, name: "exec", ok: true },
      { type: "text_delta", requestId: r, text: "\n\nHere." },
      { type: "final", requestId: r, text: "Checking.\n\nHere.\n\n(Stopped.)", outcome: "stopped" },
    );
    expect(p.out()).toBe("Checking.\n\nHere.\n\n(Stopped.)\n");
    expect(p.err()).toBe("→ exec: ls\n");
  });

  it("Hearth's notice (a model error) goes to stderr after the streamed text; stdout keeps only the answer", () => {
    const p = printer();
    p.play(
      { type: "text_delta", requestId: r, text: "Half an ans" },
      { type: "text_delta", requestId: r, text: "\n\nThe model API is overloaded.", notice: true },
      { type: "final", requestId: r, text: "Half an ans\n\nThe model API is overloaded.", outcome: "failed" },
    );
    expect(p.out()).toBe("Half an ans\n");
    expect(p.err()).toBe("The model API is overloaded.\n");
  });

  it("a note (what a voice note was heard as) goes to stderr and leaves stdout the answer alone", () => {
    const p = printer();
    p.play({ type: "note", requestId: r, text: "🎤 heard: hello" }, { type: "text_delta", requestId: r, text: "Hi." }, { type: "final", requestId: r, text: "Hi.", outcome: "answered" });
    expect(p.out()).toBe("Hi.\n");
    expect(p.err()).toBe("🎤 heard: hello\n");
  });

  it("on a terminal starts a tool line on its own line without touching stdout", () => {
    const p = printer(true);
    p.play({ type: "text_delta", requestId: r, text: "Checking." }, { type: "tool_start", requestId: r, name: "exec", summary: "ls" });
    expect(p.out()).toBe("Checking.");
    expect(p.err()).toBe("\n→ exec: ls\n");
  });

  it("says so when a retried stream replaced what was shown, then prints the new reply once", () => {
    const p = printer();
    p.play(
      { type: "text_delta", requestId: r, text: "Hel" },
      { type: "text_reset", requestId: r, text: "Good" },
      { type: "text_delta", requestId: r, text: " day" },
      { type: "final", requestId: r, text: "Good day", outcome: "answered" },
    );
    expect(p.out()).toBe("Hel\nGood day\n");
    expect(p.err()).toBe("(the answer restarted)\n");
  });

  it("ends a partial answer's line before a failure, and does not end a line twice", () => {
    const p = printer();
    p.play({ type: "text_delta", requestId: r, text: "Part" }, { type: "failed", requestId: r, message: "the model is gone" });
    expect(p.out()).toBe("Part\n");
    expect(p.err()).toBe("hearth: the model is gone\n");
  });

  it("adds no newline to a reply that ends with one", () => {
    const p = printer();
    p.play({ type: "final", requestId: r, text: "a list:\n- x\n", outcome: "answered" });
    expect(p.out()).toBe("a list:\n- x\n");
  });

  it("calls a tool cut short by Ctrl+C stopped, and any other failed tool failed", () => {
    const p = printer();
    p.play({ type: "tool_start", requestId: r, name: "exec", summary: "false" }, { type: "tool_end", requestId: r, name: "exec", ok: false });
    expect(p.err()).toBe("→ exec: false\n  ✗ exec failed\n");
    const q = printer();
    q.play({ type: "tool_start", requestId: r, name: "exec", summary: "sleep 30" });
    q.stop();
    q.play({ type: "tool_end", requestId: r, name: "exec", ok: false });
    expect(q.err()).toBe("→ exec: sleep 30\n  ■ exec stopped\n");
  });
});
