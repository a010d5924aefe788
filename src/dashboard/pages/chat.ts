// Chat: the owner's main conversation in the browser. A message goes in exactly as one typed in
// `hearth chat` (the terminal channel, session main), and its answer streams back as
// newline-delimited JSON events until the final text, with a `waiting` event while the run
// waits for an approval (asked in a chat with buttons, answered there or on Approvals); Stop
// ends main's run as /stop does. While the page is open, proactive messages to the terminal
// channel (a background task's result) arrive as server-sent events (`/api/chat/notices`).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import type { CliEvent } from "../../channels/terminal/channel.ts";
import { esc } from "../layout.ts";
import { field, STREAMED, type Page } from "../pages.ts";

/** Longest message the page sends (the router refuses longer ones anyway). */
const MAX_TEXT = 100_000;
const MAX_FILES = 5;

export const page: Page = {
  id: "chat",
  path: "/chat",
  title: "Chat",
  order: 10,
  render(host) {
    const history = host.mainHistory(50);
    const lines = history.map((l) => `<div class="msg ${l.role}"><div class="who">${l.role === "user" ? "You" : "Hearth"}</div><div class="text">${esc(l.text)}</div></div>`).join("\n");
    return `
<p class="muted">Your main session — the same conversation as in your private chats with Hearth and <code>hearth chat</code>.</p>
<div class="chat" id="chat-log" aria-live="polite" aria-label="Conversation">${lines || '<p class="empty" id="chat-empty">No messages yet.</p>'}</div>
<form class="chat-form" id="chat-form">
  <label class="sr-only" for="chat-text">Message</label>
  <textarea id="chat-text" name="text" rows="3" placeholder="Write to Hearth… (Ctrl+Enter sends)" required></textarea>
  <div class="row">
    <label class="file"><span>Attach</span> <input type="file" id="chat-files" multiple></label>
    <span class="grow"></span>
    <button type="button" class="btn danger" id="chat-stop" disabled>Stop</button>
    <button type="submit" class="btn primary" id="chat-send">Send</button>
  </div>
</form>
<script src="/static/chat.js" defer></script>`;
  },
  actions: {
    send(host, body, { res }) {
      const text = field(body, "text", { optional: true, trim: false });
      if (text.length > MAX_TEXT) throw new Error(`The message is longer than ${MAX_TEXT} characters.`);
      const files = storeUploads(host.chat.uploadDir(), body.files);
      if (!text.trim() && files.length === 0) throw new Error("The message is empty.");
      res.writeHead(200, { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" });
      let requestId = "";
      const early: CliEvent[] = [];
      const write = (e: CliEvent) => {
        if (!("requestId" in e)) return;
        if (!requestId) {
          early.push(e);
          return;
        }
        if (e.requestId !== requestId) return;
        res.write(`${JSON.stringify(e)}\n`);
        if (e.type === "final" || e.type === "failed") end();
      };
      const client = host.chat.attach(write);
      // The run may wait for the owner's approval: said once when it starts and once when it ends.
      let waitingFor: string | null = null;
      const watch = setInterval(() => {
        const now = host.status().sessions.find((s) => s.key === "main")?.waitingFor ?? null;
        if (now === waitingFor) return;
        waitingFor = now;
        res.write(`${JSON.stringify({ type: "waiting", for: now })}\n`);
      }, 250);
      const end = () => {
        clearInterval(watch);
        host.chat.detach(client);
        res.end();
        // The gateway stored its own copy of each attachment before it answered.
        for (const f of files) rmSync(f, { force: true });
      };
      res.on("close", () => {
        clearInterval(watch);
        host.chat.detach(client);
      });
      requestId = host.chat.send(client, text, files);
      for (const e of early.splice(0)) write(e);
      return STREAMED;
    },
    stop(host) {
      host.chat.stop();
      return {};
    },
  },
};

/** Attachments come as `{ name, data }` (base64); each is written to the upload folder, owner only. */
function storeUploads(dir: string, raw: unknown): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > MAX_FILES) throw new Error(`Attach at most ${MAX_FILES} files.`);
  const out: string[] = [];
  for (const f of raw as Array<{ name?: unknown; data?: unknown }>) {
    if (typeof f?.name !== "string" || typeof f.data !== "string") throw new Error("An attachment lacks its name or data.");
    const safe = path.basename(f.name).replace(/[^\w.\- ]/g, "_").slice(0, 100) || "file";
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `${randomUUID().slice(0, 8)}-${safe}`);
    writeFileSync(file, Buffer.from(f.data, "base64"), { mode: 0o600 });
    out.push(file);
  }
  return out;
}
