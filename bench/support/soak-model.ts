// The model for the soak benchmark: a Messages API on 127.0.0.1 that answers at once and decides
// what to say from the request itself, so that any number of sessions, restarts and retries can
// run against it without a script. It keeps no request bodies (a week of them would be the
// benchmark's own leak), only when each question first reached it and a count per kind.
//
// Questions carry a tag `q<n>` in their text; a directive `q<n> do=<tool>` asks for one tool call
// before the answer. The answer to a run is one paragraph `Answered q<n>.` per question asked
// since the conversation's last answer, so a run that steering joined answers each question once.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { text as readText } from "node:stream/consumers";

export const answerOf = (n: number): string => `Answered q${n}.`;
export const CRON_TEXT = "Soak cron ping: note the time.";
export const TASK_TEXT = "Soak background job: count to three.";

/** What the model is asked for; `answer` covers conversations (the questions it answered). */
export type RequestKind = "answer" | "tool" | "summary" | "heartbeat" | "cron" | "task" | "other";

export interface SoakModel {
  url: string;
  /** performance.now() when a request first carried question n. */
  firstSeen: Map<number, number>;
  /** Requests by kind. */
  counts: Record<RequestKind, number>;
  /** Bytes of request bodies received, all together. */
  bytesIn: number;
  largestRequest: number;
  close(): Promise<void>;
}

type Block = { type?: string; text?: string; content?: unknown };
type Msg = { role?: string; content?: string | Block[] };

const TOOL_INPUTS: Record<string, (n: number) => { name: string; input: unknown }> = {
  exec: () => ({ name: "exec", input: { command: "echo soak" } }),
  approve: (n) => ({ name: "exec", input: { command: `touch approve-${n}.txt` } }),
  mcp: (n) => ({ name: "mcp__everything__echo", input: { message: `soak ${n}` } }),
  task: () => ({ name: "spawn_task", input: { task: TASK_TEXT, label: "soak" } }),
  memory: () => ({ name: "memory_search", input: { query: "soak" } }),
};

const textsOf = (content: Msg["content"]): string[] =>
  typeof content === "string" ? [content] : Array.isArray(content) ? content.flatMap((b) => (b.type === "text" && typeof b.text === "string" ? [b.text] : [])) : [];

function decide(acted: Set<number>, body: { system?: unknown; messages?: Msg[] }): { kind: RequestKind; tags: number[]; text?: string; tool?: { name: string; input: unknown } } {
  const system = typeof body.system === "string" ? body.system : Array.isArray(body.system) ? (body.system as Block[]).map((b) => b.text ?? "").join("\n") : "";
  const messages = body.messages ?? [];
  if (system.startsWith("You write the running summary")) return { kind: "summary", tags: [], text: "The owner and the groups asked numbered questions; each was answered." };
  // The questions since the conversation's last answer (an assistant message with text).
  const asked: string[] = [];
  let toolCalled = false;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "assistant" && textsOf(m.content).some((t) => t.trim() !== "")) break;
    if (m.role === "assistant") toolCalled = true;
    if (m.role === "user") asked.unshift(...textsOf(m.content));
  }
  const joined = asked.join("\n");
  const tags = [...new Set([...joined.matchAll(/\bq(\d+)\b/g)].map((m) => Number(m[1])))];
  if (tags.length === 0) {
    if (joined.includes("Heartbeat check-in")) return { kind: "heartbeat", tags, text: Math.random() < 0.9 ? "HEARTBEAT_OK" : "A gentle reminder from the soak heartbeat." };
    if (joined.includes(CRON_TEXT)) return { kind: "cron", tags, text: "Noted the time." };
    if (joined.includes(TASK_TEXT)) return { kind: "task", tags, text: "One, two, three." };
    return { kind: "other", tags, text: "OK." };
  }
  // One tool call a turn, then the answer to everything asked since (what arrived meanwhile
  // included). Messages that waited behind a run come together: an approval's directive goes
  // first, so the week's approvals are asked (and answered or left to time out) as often as they
  // are sent. Each question's directive is acted on once.
  const directives = [...joined.matchAll(/\bq(\d+) do=(\w+)/g)].filter((m) => TOOL_INPUTS[m[2]!] && !acted.has(Number(m[1])));
  const directive = directives.find((m) => m[2] === "approve") ?? directives[0];
  if (directive && !toolCalled) {
    acted.add(Number(directive[1]));
    return { kind: "tool", tags, tool: TOOL_INPUTS[directive[2]!]!(Number(directive[1])) };
  }
  return { kind: "answer", tags, text: tags.map(answerOf).join("\n\n") };
}

const sse = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

export async function startSoakModel(): Promise<SoakModel> {
  const firstSeen = new Map<number, number>();
  /** Questions whose directive was acted on (one tool call each). */
  const acted = new Set<number>();
  const counts: Record<RequestKind, number> = { answer: 0, tool: 0, summary: 0, heartbeat: 0, cron: 0, task: 0, other: 0 };
  let n = 0;
  const model: SoakModel = { url: "", firstSeen, counts, bytesIn: 0, largestRequest: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const arrived = performance.now();
    void readText(req).then((raw) => {
      if (req.method !== "POST" || !req.url?.startsWith("/v1/messages") || req.url.includes("count_tokens")) {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: "soak model: no such route" } }));
        return;
      }
      model.bytesIn += raw.length;
      model.largestRequest = Math.max(model.largestRequest, raw.length);
      const body = JSON.parse(raw) as { stream?: boolean; model?: string; system?: unknown; messages?: Msg[] };
      const d = decide(acted, body);
      counts[d.kind]++;
      for (const tag of d.tags) if (!firstSeen.has(tag)) firstSeen.set(tag, arrived);
      const id = `msg_soak_${++n}`;
      const block = d.tool ? { type: "tool_use", id: `toolu_soak_${n}`, name: d.tool.name, input: d.tool.input } : { type: "text", text: d.text ?? "" };
      const stop = d.tool ? "tool_use" : "end_turn";
      // The input the real API would count: about four characters a token.
      const usage = { input_tokens: Math.ceil(raw.length / 4), output_tokens: Math.max(1, Math.ceil(JSON.stringify(block).length / 4)), cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
      const head = { id, type: "message", role: "assistant", model: body.model ?? "soak", stop_sequence: null };
      if (body.stream !== true) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ...head, content: [block], stop_reason: stop, usage }));
        return;
      }
      const start = d.tool ? { ...block, input: {} } : { type: "text", text: "" };
      const delta = d.tool ? { type: "input_json_delta", partial_json: JSON.stringify(d.tool.input) } : { type: "text_delta", text: d.text ?? "" };
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.end(
        sse("message_start", { message: { ...head, content: [], stop_reason: null, usage: { ...usage, output_tokens: 0 } } }) +
          sse("content_block_start", { index: 0, content_block: start }) +
          sse("content_block_delta", { index: 0, delta }) +
          sse("content_block_stop", { index: 0 }) +
          sse("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }) +
          sse("message_stop", {}),
      );
    }).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "api_error", message: `soak model: ${String(err)}` } }));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  model.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  model.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return model;
}
