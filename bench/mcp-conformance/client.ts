// Hearth as the client under test of the official MCP conformance suite
// (@modelcontextprotocol/conformance; bench/mcp-conformance.bench.ts runs it). The suite starts a
// server for a scenario and runs this file with the server's URL as its last argument, the
// scenario in MCP_CONFORMANCE_SCENARIO and its credentials, if any, in MCP_CONFORMANCE_CONTEXT.
// It does what an owner would: writes config.json by hand (no "version", a client secret in
// plain text, as the README's examples have it) in a new home, then runs the real `hearth mcp`
// commands with no daemon. A login link is followed as a browser would (the suite's
// authorization server consents at once).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const hearth = fileURLToPath(new URL("../../bin/hearth.js", import.meta.url));
const url = process.argv.at(-1)!;
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as Record<string, string | undefined>;

/** The server's entry in config.json, as the owner would write it for this scenario. */
function serverEntry(): Record<string, unknown> {
  switch (scenario) {
    case "auth/pre-registration":
      return { url, auth: { type: "oauth", clientId: context.client_id, clientSecret: context.client_secret } };
    case "auth/client-credentials-basic":
      return { url, auth: { type: "client_credentials", clientId: context.client_id, clientSecret: context.client_secret } };
    case "auth/client-credentials-jwt":
      return { url, auth: { type: "client_credentials", clientId: context.client_id, privateKeyJwt: { privateKey: context.private_key_pem, algorithm: context.signing_algorithm ?? "ES256" } } };
    default:
      // Where the authorization server takes client ID metadata documents, Hearth offers one.
      return scenario.startsWith("auth/") ? { url, auth: { type: "oauth", clientMetadataUrl: "https://conformance-test.local/client-metadata.json" } } : { url };
  }
}

/** The command each scenario needs: a tool call where it checks one, else the tool list. */
function command(): { args: string[]; input?: string } {
  if (scenario === "tools_call") return { args: ["mcp", "call", "conf", "add_numbers", '{"a":2,"b":3}'] };
  if (scenario === "elicitation-sep1034-client-defaults") return { args: ["mcp", "call", "conf", "test_client_elicitation_defaults"], input: "\n\n\n\n\n\n" };
  if (scenario === "sse-retry") return { args: ["mcp", "call", "conf", "test_reconnection"] };
  if (scenario.startsWith("auth/client-credentials") || scenario === "initialize") return { args: ["mcp", "tools", "conf"] };
  if (scenario.startsWith("auth/")) return { args: ["mcp", "call", "conf", "test-tool", "--no-browser"] };
  return { args: ["mcp", "tools", "conf"] };
}

const home = mkdtempSync(join(tmpdir(), "hearth-conformance-"));
writeFileSync(join(home, "config.json"), JSON.stringify({ mcp: { servers: { conf: serverEntry() } } }, null, 2), { mode: 0o600 });
const { args, input } = command();
const child = spawn(process.execPath, [hearth, ...args], { env: { ...process.env, HEARTH_HOME: home }, stdio: ["pipe", "pipe", "inherit"] });
child.stdin.end(input ?? "");
let out = "";
let browsed = 0;
child.stdout.on("data", (d: Buffer) => {
  process.stdout.write(d);
  out += d.toString();
  // Each login link once (a step-up asks for a second login), as the owner would open each.
  const links = [...out.matchAll(/^(https?:\/\/\S+\/authorize\?\S+)$/gm)].map((m) => m[1]!);
  for (const link of links.slice(browsed)) {
    // The browser: the authorization endpoint redirects to Hearth's loopback callback.
    void fetch(link, { redirect: "follow" }).then((r) => r.text()).catch((err: unknown) => process.stderr.write(`browser: ${String(err)}\n`));
  }
  browsed = links.length;
});
// The suite gives up on a scenario after its --timeout and leaves this process behind: it
// ends the command itself first.
const limit = setTimeout(() => child.kill("SIGKILL"), 50_000);
const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? 1)));
clearTimeout(limit);
rmSync(home, { recursive: true, force: true });
process.exit(code);
