import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";

let fake: FakeModel;
let home: string;
beforeEach(async () => {
  fake = await startFakeModel();
  home = mkdtempSync(join(tmpdir(), "hearth-e2e-"));
});
afterEach(async () => {
  await fake.close();
  rmSync(home, { recursive: true, force: true });
});

const env = () => isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });

describe("hearth chat -m (real process, fake model)", () => {
  it("runs exec through the model and prints the final answer", async () => {
    fake.enqueue(toolCall("exec", { command: "echo hearth-42" }), text("The command printed hearth-42. All done.", { chunkSize: 6 }));
    const r = await runHearth(["chat", "-m", "please run the echo"], env());

    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("The command printed hearth-42. All done.");
    expect(r.stderr).toContain("→ exec: echo hearth-42");
    expect(fake.requests).toHaveLength(2);
    const result = lastUserContent(fake.requests[1]!).find((b) => b.type === "tool_result");
    expect(result!.is_error).toBeUndefined();
    expect(String(result!.content)).toContain("hearth-42");
    // The per-run facts are in the user turn, the system prompt carries none of them.
    expect(JSON.stringify(fake.requests[0]!.body.messages[0])).toMatch(/cli · owner\]\\nplease run the echo/);
    expect(JSON.stringify(fake.requests[0]!.body.system)).not.toMatch(/\d{4}-\d{2}-\d{2}/);
    expect(fake.requests[0]!.body.model).toBe("claude-sonnet-5-5");
  });

  it("keeps the conversation in the main session transcript across invocations", async () => {
    fake.enqueue(text("Noted: your cat is Miso."), text("Miso."));
    expect((await runHearth(["chat", "-m", "my cat is called Miso"], env())).code).toBe(0);
    expect((await runHearth(["chat", "-m", "what is my cat called?"], env())).code).toBe(0);
    expect(JSON.stringify(fake.requests[1]!.body.messages)).toContain("my cat is called Miso");
    const transcript = readFileSync(join(home, "sessions", "main.jsonl"), "utf8");
    expect(transcript.trim().split("\n").length).toBeGreaterThanOrEqual(6);
    expect(existsSync(join(home, "workspace", "SOUL.md"))).toBe(true);
  });

  it("exits 2 and explains how to set the key when there is none", async () => {
    const r = await runHearth(["chat", "-m", "hi"], isolatedEnv({ HEARTH_HOME: home }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/ANTHROPIC_API_KEY/);
    expect(r.stdout).toBe("");
  });

  it("exits 2 with the key path when the config is invalid", async () => {
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(home, "config.json"), '{ "agent": { "maxTurns": "lots" } }');
    const r = await runHearth(["chat", "-m", "hi"], env());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("agent.maxTurns");
    expect(fake.requests).toHaveLength(0);
  });

  it("exits 1 with a clear message on stderr, and nothing on stdout, when the model refuses the key", async () => {
    fake.enqueue({ type: "http_error", status: 401 });
    const r = await runHearth(["chat", "-m", "hi"], env());
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^The model API rejected the API key \(HTTP 401\)\..*\n$/);
    expect(r.stdout + r.stderr).not.toContain("test-key");
  });

  it("rejects unknown commands and options with usage and exit 2", async () => {
    const a = await runHearth(["frobnicate"], env());
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/^hearth: Unknown command "frobnicate".\n\nUsage: npx hearth <command>/);
    const b = await runHearth(["chat", "--shout"], env());
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/--shout/);
  });
});
