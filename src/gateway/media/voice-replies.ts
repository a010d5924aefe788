// Whether an answer is spoken, and the speaker that does it (delivery/spoken-reply.ts): the
// speech service of `voice.tts`, the chat's `/voice` setting over `voice.reply`, the budget
// asked and each part's price held before it is spoken, and each part metered in the usage
// ledger like any paid call.
import type { Scope } from "../../agent/messages.ts";
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../../process/log.ts";
import { mediaDir, storeBytes } from "../../media/store.ts";
import { synthesize, type SpeechConfig } from "../../media/speech.ts";
import { memoryScopeFor } from "../../memory/visibility.ts";
import type { Budget } from "../../spending/budget.ts";
import type { UsageLedger } from "../../spending/ledger.ts";
import { speechPricePerMillionChars } from "../../spending/pricing.ts";
import type { Reservations } from "../../spending/reservations.ts";
import { holdPaidCall } from "../paid-calls.ts";
import type { Speaker } from "../delivery/spoken-reply.ts";
import type { InboxEntry } from "../inbox.ts";
import type { SessionStore } from "../sessions.ts";

export interface VoiceDeps {
  config: Config;
  sessions: SessionStore;
  budget: Budget;
  /** Each spoken part is held at its price while it is made (spending/reservations.ts). */
  reservations: Pick<Reservations, "reserve">;
  usage: UsageLedger;
  log: Logger;
  clock: () => number;
}

/** The entry's answer is spoken: `/voice on` in its chat, else `voice.reply` (`auto`: it was a voice note). */
export function wantsVoice(reply: Config["voice"]["reply"], chat: "on" | "off" | undefined, voiceNote: boolean): boolean {
  if (chat !== undefined) return chat === "on";
  return reply === "always" || (reply === "auto" && voiceNote);
}

/** The speaker for the answer to `entry`, or null when it is answered in text only. */
export function speakerFor(deps: VoiceDeps, entry: Pick<InboxEntry, "sessionKey" | "voiceNote" | "message">, scope: Scope): Speaker | null {
  const tts = deps.config.voice.tts;
  if (!tts) return null;
  if (!wantsVoice(deps.config.voice.reply, deps.sessions.get(entry.sessionKey)?.voice, entry.voiceNote === true)) return null;
  const apiKey = tts.apiKey ?? (tts.apiKeyEnv ? process.env[tts.apiKeyEnv]?.trim() : undefined);
  const config: SpeechConfig = { baseUrl: tts.baseUrl, model: tts.model, voice: tts.voice, format: tts.format, ...(apiKey ? { apiKey } : {}) };
  const m = entry.message;
  return {
    synthesize: (text) => synthesize(config, text),
    reserve: (characters) => {
      const d = deps.budget.check({ scope, purpose: "chat", sessionKey: entry.sessionKey });
      // Spoken answers are an extra: past a limit the text alone goes, also for the owner.
      if (d.type !== "allow") return { type: "refused", reason: d.type === "refuse" ? d.reason : `over the ${d.limit} budget` };
      // The price is known before the call: the part's characters at voice.tts's price.
      const worstUsd = (characters * speechPricePerMillionChars(tts)) / 1_000_000;
      const tag = { session: entry.sessionKey, scope, purpose: "chat", channel: m.channel, sender: m.sender.id } as const;
      return holdPaidCall<number>((call) => deps.reservations.reserve(call), { kind: "speech", sessionKey: tag.session, scope, purpose: tag.purpose, worstUsd }, (spoken) =>
        deps.usage.recordSpeech(tag, tts.model, spoken),
      );
    },
    save: (audio) => storeBytes(deps.config.workspace, mediaDir(memoryScopeFor(scope, entry.sessionKey), deps.clock()), { bytes: audio.bytes, name: `answer.${audio.ext}`, mime: "" }, deps.clock()),
  };
}
