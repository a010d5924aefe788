// Hybrid recall through the daemon (the real `hearth chat -m` path, a fake model, the fake
// embeddings server): the workspace is embedded in the background after start, memory_search
// "car" finds the note that says "automobile", the calls are metered, and a second start embeds
// nothing new.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../support/fake-embeddings.ts";

let model: FakeModel;
let emb: FakeEmbeddings;
let daemon: Daemon | undefined;
let home: string;

const env = () => ({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url, EMB_KEY: "emb-secret" });

beforeAll(async () => {
  model = await startFakeModel();
  emb = await startFakeEmbeddings();
  home = makeHome({ memory: { embeddings: { baseUrl: emb.baseUrl, model: "stand-in", apiKeyEnv: "EMB_KEY", pricing: { perMillionTokensUsd: 0.02 } } } });
});
afterAll(async () => {
  await cleanupDaemon(daemon, home);
  await model.close();
  await emb.close();
});

describe("hybrid recall (daemon e2e)", () => {
  it('memory_search "car" finds the "automobile" note; a second start embeds nothing new', async () => {
    // The workspace exists once the first start made it; the note is written before the scan.
    daemon = await startDaemon(home, env());
    writeFileSync(join(home, "workspace", "MEMORY.md"), "# Memory\n\n## Things\nThe automobile is due for its inspection in May.\n");
    await waitFor("the note embedded", () => emb.requests.some((r) => r.input.some((t) => t.includes("automobile"))), 60_000);
    expect(emb.requests[0]!.authorization).toBe("Bearer emb-secret");

    model.enqueue(toolCall("memory_search", { query: "car" }), text("Your car's inspection is in May."));
    const r = await runHearth(["chat", "-m", "when is the car due?"], isolatedEnv({ HEARTH_HOME: home, ...env() }));
    expect(r.stdout).toBe("Your car's inspection is in May.\n");
    const result = lastUserContent(model.requests[1]!).find((b) => b.type === "tool_result");
    expect(String(result!.content).split("\n")[0]).toMatch(/^MEMORY\.md:4 \(## Things\) .*automobile/);
    const usage = readFileSync(join(home, "usage.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(usage.filter((u) => u.kind === "embedding").length).toBeGreaterThanOrEqual(2);
    expect(daemon.log()).not.toContain("emb-secret");
    // The exchange was logged to today's log: its chunk is embedded too before the restart.
    await waitFor("the exchange sent", () => emb.requests.some((r) => r.input.some((t) => t.includes("when is the car due?"))), 60_000);
    const sentAt = emb.requests.find((r) => r.input.some((t) => t.includes("when is the car due?")))!.at;
    // …and stored: a pass that ends after the request was answered logs so.
    const passEnds = () => [...daemon!.log().matchAll(/"t":"([^"]+)"[^\n]*"memory\.embeddings_pass"/g)].map((m) => Date.parse(m[1]!));
    await waitFor("the exchange embedded", () => passEnds().some((t) => t >= sentAt), 60_000);

    daemon.proc.kill("SIGKILL");
    await daemon.exited;
    const before = emb.requests.length;
    daemon = await startDaemon(home, env());
    await waitFor("the first embeddings pass", () => daemon!.log().includes('"memory.embeddings_pass"'), 60_000);
    expect(emb.requests.slice(before).map((r) => r.input)).toEqual([]);
    expect(daemon.log()).toMatch(/"memory\.embeddings_pass".*"embedded":0/);
  });
});
