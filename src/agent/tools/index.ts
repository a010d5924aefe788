// The main-scope workspace tools: a shell and the file tools, all rooted at ctx.workspace.
import type { Tool } from "../tool.ts";
import { createExecTool } from "./exec.ts";
import { editTool, readTool, writeTool } from "./files.ts";

export { resolveInWorkspace, type WorkspacePath } from "./workspace-path.ts";

/** `execTimeoutMs` is `tools.exec.timeoutMs` from config (default 120000). */
export function createWorkspaceTools(opts: { execTimeoutMs: number }): Tool[] {
  return [createExecTool({ defaultTimeoutMs: opts.execTimeoutMs }), readTool, writeTool, editTool];
}
