// Outside content: what the model reads that is not the owner's own words nor Hearth's — a web
// page or search result, an MCP server's result or resource, a message from another person. It
// may carry instructions (a prompt injection), so a run whose model has it in view is "tainted"
// and the approvals ask before its ways out (approvals/service.ts). It is recognised in the
// model's view of a session, so taint lasts exactly as long as the content stays in view: across
// turns and restarts, until /new (an epoch) or a withdrawal takes it out. A compaction's summary
// of outside content is outside content itself (summaryMessage marks it): a summary may repeat
// the injected instructions.
import type { Message } from "./messages.ts";

/** What a tool's result brings into the run, in words for the question ("a web page"); null: nothing from outside. */
export function outsideContentOfTool(name: string): string | null {
  if (name === "web_fetch") return "a web page";
  if (name === "web_search") return "web search results";
  if (name === "server:web") return "web content";
  if (name === "mcp_read_resource") return "a resource of an MCP server";
  if (name.startsWith("mcp__")) return `a result of the MCP server ${name.split("__")[1] ?? "?"}`;
  return null;
}

/**
 * Where `url` appears, as written, in the model's view: `person` in a message the person the run
 * answers wrote (a user turn not marked `outside`: what they asked for), `outside` in what the
 * model read from outside (a link on a page, a search result, a command's download, another
 * person's message); null when in neither — a URL the model built, which may carry workspace
 * data. Not counted: the model's own text, workspace files, turns Hearth or a model wrote (a
 * summary, a task's result), and a result that only repeats its own call's input (a search
 * result page naming the query it was given).
 */
export function linkSource(view: readonly Message[], url: string): "person" | "outside" | null {
  if (url.length < 8) return null;
  const escaped = JSON.stringify(url).slice(1, -1);
  // What each call (a tool's, or a server tool's) was given: a result repeating it proves nothing.
  const inputs = new Map<string, string>();
  for (const m of view) {
    if (m.role !== "assistant") continue;
    for (const b of m.content) {
      if (b.type === "tool_call") inputs.set(b.id, JSON.stringify(b.input ?? null));
      else if (b.type === "server" && typeof b.raw.id === "string") inputs.set(b.raw.id, JSON.stringify(b.raw.input ?? null));
    }
  }
  const given = (id: unknown) => typeof id === "string" && (inputs.get(id)?.includes(escaped) ?? false);
  let found: "outside" | null = null;
  for (const m of view) {
    switch (m.role) {
      case "user":
        if ((m.kind === "message" || m.kind === "steer") && m.text.includes(url)) {
          if (!m.outside) return "person";
          found = "outside";
        }
        break;
      case "tool_result":
        if ((m.outside !== undefined || outsideContentOfTool(m.toolName) !== null) && m.content.includes(url) && !given(m.toolCallId)) found = "outside";
        break;
      case "assistant":
        if (m.content.some((b) => b.type === "server" && b.raw.type !== "server_tool_use" && JSON.stringify(b.raw).includes(escaped) && !given(b.raw.tool_use_id))) found = "outside";
        break;
      default:
        m satisfies never;
    }
  }
  return found;
}

/**
 * The newest outside content in `view` (the model's view of a session), in words; null when the
 * view holds none. Recognised: a user turn marked `outside` (another person's message, a task or
 * job set up by a tainted answer, a summary of outside content), a result of a tool that reads
 * outside content, and an assistant turn with provider-side tool blocks (web search or fetch).
 */
export function outsideContentIn(view: readonly Message[]): string | null {
  for (let i = view.length - 1; i >= 0; i--) {
    const m = view[i]!;
    switch (m.role) {
      case "user":
        if (m.outside) return m.outside;
        break;
      case "tool_result": {
        const what = m.outside ?? outsideContentOfTool(m.toolName);
        if (what) return what;
        break;
      }
      case "assistant":
        if (m.content.some((b) => b.type === "server")) return outsideContentOfTool("server:web");
        break;
      default:
        m satisfies never;
    }
  }
  return null;
}
