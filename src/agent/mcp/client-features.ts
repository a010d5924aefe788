// What Hearth declares to an MCP server as a client, and answers when the server asks: `roots`
// (the folders the server may work in), `elicitation` in form and URL mode (asked of the person
// in the chat that made the call, through ToolContext.ask). Sampling is not declared: a model
// call a server starts could neither be budgeted nor shown to the owner.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { pathToFileURL } from "node:url";
import type { Logger } from "../../log.ts";
import type { ToolContext } from "../tool.ts";
import { elicitForm, elicitUrl, type FormRequest } from "./elicitation.ts";
import type { McpSdk } from "./sdk.ts";

// The workspace does not change while Hearth runs (a new one needs a restart): no roots list_changed.
export const CLIENT_CAPABILITIES = { elicitation: { form: {}, url: {} }, roots: {} };

/** A tool call under way that may be asked a question; its timer stops while the person answers. */
export interface ActiveCall {
  ask: NonNullable<ToolContext["ask"]>;
  signal: AbortSignal;
  pauseTimer(): void;
  resumeTimer(): void;
}

export interface FeatureOptions {
  server: string;
  /** Absolute folders the server may know of (main scope: the workspace; shared: none). */
  roots: readonly string[];
  /** The call a question belongs to: the latest one under way that can ask; undefined when none. */
  activeCall: () => ActiveCall | undefined;
  /** How long a person has to answer one question before it is declined. */
  answerTimeoutMs: number;
  log: Logger;
}

export function installClientFeatures(client: Client, sdk: McpSdk, o: FeatureOptions): void {
  client.setRequestHandler(sdk.ListRootsRequestSchema, () => ({
    roots: o.roots.map((dir) => ({ uri: pathToFileURL(dir).href, name: dir.split("/").filter(Boolean).at(-1) ?? dir })),
  }));
  client.setRequestHandler(sdk.ElicitRequestSchema, async (req) => {
    const call = o.activeCall();
    if (!call) {
      o.log.info("mcp.elicitation_declined", { server: o.server, reason: "no chat to ask: the server asked outside a call, or the call came from a run that answers no chat" });
      return { action: "decline" as const };
    }
    call.pauseTimer();
    try {
      const ask = (text: string) => call.ask(text, { timeoutMs: o.answerTimeoutMs, signal: call.signal });
      const p = req.params as Record<string, unknown>;
      const outcome =
        p.mode === "url"
          ? await elicitUrl(o.server, { message: String(p.message ?? ""), url: String(p.url ?? "") }, ask)
          : await elicitForm(o.server, p as unknown as FormRequest, ask);
      o.log.info("mcp.elicitation", { server: o.server, action: outcome.action });
      return outcome;
    } finally {
      call.resumeTimer();
    }
  });
}
