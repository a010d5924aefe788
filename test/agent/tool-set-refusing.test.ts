// ToolSet.refusing: the same tool list for the model (a cached prefix stays valid), with calls
// refused by the tool layer.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, ToolSet } from "../../src/agent/tool.ts";

const tool = (name: string) => defineTool({ name, description: `The ${name} tool.`, input: z.object({}), readOnly: true, execute: async () => ({ content: name }) });

describe("ToolSet.refusing", () => {
  const base = new ToolSet([tool("exec"), tool("memory_write"), tool("cron_add")], (name, scope) => (name === "cron_add" && scope === "shared" ? "main only" : null));
  const flush = base.refusing((name) => (name === "memory_write" ? null : "only memory_write now"));

  it("describes exactly the tools the original describes, per scope", () => {
    expect(JSON.stringify(flush.specsFor("main"))).toBe(JSON.stringify(base.specsFor("main")));
    expect(JSON.stringify(flush.specsFor("shared"))).toBe(JSON.stringify(base.specsFor("shared")));
  });

  it("refuses every call but the allowed one, and keeps the original refusals first", () => {
    expect(["exec", "memory_write", "cron_add"].map((n) => flush.permission(n, "main"))).toEqual(["only memory_write now", null, "only memory_write now"]);
    expect(flush.permission("cron_add", "shared")).toBe("main only");
  });
});
