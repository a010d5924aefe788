// OpenAI-compatible providers end to end: the real daemon and `hearth chat -m`, a fake
// OpenAI-compatible server (what Ollama, OpenRouter, Groq speak) and the fake Anthropic API.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SKIPPED_FOR_STEER } from "../../src/agent/tool-runner.ts";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { calls, chatMessages, reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";

let oai: FakeOpenAI;
let anth: FakeModel;
let home: string;
let daemon: Daemon | undefined;
beforeEach(async () => {
  oai = await startFakeOpenAI({ models: ["llama3.2", "gemma"], noToolModels: ["gemma"] });
  anth = await startFakeModel();
  daemon = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await oai.close();
  await anth.close();
});

/** A home whose model is an Ollama model served by the fake; no key anywhere. */
function ollamaHome(model: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  home = makeHome({ model: { name: "ollama/llama3.2", ...model }, providers: { ollama: { baseUrl: oai.baseUrl } }, ...extra });
  return home;
}
const env = (extra: Record<string, string> = {}) => isolatedEnv({ HEARTH_HOME: home, ...extra });
const anthropicEnv = () => ({ ANTHROPIC_API_KEY: "ant-key", ANTHROPIC_BASE_URL: anth.url });

describe("OpenAI-compatible models (hearth chat -m, e2e)", () => {
  it("runs a tool round trip with a local model that needs no key", async () => {
    ollamaHome();
    oai.enqueue(calls({ name: "exec", arguments: { command: "echo hearth-42" } }), reply("The command printed hearth-42.", { chunkSize: 5 }));
    const r = await runHearth(["chat", "-m", "please run the echo"], env());
    expect(r.stdout).toBe("The command printed hearth-42.\n");
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("→ exec: echo hearth-42");
    expect(oai.requests).toHaveLength(2);
    expect(oai.requests[0]!.body.model).toBe("llama3.2");
    // Another provider has no server-side web tools: Hearth's own web_fetch is offered instead.
    const offered = ((oai.requests[0]!.body.tools ?? []) as Array<{ type: string; function?: { name: string } }>).map((t) => t.function?.name ?? t.type);
    expect(offered).toContain("web_fetch");
    expect(offered.every((n) => !n.startsWith("web_search_2") && !n.startsWith("web_fetch_2"))).toBe(true);
    const second = chatMessages(oai.requests[1]!);
    expect(second.slice(-2, -1)[0]).toMatchObject({ role: "assistant", tool_calls: [{ id: "call_1", type: "function", function: { name: "exec", arguments: '{"command":"echo hearth-42"}' } }] });
    expect(second.at(-1)).toEqual({ role: "tool", tool_call_id: "call_1", content: expect.stringContaining("hearth-42") });
    expect(anth.requests).toHaveLength(0);
  });

  it("an attached picture reaches a vision model as an image_url part with its bytes, and a model without vision gets a placeholder", async () => {
    const sharp = (await import("sharp")).default;
    const png = await sharp({ create: { width: 8, height: 6, channels: 3, background: { r: 200, g: 30, b: 30 } } }).png().toBuffer();
    ollamaHome({}, { providers: { ollama: { baseUrl: oai.baseUrl, models: { "llama3.2": { vision: true }, gemma: { vision: false, tools: false } } } } });
    const picture = join(home, "red.png");
    writeFileSync(picture, png);
    oai.enqueue(reply("A small red picture."));
    const r = await runHearth(["chat", "-m", "what is in this picture?", "--attach", picture], env());
    expect(r.stdout).toBe("A small red picture.\n");
    const parts = chatMessages(oai.requests[0]!).at(-1)!.content as Array<{ type: string; image_url?: { url: string } }>;
    expect(parts.filter((p) => p.type === "image_url").map((p) => p.image_url!.url)).toEqual([`data:image/png;base64,${png.toString("base64")}`]);

    oai.enqueue(reply("I cannot see it."));
    const blind = await runHearth(["chat", "-m", "/model ollama/gemma"], env());
    expect(blind.code).toBe(0);
    const again = await runHearth(["chat", "-m", "and now?", "--attach", picture], env());
    expect(again.stdout).toBe("I cannot see it.\n");
    const last = JSON.stringify(chatMessages(oai.requests.at(-1)!));
    expect(last).not.toContain("image_url");
    expect(last).toContain("[image omitted: this model cannot see images]");
  });

  it("exits 2 and names the variable when a hosted provider has no key", async () => {
    home = makeHome({ model: { name: "openrouter/meta-llama/llama-3.3-70b-instruct" } });
    const r = await runHearth(["chat", "-m", "hi"], env());
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`Hearth needs an API key for the provider "openrouter" to talk to the model.\n  Run \`npx hearth setup\`: it asks for the key, checks it and keeps it in ${join(home, ".env")}\n  or set it in your shell:  export OPENROUTER_API_KEY=...\n`);
  });

  it("retries a 429 after its retry-after and prints the answer once", async () => {
    ollamaHome();
    oai.enqueue({ type: "http_error", status: 429, headers: { "retry-after": "1" } }, reply("Answer after the wait."));
    const r = await runHearth(["chat", "-m", "hi"], env());
    expect(r.stdout).toBe("Answer after the wait.\n");
    expect(r.code).toBe(0);
    expect(oai.requests).toHaveLength(2);
    expect(oai.requests[1]!.at - oai.requests[0]!.at).toBeGreaterThanOrEqual(900);
  });

  it("falls back from an OpenAI-compatible model to an Anthropic one", async () => {
    ollamaHome({ fallbacks: ["claude-haiku-5"] });
    oai.enqueue({ type: "http_error", status: 404, message: 'model "llama3.2" not found, try pulling it first' });
    anth.enqueue(text("Claude answers."));
    const r = await runHearth(["chat", "-m", "hi"], env(anthropicEnv()));
    expect(r.stdout).toBe("Claude answers.\n");
    expect(r.code).toBe(0);
    expect(oai.requests).toHaveLength(1);
    expect(anth.requests).toHaveLength(1);
    expect(anth.requests[0]!.body.model).toBe("claude-haiku-5");
  });

  it("falls back from an Anthropic model to an OpenAI-compatible one", async () => {
    home = makeHome({ model: { name: "claude-sonnet-5-5", fallbacks: ["ollama/llama3.2"] }, providers: { ollama: { baseUrl: oai.baseUrl } } });
    anth.enqueue({ type: "http_error", status: 404 });
    oai.enqueue(reply("Llama answers."));
    const r = await runHearth(["chat", "-m", "hi"], env(anthropicEnv()));
    expect(r.stdout).toBe("Llama answers.\n");
    expect(r.code).toBe(0);
    expect(anth.requests).toHaveLength(1);
    expect(chatMessages(oai.requests[0]!).at(-1)!.content).toMatch(/\]\nhi$/);
  });

  it("runs a model that cannot call tools without them, and /status says so", async () => {
    ollamaHome({ name: "ollama/gemma" });
    daemon = await startDaemon(home, {});
    oai.enqueue(reply("I answer without tools."));
    const r = await daemon.hearth(["chat", "-m", "what is in my notes?"]);
    expect(r.stdout).toBe("I answer without tools.\n");
    expect(oai.requests.map((q) => (q.body.tools ?? []).length > 0)).toEqual([true, false]);
    const status = await daemon.hearth(["chat", "-m", "/status"]);
    expect(status.stdout.split("\n").slice(0, 2)).toEqual([
      "Model: ollama/gemma",
      "Tools: off — the model cannot call tools (The model API rejected the request (HTTP 400): registry.ollama.ai/library/gemma:latest does not support tools)",
    ]);
    expect(oai.requests).toHaveLength(2);
  });

  it("steering between tool calls: a message during the first call skips the second and reaches the model after the results", async () => {
    ollamaHome();
    daemon = await startDaemon(home, {});
    oai.enqueue(
      calls({ name: "exec", arguments: { command: "sleep 2; echo first-done" } }, { name: "exec", arguments: { command: "echo second" } }),
      reply("Did the first; skipped the second as you asked."),
    );
    const a = daemon.hearth(["chat", "-m", "A: run both"]);
    await oai.waitForRequests(1);
    await new Promise((r) => setTimeout(r, 500));
    const b = daemon.hearth(["chat", "-m", "B: never mind the second one"]);
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.stdout).toBe("Did the first; skipped the second as you asked.\n");
    expect(rb.stdout).toBe("Did the first; skipped the second as you asked.\n");
    expect(oai.requests).toHaveLength(2);
    const tail = chatMessages(oai.requests[1]!).slice(-4);
    expect(tail[0]).toMatchObject({ role: "assistant", tool_calls: [{ id: "call_1" }, { id: "call_2" }] });
    expect(tail[1]).toEqual({ role: "tool", tool_call_id: "call_1", content: expect.stringContaining("first-done") });
    expect(tail[2]).toEqual({ role: "tool", tool_call_id: "call_2", content: `Error: ${SKIPPED_FOR_STEER}` });
    expect(tail[3]).toMatchObject({ role: "user", content: expect.stringMatching(/\]\nB: never mind the second one$/) });
  });

  it("abort: Ctrl+C stops a streaming answer, the partial text is kept, and the next question is answered", async () => {
    ollamaHome();
    oai.enqueue(reply("one two three four five six seven eight nine ten", { chunkSize: 4, chunkDelayMs: 300 }));
    const r = await runHearth(["chat", "-m", "count slowly"], env(), {
      onSpawn: (child) => {
        let out = "";
        let sent = false;
        child.stdout!.on("data", (d: Buffer) => {
          out += d.toString();
          if (out.includes("two") && !sent) {
            sent = true; // once: a second Ctrl+C means something else
            child.kill("SIGINT");
          }
        });
      },
    });
    expect(r.stdout).toMatch(/^one two [\s\S]*\(Stopped\.\)\n$/);
    expect(r.stdout).not.toContain("ten");
    const transcript = readFileSync(join(home, "sessions", "main.jsonl"), "utf8");
    expect(transcript).toContain('"stop":"aborted"');

    oai.enqueue(reply("Next answer."));
    const next = await runHearth(["chat", "-m", "go on"], env());
    expect(next.stdout).toBe("Next answer.\n");
    const sent = chatMessages(oai.requests[1]!);
    expect(sent.at(-2)).toMatchObject({ role: "assistant", content: expect.stringMatching(/^one two [\s\S]*\n\n\[interrupted\]$/) });
  });
});

