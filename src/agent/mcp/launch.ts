// How a stdio MCP server's process is started: in the exec sandbox (its own namespaces, the
// workspace writable, the rest read-only, Hearth's home hidden) and behind the egress proxy, as a
// command is, unless the owner opted it out (`mcp.servers.<name>.sandbox: false`) or turned the
// sandbox off. The connection calls the launcher before each start of the process.
import { mkdirSync } from "node:fs";
import { execRefusal, sandboxedCommand, type ExecSandbox } from "../tools/sandbox.ts";
import { shellQuote } from "../tools/hosts/ssh-hosts.ts";
import type { Egress, ProxySession, Requester } from "../../egress/egress.ts";

/** What to start: the process as configured. */
export interface StdioCommand {
  name: string;
  command: string;
  args: readonly string[];
  cwd?: string | undefined;
}

/** How to start it, and what to close once it has exited; or why it may not start. */
export type Launch = { type: "start"; command: string; args: string[]; env: Record<string, string>; close(): Promise<void> } | { type: "refused"; reason: string };

/**
 * Called before each start of a stdio server's process. Resolves how to start it; never rejects
 * (a failure is a "refused" with the reason shown as the server's error).
 */
export type StdioLauncher = (server: StdioCommand) => Promise<Launch>;

/** Starts every server as configured, unconfined: `hearth mcp` probes and tests of the client alone. */
export const unconfined: StdioLauncher = async (s) => ({ type: "start", command: s.command, args: [...s.args], env: {}, close: async () => {} });

/**
 * The daemon's launcher: `sandbox()` is the exec sandbox decided at start; `optedOut(name)` is
 * `mcp.servers.<name>.sandbox === false`; `requester(name)` decides the server's connections
 * that the egress rules leave open.
 */
export function sandboxedLauncher(opts: {
  sandbox: () => ExecSandbox;
  egress: Egress;
  optedOut: (name: string) => boolean;
  requester: (name: string) => Requester & { session: string };
  workspace: string;
  /**
   * The server's own home, kept across starts (created mode 700): it is its HOME in the sandbox,
   * so `npx -y …` and `uvx …` have a cache to write (the user's home is read-only there).
   */
  homeOf: (name: string) => string;
}): StdioLauncher {
  return async (s) => {
    const sb = opts.sandbox();
    if (opts.optedOut(s.name) || (sb.kind === "none" && sb.why === "off")) return unconfined(s);
    const refusal = execRefusal(sb);
    if (refusal) return { type: "refused", reason: refusal.replace(/^Commands cannot run/, "The server cannot start").replace("runs commands only", "runs MCP servers only") };
    let proxy: ProxySession | undefined;
    try {
      proxy = sb.kind === "bwrap" && sb.network ? await opts.egress.open(opts.requester(s.name)) : undefined;
    } catch (err) {
      return { type: "refused", reason: `its network proxy could not start (${err instanceof Error ? err.message : String(err)})` };
    }
    const home = opts.homeOf(s.name);
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const line = ["exec", s.command, ...s.args].map(shellQuote).join(" ");
    const { file, args, env } = sandboxedCommand(sb, line, s.cwd ?? opts.workspace, proxy, [home]);
    return { type: "start", command: file, args, env: { ...env, HOME: home }, close: async () => void (await proxy?.close()) };
  };
}
