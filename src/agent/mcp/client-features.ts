// What Hearth declares to an MCP server as a client, and answers when the server asks: `roots`
// (the folders the server may work in), `elicitation` in form and URL mode (asked of the person
// in the chat that made the call, through ToolContext.ask; a link to open only in the owner's
// private chat). Sampling is not declared: a model call a server starts could neither be
// budgeted nor shown to the owner.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { pathToFileURL } from "node:url";
import type { Logger } from "../../process/log.ts";
import type { Scope } from "../messages.ts";
import type { AskChoice, ToolContext } from "../tool.ts";
import { elicitForm, elicitUrl, type FormRequest } from "./elicitation.ts";
import type { McpSdk } from "./sdk.ts";

// Roots are a connection's state: a server asks for them when it likes (server-filesystem once
// after connecting and again on list_changed) and keeps the answer for every call after. So a
// main-scope server gets the workspace, which does not change while Hearth runs (a new one needs
// a restart): no list_changed. A shared server gets none. Its one connection serves every shared
// chat, and "the chat's folder" exists only per call: answering roots/list with the folder of
// the call under way would be kept by the server for the next call, from another chat (and a
// list_changed before each call races with that call), letting one chat's call act in another
// chat's folder.
export const CLIENT_CAPABILITIES = { elicitation: { form: {}, url: {} }, roots: {} };

/** A tool call under way; a question it brings stops its timer while the person answers. */
export interface ActiveCall {
  /** Asks the person the call's run answers; absent when the run answers no chat. */
  ask: ToolContext["ask"];
  /** The scope of the run that made the call (main: the owner's private chat or terminal). */
  scope: Scope;
  signal: AbortSignal;
  pauseTimer(): void;
  resumeTimer(): void;
}

export interface FeatureOptions {
  server: string;
  /** Absolute folders the server may know of (main scope: the workspace; shared: none, see above). */
  roots: readonly string[];
  /** The call a question belongs to, or why it cannot be told (the question is then declined). */
  callAsking: () => ActiveCall | { unknown: string };
  /** How long a person has to answer one question before it is declined. */
  answerTimeoutMs: number;
  log: Logger;
}

export function installClientFeatures(client: Client, sdk: McpSdk, o: FeatureOptions): void {
  client.setRequestHandler(sdk.ListRootsRequestSchema, () => ({
    roots: o.roots.map((dir) => ({ uri: pathToFileURL(dir).href, name: dir.split("/").filter(Boolean).at(-1) ?? dir })),
  }));
  client.setRequestHandler(sdk.ElicitRequestSchema, async (req) => {
    const p = req.params as Record<string, unknown>;
    const found = o.callAsking();
    const declined = (reason: string) => {
      o.log.info("mcp.elicitation_declined", { server: o.server, reason });
      return { action: "decline" as const };
    };
    if ("unknown" in found) return declined(found.unknown);
    const call = found;
    const ask = call.ask;
    if (!ask) return declined("the call came from a run that answers no chat");
    // A link to open (often a sign-in or a payment) is for the owner's eyes: in a shared chat a
    // member would get it, so there it is declined.
    if (p.mode === "url" && call.scope !== "main") return declined("a link to open is sent only to the owner's private chat, and the call came from a shared chat");
    call.pauseTimer();
    try {
      const askOnce = (text: string, choices?: readonly AskChoice[]) => ask(text, { timeoutMs: o.answerTimeoutMs, signal: call.signal, ...(choices ? { choices } : {}) });
      const outcome =
        p.mode === "url"
          ? await elicitUrl(o.server, { message: String(p.message ?? ""), url: String(p.url ?? "") }, askOnce)
          : await elicitForm(o.server, p as unknown as FormRequest, askOnce);
      o.log.info("mcp.elicitation", { server: o.server, action: outcome.action });
      return outcome;
    } finally {
      call.resumeTimer();
    }
  });
}
