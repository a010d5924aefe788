// What the approvals need from the gateway, in one narrow interface: show a question with
// buttons in a chat, change it once decided, and know the owner's preferred chat. Tests hand the
// approvals a fake of it; the daemon builds it from the gateway context (gateway/hosts/approvals-host.ts).
import type { ChoiceQuestion, DeliveryTarget } from "../channels/channel.ts";

export interface ApprovalHost {
  /**
   * Shows `question` with its buttons in `to` when that chat's channel can, else in the owner's
   * preferred chat. Resolves with where it went and the message's id, or null when no chat that
   * can show buttons is reachable. Must not reject.
   */
  ask(to: DeliveryTarget | null, question: ChoiceQuestion): Promise<{ to: DeliveryTarget; messageId: string } | null>;
  /** The question now shows `text` and no buttons. Must not reject (a failure is logged). */
  settle(to: DeliveryTarget, messageId: string, text: string): Promise<void>;
}