describe("/model (daemon e2e)", () => {
  it("lists the choices, switches this conversation's model across providers, and hearth status shows it", async () => {
    home = makeHome({
      model: { name: "ollama/llama3.2", fallbacks: ["claude-haiku-5"] },
      providers: { ollama: { baseUrl: oai.baseUrl, models: { gemma: { tools: false, contextWindow: 8192, maxTokens: 2048 } } } },
    });
    daemon = await startDaemon(home, anthropicEnv());
    const say = async (text: string) => (await daemon!.hearth(["chat", "-m", text])).stdout;

    expect(await say("/model")).toBe(
      "Model: ollama/llama3.2\nChoices: ollama/llama3.2, claude-haiku-5, ollama/gemma\nSwitch with /model NAME (any provider/model name); /model default goes back to ollama/llama3.2.\n",
    );
    expect(await say("/model mystery/x")).toBe(
      '"mystery/x" names the provider "mystery", which is neither in providers of config.json nor a preset (anthropic, openai, openrouter, groq, ollama, lmstudio, vllm).\nChoices: ollama/llama3.2, claude-haiku-5, ollama/gemma\n',
    );
    expect(await say("/model claude-haiku-5")).toBe("Model for this conversation: claude-haiku-5.\n");
    anth.enqueue(text("Haiku here."));
    expect(await say("hello")).toBe("Haiku here.\n");
    expect(anth.requests[0]!.body.model).toBe("claude-haiku-5");
    expect(oai.requests).toHaveLength(0);

    expect(await say("/model ollama/gemma")).toBe("Model for this conversation: ollama/gemma. It cannot call tools, so it answers without them.\n");
    oai.enqueue(reply("Gemma here."));
    expect(await say("hello again")).toBe("Gemma here.\n");
    expect(oai.requests[0]!.body).toMatchObject({ model: "gemma", max_tokens: 2048 });
    expect(oai.requests[0]!.body.tools).toBeUndefined();
    // The earlier answer from another provider is part of the conversation it sees.
    expect(chatMessages(oai.requests[0]!).map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);

    const status = await daemon.hearth(["status", "--json"]);
    const main = (JSON.parse(status.stdout) as { sessions: { key: string; model: string }[] }).sessions.find((s) => s.key === "main");
    expect(main!.model).toBe("ollama/gemma");
    const plain = await daemon.hearth(["status"]);
    expect(plain.stdout).toMatch(/\n {2}main +main +model ollama\/gemma {2}last /);

    type Index = { sessions: Record<string, { model?: string }> };
    const stored = async () => {
      await new Promise((r) => setTimeout(r, 700)); // the index is written at most every 500 ms
      return (JSON.parse(readFileSync(join(home, "sessions", "index.json"), "utf8")) as Index).sessions.main!.model;
    };
    expect(await stored()).toBe("ollama/gemma");
    expect(await say("/model default")).toBe("Model for this conversation: ollama/llama3.2 (the default).\n");
    expect(await stored()).toBeUndefined();
  });
});
