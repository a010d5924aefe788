// The tool calls the approvals judge, as facts (policy.ts ActionFacts): a command, a file sent
// out, a job or task set up to act later, an MCP call that may carry data out. Each gets one
// canonical text (what a grant covers, and what the question shows) and, for the tools other
// than exec, the clause a tainted run's question gives after its taint.
import type { McpToolOrigin } from "../agent/tool.ts";
import { execFacts, placeOf, toolFacts, type ActionFacts } from "./policy.ts";

/** The call as the gate is given it (agent/tool.ts ToolGate.admit). */
export interface JudgedCall {
  name: string;
  input: unknown;
  mcp?: McpToolOrigin;
}

/** The calls the policy judges, as facts; null for every other tool (and a trusted MCP tool): never asked about. */
export async function factsOf(call: JudgedCall, workspace: string): Promise<ActionFacts | null> {
  const i = (call.input ?? {}) as Record<string, unknown>;
  const str = (v: unknown): string => (typeof v === "string" ? v.trim() : "");
  switch (call.name) {
    case "exec": {
      // On an SSH exec host the command acts there: asked and granted per host, never as here.
      const on = str(i.host) !== "" ? placeOf(str(i.host)) : workspace;
      return execFacts(String(i.command ?? ""), on);
    }
    case "send_file":
      return { ...toolFacts(call.name, `send_file ${String(i.path ?? "")}`, workspace, []), risk: "this sends a file out" };
    case "cron_add":
      return { ...toolFacts(call.name, cronAddText(i), workspace, []), risk: "this sets up a job that acts later, on its own" };
    case "cron_remove":
      return { ...toolFacts(call.name, `cron_remove ${str(i.id)}`, workspace, []), risk: "this deletes a scheduled job" };
    case "memory_write": {
      // What a tainted run notes speaks in every later context, where nothing marks it as outside content.
      const to = i.target === "memory" ? "MEMORY.md" : i.target === "person" ? "the notes about the person writing" : "today's log";
      return { ...toolFacts(call.name, `memory_write → ${to}: ${typeof i.text === "string" ? i.text.trim() : ""}`, workspace, []), risk: "this writes a note that every later conversation is told" };
    }
    case "spawn_task":
      return { ...toolFacts(call.name, spawnText(i), workspace, []), risk: "this starts a background task that acts on its own" };
  }
  const mcp = call.mcp;
  if (!mcp || mcp.trusted) return null;
  const hints = Object.entries(mcp.annotations).filter(([k]) => k.endsWith("Hint") || k === "title");
  return {
    ...toolFacts(call.name, `${call.name} ${JSON.stringify(call.input ?? {})}`, workspace, []),
    risk: "this MCP tool may carry data out",
    ...(hints.length > 0 ? { notes: [`the server says of it (not trusted): ${hints.map(([k, v]) => `${k} ${JSON.stringify(v)}`).join(", ")}`] } : {}),
  };
}

/**
 * `cron_add every 1h → telegram:-1001: <prompt>`: the schedule, where its answers go ("this chat"
 * for the default, the chat the run answers) and what it will be told. Same call, same text.
 */
function cronAddText(i: Record<string, unknown>): string {
  const str = (v: unknown): string => (typeof v === "string" ? v.trim().replace(/\s+/g, " ") : "");
  const schedule = str(i.cron) ? `cron ${str(i.cron)}${str(i.tz) ? ` (${str(i.tz)})` : ""}` : str(i.every) ? `every ${str(i.every)}` : str(i.at) ? `at ${str(i.at)}` : "no schedule";
  const how = [...(i.session === "isolated" ? ["isolated"] : []), ...(i.task === true ? ["as a background task"] : [])];
  const to = !str(i.deliver) || str(i.deliver) === "origin" ? "this chat" : str(i.deliver);
  return `cron_add ${schedule}${how.length ? `, ${how.join(", ")}` : ""} → ${to}: ${typeof i.message === "string" ? i.message.trim() : ""}`;
}

/** `spawn_task → this chat: <task>`, with its context and tools on lines of their own. */
function spawnText(i: Record<string, unknown>): string {
  const context = typeof i.context === "string" && i.context.trim() ? `\ncontext: ${i.context.trim()}` : "";
  const tools = Array.isArray(i.tools) && i.tools.length ? `\ntools: ${i.tools.map(String).join(", ")}` : "";
  return `spawn_task → this chat: ${typeof i.task === "string" ? i.task.trim() : ""}${context}${tools}`;
}
