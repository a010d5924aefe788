// Hearth as an MCP client under the official conformance suite (@modelcontextprotocol/conformance,
// a devDependency): every client scenario it lists, one at a time (sse-retry times a reconnect
// to 200 ms, which a loaded machine misses when they run side by side), each starting its own
// server on loopback and running bench/mcp-conformance/client.ts, which drives the real
// `hearth mcp` commands with no daemon. A scenario passes when the suite says so (exit 0: no
// failure and no warning). The figure is how many pass; those that fail are named on stderr.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { Figure } from "./harness.ts";

const client = fileURLToPath(new URL("./mcp-conformance/client.ts", import.meta.url));
/** Scenarios Hearth does not implement: cross-app access (an identity provider's token exchanged for the server's) is an extension. */
const TARGET = 24;

function run(suite: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [suite, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("close", (code) => resolve({ code: code ?? 1, out }));
  });
}

export async function mcpConformanceBench(): Promise<Figure[]> {
  // Resolved here, not on import: a checkout that has not run `npm install` since still runs the other benchmarks.
  const suite = createRequire(import.meta.url).resolve("@modelcontextprotocol/conformance/dist/index.js");
  const listed = await run(suite, ["list", "--client"]);
  const scenarios = [...listed.out.matchAll(/^\s+- (\S+) \[/gm)].map((m) => m[1]!);
  if (scenarios.length === 0) throw new Error(`the conformance suite listed no client scenarios: ${listed.out}`);
  const failed: string[] = [];
  for (const scenario of scenarios) {
    const r = await run(suite, ["client", "--command", `${process.execPath} ${client}`, "--scenario", scenario, "--timeout", "60000"]);
    if (r.code !== 0) failed.push(scenario);
  }
  if (failed.length) process.stderr.write(`mcp conformance: not passed: ${failed.join(", ")}\n`);
  return [{ name: `MCP conformance: client scenarios passed (of ${scenarios.length})`, value: scenarios.length - failed.length, unit: "", target: TARGET, better: "higher" }];
}
