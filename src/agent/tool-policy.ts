// Which tools a scope may use (DESIGN §4). Enforced per call by the tool runner, so a
// shared-scope run cannot reach a main-only tool whatever the model was told or tries.
import type { Scope } from "./messages.ts";
import type { ToolPermission } from "./tool.ts";

/** Tools a shared scope (groups, paired DMs) has by default. */
export const SHARED_SCOPE_TOOLS: ReadonlySet<string> = new Set(["memory_search", "memory_get", "memory_write", "send_file"]);

/**
 * The background-task tools. Main-only through `tools.shared.allow`; a group the owner opened to
 * tasks (`channels.*.groups.tasks`) gets them for its own runs (`openTasks`), and the task
 * service then shows and cancels only that group's tasks.
 */
export const TASK_TOOLS: ReadonlySet<string> = new Set(["spawn_task", "task_status", "cancel_task"]);

/** Tools only the owner's main scope may ever use, even if the owner lists them in `tools.shared.allow`. */
export const MAIN_ONLY_TOOLS: ReadonlySet<string> = new Set(["cron_add", "cron_list", "cron_remove", ...TASK_TOOLS]);

/**
 * Main scope may use every tool. Shared scope may use the memory tools plus the names the
 * owner put in `tools.shared.allow`.
 */
export function scopePermission(sharedAllow: readonly string[] = []): ToolPermission {
  const allowed = new Set([...SHARED_SCOPE_TOOLS, ...sharedAllow.filter((t) => !MAIN_ONLY_TOOLS.has(t))]);
  return (toolName: string, scope: Scope) => {
    if (scope === "main") return null;
    return allowed.has(toolName)
      ? null
      : `${toolName} is only available in the owner's private chat. This conversation can use: ${[...allowed].join(", ")}.`;
  };
}

/**
 * Adds the extensions' rules to `base` (DESIGN §4): `mcp__…` tools follow their server's scope
 * whatever `tools.shared.allow` says, and a shared scope gets `read` when a shared skill exists —
 * the read tool itself then opens only shared skills' folders (files.ts, ReadToolOptions).
 * If the owner allowed `read` to shared scopes explicitly, that rule stands unchanged.
 */
export function withExtensions(
  base: ToolPermission,
  ext: { sharedAllow: readonly string[]; mcp: (toolName: string, scope: Scope) => string | null; hasSharedSkills: () => boolean },
): ToolPermission {
  return (toolName, scope) => {
    if (scope === "main") return base(toolName, scope);
    if (toolName.startsWith("mcp__") || toolName === "mcp_read_resource") return ext.mcp(toolName, scope);
    if (toolName === "read" && !ext.sharedAllow.includes("read") && ext.hasSharedSkills()) return null;
    return base(toolName, scope);
  };
}

/**
 * The permission of one run in a group the owner opened to background tasks: `base`, plus the
 * task tools in the shared scope. Nothing else is widened (cron stays main-only).
 */
export function withTaskTools(base: ToolPermission): ToolPermission {
  return (toolName, scope) => (scope === "shared" && TASK_TOOLS.has(toolName) ? null : base(toolName, scope));
}
