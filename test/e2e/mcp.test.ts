// Real third-party MCP servers through a real gateway: model → MCP tool → model round trips over
// stdio and Streamable HTTP, an image reaching the model as an image block, a filesystem server
// rooted at a temp folder, and a group chat refused a main-only server's tool by the tool layer.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel, type RecordedRequest } from "../support/fake-model.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const EVERYTHING = join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const FILESYSTEM = join(root, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const NODE = process.execPath;

let fake: FakeModel;
let t: TestGateway | undefined;
const cleanups: Array<() => void | Promise<void>> = [];
beforeEach(async () => {
  fake = await startFakeModel();
  t = undefined;
});
afterEach(async () => {
  await t?.stop();
  for (const c of cleanups.splice(0).reverse()) await c();
  await fake.close();
});

async function gatewayWith(servers: Record<string, unknown>): Promise<TestGateway> {
  // The test channel marks no sender as the owner, so every run here has read "a message from
  // user1" and an untrusted MCP tool would be asked about: these servers are trusted.
  const trusted = Object.fromEntries(Object.entries(servers).map(([name, s]) => [name, { trust: "*", ...(s as object) }]));
  t = await startTestGateway(fake.url, {
    config: { mcp: { servers: trusted } },
    telegram: { groups: { policy: "allowlist", allow: ["-100"], requireMention: false } },
  });
  await t.gateway.context.runtime.mcp!.settled();
  return t;
}

async function ask(opts: { type?: "dm" | "group"; chat?: string; sender?: string } = {}): Promise<string> {
  const id = t!.channel.say({ chat: opts.chat ?? "1", type: opts.type ?? "dm", sender: opts.sender ?? "1", text: "please" });
  await waitFor("the reply", () => t!.channel.replies.has(id), 20_000);
  return t!.channel.replies.get(id)!.at(-1)!;
}

const toolResult = (r: RecordedRequest) => lastUserContent(r).find((b) => b.type === "tool_result")!;
const toolNames = (r: RecordedRequest) => (r.body.tools as Array<{ name: string }>).map((x) => x.name);

describe("server-everything over stdio", () => {
  it("echo and get-sum go model → tool → model, with the server's schema, sorted after Hearth's tools", async () => {
    await gatewayWith({ everything: { command: NODE, args: [EVERYTHING, "stdio"] } });
    fake.enqueue(toolCall("mcp__everything__echo", { message: "hello from Hearth" }), toolCall("mcp__everything__get-sum", { a: 19, b: 23 }), text("The sum is 42."));
    expect(await ask()).toBe("The sum is 42.");
    expect(fake.requests.length).toBe(3);
    const first = fake.requests[0]!;
    const names = toolNames(first);
    const mcpNames = names.filter((n) => n.startsWith("mcp__"));
    expect(mcpNames).toEqual([...mcpNames].sort());
    expect(mcpNames).toContain("mcp__everything__get-sum");
    expect(names.indexOf("mcp__everything__echo")).toBeGreaterThan(names.indexOf("read"));
    const sum = (first.body.tools as Array<Record<string, unknown>>).find((x) => x.name === "mcp__everything__get-sum");
    expect(sum).toEqual({
      name: "mcp__everything__get-sum",
      description: "Returns the sum of two numbers",
      input_schema: { type: "object", properties: { a: { type: "number", description: "First number" }, b: { type: "number", description: "Second number" } }, required: ["a", "b"] },
    });
    expect(toolResult(fake.requests[1]!)).toEqual({ type: "tool_result", tool_use_id: expect.any(String), content: "Echo: hello from Hearth", cache_control: { type: "ephemeral" } });
    expect(toolResult(fake.requests[2]!).content).toBe("The sum of 19 and 23 is 42.");
  });

  it("the tool list is byte-identical across runs and across a restart of the server", async () => {
    await gatewayWith({ everything: { command: NODE, args: [EVERYTHING, "stdio"] } });
    fake.enqueue(text("one"), text("two"));
    await ask();
    const before = JSON.stringify(fake.requests[0]!.body.tools);
    await t!.gateway.context.runtime.mcp!.stop();
    await t!.stop();
    t = await startTestGateway(fake.url, { home: t!.home, config: { mcp: { servers: { everything: { command: NODE, args: [EVERYTHING, "stdio"] } } } } });
    cleanups.push(() => rmSync(t!.home, { recursive: true, force: true }));
    await t.gateway.context.runtime.mcp!.settled();
    await ask();
    expect(JSON.stringify(fake.requests[1]!.body.tools)).toBe(before);
  });

  it("an image result reaches the model as an image block", async () => {
    await gatewayWith({ everything: { command: NODE, args: [EVERYTHING, "stdio"] } });
    fake.enqueue(toolCall("mcp__everything__get-tiny-image", {}), text("A logo."));
    expect(await ask()).toBe("A logo.");
    const result = toolResult(fake.requests[1]!);
    const content = result.content as Array<Record<string, any>>;
    expect(content.map((b) => b.type)).toEqual(["text", "image"]);
    expect(content[0]!.text).toBe("Here's the image you requested:\nThe image above is the MCP logo.");
    expect(content[1]!.source.type).toBe("base64");
    expect(content[1]!.source.media_type).toBe("image/png");
    expect(Buffer.from(content[1]!.source.data, "base64").subarray(1, 4).toString()).toBe("PNG");
  });
});

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function startHttpEverything(mode: "streamableHttp" | "sse" = "streamableHttp"): Promise<string> {
  const port = await freePort();
  const proc: ChildProcess = spawn(NODE, [EVERYTHING, mode], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  cleanups.push(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGKILL");
      await new Promise((r) => proc.once("exit", r));
    }
  });
  let stderr = "";
  proc.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  await waitFor("the HTTP server to listen", () => /(listening on|running on) port/i.test(stderr), 15_000);
  return `http://127.0.0.1:${port}/${mode === "sse" ? "sse" : "mcp"}`;
}

