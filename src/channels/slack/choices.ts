// Questions with buttons on Slack: Block Kit, the question as a section and its choices as one
// actions block; a press arrives as a `block_actions` payload, acknowledged at once, handed to
// the handler (which decides who counts: only the owner), and its answer shown to the presser
// alone (an ephemeral message). Settling replaces the blocks with the text that says who decided.
import type { ChoiceHandler, ChoiceQuestion } from "../channel.ts";
import { printable } from "../printable.ts";
import { escapeSlack } from "./mrkdwn.ts";
import type { SlackWeb } from "./reply.ts";

/** A button's action_id: `q:<key>:<choice>` (Slack allows 255 characters). */
export const ACTION_ID = /^q:([A-Za-z0-9_-]{1,24}):([A-Za-z0-9_-]{1,16})$/;

/** Slack's limits: a section's text, and the elements of an actions block. */
const MAX_SECTION = 3000;
const MAX_BUTTONS = 25;

const section = (text: string) => ({ type: "section", text: { type: "plain_text", text: text.length > MAX_SECTION ? `${text.slice(0, MAX_SECTION - 1)}…` : text || " " } });

export function questionBlocks(q: ChoiceQuestion): unknown[] {
  const n = q.choices.length;
  return [
    section(q.text),
    {
      type: "actions",
      block_id: "choices",
      elements: q.choices.slice(0, MAX_BUTTONS).map((c, i) => ({
        type: "button",
        text: { type: "plain_text", text: c.label },
        action_id: `q:${q.key}:${c.id}`,
        value: c.id,
        // The first choice (Allow once, Approve) is the primary one, the last (Deny) the danger.
        ...(n > 1 && i === 0 ? { style: "primary" } : n > 1 && i === n - 1 ? { style: "danger" } : {}),
      })),
    },
  ];
}

export async function sendQuestion(web: SlackWeb, target: { channel: string; threadTs?: string }, q: ChoiceQuestion): Promise<string> {
  const r = await web.chat.postMessage({ channel: target.channel, text: escapeSlack(q.text), blocks: questionBlocks(q), ...(target.threadTs ? { thread_ts: target.threadTs } : {}) });
  if (!r.ts) throw new Error("Slack did not name the posted question");
  return r.ts;
}

/** The question now shows `text` (who decided) and no buttons. */
export async function settleQuestion(web: SlackWeb, channel: string, ts: string, text: string): Promise<void> {
  await web.chat.update({ channel, ts, text: escapeSlack(text), blocks: [section(text)] });
}

/** The fields of a block_actions payload Hearth reads. */
export interface BlockActionsBody {
  user: { id: string; name?: string; username?: string };
  channel?: { id: string };
  container?: { channel_id?: string; thread_ts?: string };
  message?: { thread_ts?: string };
  actions: Array<{ action_id: string; type: string }>;
}

/**
 * One press to the handler, and its answer back to the presser alone. Buttons Hearth did not
 * make are left alone. The payload has been acknowledged before this runs.
 */
export async function handlePress(web: SlackWeb, body: BlockActionsBody, ownerIds: readonly string[], handler: ChoiceHandler | undefined): Promise<void> {
  const action = body.actions[0];
  const parsed = action ? ACTION_ID.exec(action.action_id) : null;
  if (!parsed || !handler) return;
  const user = body.user;
  const text = await handler({ key: parsed[1]!, choiceId: parsed[2]!, channel: "slack", by: { id: user.id, name: printable(user.name ?? user.username ?? user.id), isOwner: ownerIds.includes(user.id) } });
  const channel = body.channel?.id ?? body.container?.channel_id;
  if (!channel || !text) return;
  const thread = body.message?.thread_ts ?? body.container?.thread_ts;
  await web.chat.postEphemeral({ channel, user: user.id, text: escapeSlack(text), ...(thread ? { thread_ts: thread } : {}) });
}
