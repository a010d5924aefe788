// What a run read from the web, for /status: hosts fetched and queries searched, by server
// tools or Hearth's own.
import type { Message } from "../../messages.ts";
import { displayHost } from "./progress.ts";

/** One entry per read, in order, duplicates removed: "example.com" for a page, "search: …" for a search. */
export function webReadsOf(messages: readonly Message[]): string[] {
  const reads: string[] = [];
  const add = (name: unknown, input: unknown) => {
    const i = (typeof input === "object" && input !== null ? input : {}) as { url?: unknown; query?: unknown };
    if (name === "web_fetch" && typeof i.url === "string") reads.push(displayHost(i.url));
    if (name === "web_search" && typeof i.query === "string") reads.push(`search: ${i.query}`);
  };
  for (const m of messages) {
    if (m.role !== "assistant") continue;
    for (const b of m.content) {
      if (b.type === "tool_call") add(b.name, b.input);
      else if (b.type === "server" && b.raw.type === "server_tool_use") add(b.raw.name, b.raw.input);
    }
  }
  return [...new Set(reads)];
}
