// The task tools in shared scopes: refused as before unless the run is of a group the owner
// opened to tasks, and then only they are added (cron stays main-only).
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, ToolSet } from "../../src/agent/tool.ts";
import { MAIN_ONLY_TOOLS, scopePermission, TASK_TOOLS, withTaskTools } from "../../src/agent/tool-policy.ts";

const tool = (name: string) => defineTool({ name, description: `The ${name} tool.`, input: z.object({}), readOnly: true, execute: async () => ({ content: name }) });
const names = ["memory_search", "exec", "cron_add", "spawn_task", "task_status", "cancel_task"];
const base = new ToolSet(names.map(tool), scopePermission(["spawn_task", "exec"]));

describe("the task tools' policy", () => {
  it("keeps them main-only whatever tools.shared.allow says, with the same refusal as before", () => {
    expect(MAIN_ONLY_TOOLS).toEqual(new Set(["cron_add", "cron_list", "cron_remove", ...TASK_TOOLS]));
    expect(base.permission("spawn_task", "shared")).toBe("spawn_task is only available in the owner's private chat. This conversation can use: memory_search, memory_get, memory_write, send_file, exec.");
    expect(base.specsFor("shared").map((s) => s.name)).toEqual(["memory_search", "exec"]);
    expect(base.specsFor("main").map((s) => s.name)).toEqual(names);
  });

  it("a group opened to tasks gets the three task tools listed and allowed, nothing else widened, and a narrower set still narrows", () => {
    const opened = base.widened(withTaskTools);
    expect(opened.specsFor("shared").map((s) => s.name)).toEqual(["memory_search", "exec", "spawn_task", "task_status", "cancel_task"]);
    expect(["spawn_task", "task_status", "cancel_task"].map((n) => opened.permission(n, "shared"))).toEqual([null, null, null]);
    expect(opened.permission("cron_add", "shared")).toMatch(/^cron_add is only available in the owner's private chat/);
    const narrowed = opened.refusing((n) => (n === "memory_search" ? null : "not given"));
    expect(narrowed.permission("spawn_task", "shared")).toBe("not given");
  });
});
