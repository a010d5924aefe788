// Questions with buttons for the owner outside the approvals: a stranger's pairing request
// (Approve / Deny), `/model` (the configured models), a budget notice ("Raise today's limit by
// $N"). Kept in memory: after a restart the buttons answer "no longer open" and the command
// still works as text. Only the owner's press counts.
import { randomBytes } from "node:crypto";
import type { Choice, ChoicePress, DeliveryTarget, InboundMessage, QuestionKind } from "../../channels/channel.ts";
import { ownerTarget } from "../sessions.ts";
import { usdText } from "../../spending/budget.ts";
import { approvePairing } from "../access/pairing-approval.ts";
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../../process/log.ts";
import type { Budget } from "../../spending/budget.ts";
import type { PairingApprovalDeps } from "../access/pairing-approval.ts";
import type { PairingStore } from "../access/pairing.ts";
import type { AgentRuntime } from "../agent-runtime.ts";
import type { ChannelRegistry } from "../delivery/channel-registry.ts";
import type { SessionStore } from "../sessions.ts";

/** What the owner's questions use of the gateway: the channels to ask in, and the stores a press changes. */
export interface OwnerQuestionDeps extends PairingApprovalDeps {
  budget: Budget;
  channels: ChannelRegistry;
  config: Config;
  log: Logger;
  ownerQuestions: OwnerQuestions;
  pairing: PairingStore;
  runtime: AgentRuntime;
  sessions: SessionStore;
}

/** What a press did: the presser's short answer, and the line the question shows from now on (absent: it stays open). */
export type PressResult = { answer: string; settled?: string };

interface Open {
  to: DeliveryTarget;
  messageId: string;
  text: string;
  onPress: (choiceId: string, by: string) => PressResult;
}

/** Questions older than this many are forgotten (their buttons then answer "no longer open"). */
const MAX_OPEN = 100;

export class OwnerQuestions {
  readonly #open = new Map<string, Open>();
  readonly #ctx: OwnerQuestionDeps;

  constructor(ctx: OwnerQuestionDeps) {
    this.#ctx = ctx;
  }

  /** Whether `key` is one of these questions (else it is an approval's). */
  has(key: string): boolean {
    return this.#open.has(key);
  }

  /**
   * Shows `text` with `choices` in `to` when its channel has buttons; resolves false when it
   * cannot (the caller then says it in words). `kind`: what a press decides (a pairing request is
   * `access`: never settled by a bare number where a platform has no buttons). Never rejects.
   */
  async ask(to: DeliveryTarget, kind: QuestionKind, text: string, choices: Choice[], onPress: Open["onPress"]): Promise<boolean> {
    const { channels, log } = this.#ctx;
    if (!channels.canAsk(to.channel)) return false;
    const key = `o${randomBytes(6).toString("base64url")}`;
    try {
      const messageId = await channels.askChoices(to, { key, kind, text, choices });
      this.#open.set(key, { to, messageId, text, onPress });
      if (this.#open.size > MAX_OPEN) this.#open.delete(this.#open.keys().next().value!);
      return true;
    } catch (err) {
      log.warn("owner_question.ask_failed", { channel: to.channel, error: err });
      return false;
    }
  }

  async press(p: ChoicePress): Promise<string> {
    const q = this.#open.get(p.key);
    if (!q) return "This request is no longer open.";
    if (!p.by.isOwner) return "Only the owner can decide this.";
    const result = q.onPress(p.choiceId, p.by.name);
    if (result.settled !== undefined) {
      this.#open.delete(p.key);
      await this.#ctx.channels.settleChoices(q.to, q.messageId, `${q.text}\n\n${result.settled}`).catch((err: unknown) => this.#ctx.log.warn("owner_question.settle_failed", { error: err }));
    }
    return result.answer;
  }
}

/** Tells the owner about a new pairing code, with Approve / Deny (their most recent chat). */
export async function askAboutPairing(ctx: OwnerQuestionDeps, m: InboundMessage, code: string): Promise<void> {
  const to = ownerTarget(ctx.sessions);
  const text = `🤝 ${m.sender.name} (${m.channel}:${m.sender.id}) asks to talk with you privately. Their pairing code: ${code}`;
  await ctx.ownerQuestions.ask(to, "access", text, [{ id: "approve", label: "Approve" }, { id: "deny", label: "Deny" }], (choice, by) => {
    ctx.pairing.reload(ctx.log);
    if (choice === "approve") {
      const approved = approvePairing(ctx, code);
      return approved ? { answer: "Approved.", settled: `✅ Approved by ${by}: ${approved.name} can talk to me now.` } : { answer: "That code has expired.", settled: "⌛ The code expired before it was approved." };
    }
    const declined = ctx.pairing.deny(code);
    return { answer: "Denied.", settled: declined ? `❌ Denied by ${by}.` : "⌛ The code expired before it was answered." };
  });
}

/** `/model` with buttons: one per configured model (at most 10); a press switches the conversation's model. */
export async function askModel(ctx: OwnerQuestionDeps, to: DeliveryTarget, sessionKey: string, scope: "main" | "shared", text: string): Promise<boolean> {
  const names = ctx.runtime.modelChoices().slice(0, 10);
  if (names.length < 2) return false;
  return ctx.ownerQuestions.ask(to, "setting", text, names.map((name, i) => ({ id: String(i), label: name })), (choice, by) => {
    const name = names[Number(choice)];
    if (name === undefined) return { answer: "Unknown choice." };
    ctx.sessions.choose(sessionKey, scope, { model: name === ctx.config.model.name ? undefined : name });
    return { answer: `Model: ${name}.`, settled: `✅ ${by} chose ${name} for this conversation.` };
  });
}

/** A budget notice with "Raise today's limit by $N" (N: half the daily limit, at least $1; $5 without a daily limit). */
export async function notifyOwnerWithRaise(ctx: OwnerQuestionDeps, to: DeliveryTarget, text: string): Promise<boolean> {
  const daily = ctx.config.budget.daily;
  const amount = daily === undefined ? 5 : Math.max(1, Math.ceil(daily / 2));
  return ctx.ownerQuestions.ask(to, "setting", text, [{ id: "raise", label: `Raise today's limit by ${usdText(amount)}` }], (_choice, by) => {
    const s = ctx.budget.raise(amount);
    ctx.log.info("budget.raised", { usd: amount, day: s.day, by });
    return { answer: "Raised.", settled: `✅ ${by} raised today's limit by ${usdText(amount)}, until midnight.` };
  });
}
