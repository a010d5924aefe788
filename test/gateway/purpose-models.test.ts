// Per-purpose models: compaction.model names any provider's model for the summaries. The key
// itself belongs to the budget work; this test sets it on a parsed config.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAgentRuntime } from "../../src/gateway/agent-runtime.ts";
import { parseConfig, purposeModels } from "../../src/config/config.ts";
import { silentLogger } from "../../src/process/log.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { chatMessages, reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";

let anth: FakeModel;
let oai: FakeOpenAI;
let home: string;
beforeEach(async () => {
  anth = await startFakeModel();
  oai = await startFakeOpenAI();
  home = mkdtempSync(join(tmpdir(), "hearth-purpose-"));
});
afterEach(async () => {
  await anth.close();
  await oai.close();
  rmSync(home, { recursive: true, force: true });
});

describe("compaction.model", () => {
  it("is read where config has it, and writes the summary with that provider's model", async () => {
    const config = parseConfig(
      { model: { contextWindow: 4000, maxTokens: 500 }, providers: { local: { type: "openai", baseUrl: oai.baseUrl } }, tools: { exec: { sandbox: "off" } } },
      { home, env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: anth.url } },
    );
    Object.assign(config, { compaction: { model: "local/summarizer" } });
    expect(purposeModels(config)).toEqual({ "compaction.model": "local/summarizer", "heartbeat.model": undefined, "tasks.model": undefined });

    const runtime = createAgentRuntime({ config, home, log: silentLogger });
    const signal = new AbortController().signal;
    for (const word of ["alpha", "beta", "gamma"]) {
      anth.enqueue(text(`${word} noted. ${"x".repeat(6000)}`));
      await runtime.run({ key: "main", scope: "main", input: [{ role: "user", kind: "message", text: `remember ${word} ${"y".repeat(6000)}`, ts: 1 }], signal, emit: () => {} });
    }
    oai.enqueue(reply("Owner asked to remember alpha and beta."));
    const outcome = await runtime.compact("main", "main", undefined, signal);
    expect(outcome.type).toBe("compacted");
    expect(oai.requests).toHaveLength(1);
    expect(oai.requests[0]!.body.model).toBe("summarizer");
    expect(chatMessages(oai.requests[0]!).at(-1)!.content).toContain("remember alpha");
    expect(anth.requests).toHaveLength(3);
  });
});
