// The main-scope workspace tools: a shell and the file tools, all rooted at ctx.workspace.
import type { Tool } from "../tool.ts";
import { createExecTool } from "./exec.ts";
import { createEditTool, createReadTool, createWriteTool } from "./files.ts";
import type { WorkspaceOrigins } from "./exec.ts";
import type { ExecSandbox } from "./sandbox.ts";
import type { ExecHosts } from "./hosts/ssh-hosts.ts";
import type { Egress } from "../../egress/egress.ts";

export { resolveInWorkspace, type WorkspacePath } from "./workspace-path.ts";
export { describeSandbox, execRefusal, resolveExecSandbox, SandboxUnavailableError, type ExecSandbox } from "./sandbox.ts";
export { killOrphanedCommands, markerPrefixFor } from "./exec-marker.ts";
export { commandEnv } from "./exec.ts";
export { SshHosts, type ExecHosts } from "./hosts/ssh-hosts.ts";

/**
 * `execTimeoutMs` is `tools.exec.timeoutMs` from config (default 120000); `execSandbox` is the
 * daemon's `resolveExecSandbox` decision (absent: unsandboxed, for tests of the tools alone);
 * `execMarkerPrefix` is `markerPrefixFor(home)`.
 */
export function createWorkspaceTools(opts: {
  execTimeoutMs: number;
  execSandbox?: ExecSandbox;
  execMarkerPrefix?: string;
  /** `tools.exec.hosts` as an SshHosts pool; absent or empty: `exec` runs here only. */
  execHosts?: ExecHosts;
  /** Folders a shared scope's `read` may open (shared skills); see ReadToolOptions. */
  sharedReadRoots?: () => readonly string[];
  /** The egress policy a sandboxed command's proxy asks; absent: sandboxed commands have no network. */
  egress?: Egress;
  /** Where the workspace's files came from (memory/provenance.ts); absent: nothing recorded or checked. */
  origins?: WorkspaceOrigins;
}): Tool[] {
  const origins = opts.origins ? { origins: opts.origins } : {};
  return [
    createExecTool({
      defaultTimeoutMs: opts.execTimeoutMs,
      ...(opts.execSandbox ? { sandbox: opts.execSandbox } : {}),
      ...(opts.execMarkerPrefix ? { markerPrefix: opts.execMarkerPrefix } : {}),
      ...(opts.execHosts ? { hosts: opts.execHosts } : {}),
      ...(opts.egress ? { egress: opts.egress } : {}),
      ...origins,
    }),
    createReadTool({ ...(opts.sharedReadRoots ? { sharedRoots: opts.sharedReadRoots } : {}), ...origins }),
    createWriteTool(origins),
    createEditTool(origins),
  ];
}