describe("server-everything over Streamable HTTP", () => {
  it("echo goes model → tool → model", async () => {
    const url = await startHttpEverything();
    await gatewayWith({ web: { url } });
    expect(t!.gateway.context.runtime.mcp!.views()[0]).toMatchObject({ name: "web", transport: "http", status: "ready" });
    fake.enqueue(toolCall("mcp__web__echo", { message: "over http" }), text("Echoed."));
    expect(await ask()).toBe("Echoed.");
    expect(toolResult(fake.requests[1]!).content).toBe("Echo: over http");
  });
});

describe("server-everything over the older HTTP+SSE transport", () => {
  it("is reached through the SSE fallback", async () => {
    const url = await startHttpEverything("sse");
    await gatewayWith({ legacy: { url } });
    expect(t!.gateway.context.runtime.mcp!.views()[0]).toMatchObject({ name: "legacy", transport: "sse", status: "ready" });
    fake.enqueue(toolCall("mcp__legacy__echo", { message: "over sse" }), text("Echoed."));
    expect(await ask()).toBe("Echoed.");
    expect(toolResult(fake.requests[1]!).content).toBe("Echo: over sse");
  });
});

describe("server-filesystem rooted at a temp folder", () => {
  it("reads inside its root and refuses outside it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-fs-root-"));
    const outside = mkdtempSync(join(tmpdir(), "hearth-fs-out-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }), () => rmSync(outside, { recursive: true, force: true }));
    writeFileSync(join(dir, "notes.txt"), "milk, eggs, bread\n");
    writeFileSync(join(outside, "secret.txt"), "not for you\n");
    // Offered the workspace as a root, server-filesystem would serve it instead of its folder.
    // Outside the sandbox: its root is under /tmp, which a sandboxed process sees empty.
    await gatewayWith({ files: { command: NODE, args: [FILESYSTEM, dir], roots: "none", sandbox: false } });
    fake.enqueue(
      toolCall("mcp__files__read_text_file", { path: join(dir, "notes.txt") }),
      toolCall("mcp__files__read_text_file", { path: join(outside, "secret.txt") }),
      text("Read."),
    );
    expect(await ask()).toBe("Read.");
    expect(toolResult(fake.requests[1]!)).toMatchObject({ content: "milk, eggs, bread\n" });
    const refused = toolResult(fake.requests[2]!);
    expect(refused.is_error).toBe(true);
    expect(String(refused.content)).toBe(`Access denied - path outside allowed directories: ${join(outside, "secret.txt")} not in ${dir}`);
    expect(JSON.stringify(fake.requests.map((r) => r.body))).not.toContain("not for you");
  });
});

describe("MCP servers and shared chats", () => {
  it("a group mention whose model calls a main-only server's tool is refused by the tool layer", async () => {
    await gatewayWith({
      everything: { command: NODE, args: [EVERYTHING, "stdio"] },
      team: { command: NODE, args: [EVERYTHING, "stdio"], scope: "shared", tools: { allow: ["echo"] } },
    });
    fake.enqueue(toolCall("mcp__everything__get-env", {}), toolCall("mcp__team__echo", { message: "hi team" }), text("Done."));
    expect(await ask({ type: "group", chat: "-100", sender: "5" })).toBe("Done.");
    // The shared server has resources: the group may read them (never the main-only server's).
    expect(toolNames(fake.requests[0]!)).toEqual(["memory_search", "memory_get", "memory_write", "send_file", "mcp__team__echo", "mcp_read_resource"]);
    expect(toolResult(fake.requests[1]!)).toEqual({
      type: "tool_result",
      tool_use_id: expect.any(String),
      content: "Refused: mcp__everything__get-env belongs to an MCP server that only the owner's private chat may use.",
      is_error: true,
      cache_control: { type: "ephemeral" },
    });
    expect(JSON.stringify(fake.requests.map((r) => r.body))).not.toContain("ANTHROPIC");
    expect(toolResult(fake.requests[2]!).content).toBe("Echo: hi team");
  });
});
