// Spoken replies: the final answer, read aloud by the speech service, goes to the chat as audio
// beside its text — a Telegram voice message, a Discord audio attachment, a file saved in the
// workspace for the terminal. Exactly once, like every part of a reply: each spoken part is sent
// through the outbox's once-per-key send (`voice:<n>`) under the reply's name, and its platform
// id is fsynced the moment the platform has it, so a replayed run or a final text delivered
// again after a crash never speaks a part twice, and the synthesis itself is not repeated.
//
// The wrapper sits inside the outbox's (the outbox records the text as the model wrote it), like
// the markdown-image wrapper. Chats that can send files get the text first (it streamed) and
// the voice after; the terminal gets the saved file's path as a note before its answer ends.
// Failure of the speech call, or a budget that refuses it, leaves the text alone: one log line.
import type { Held } from "../../agent/paid-call.ts";
import { relaySink, type InboundMessage, type ReplySink } from "../../channels/channel.ts";
import { MAX_SPEECH_CHARS, speakableText, speechParts, type Speech } from "../../media/speech.ts";
import type { DeliveryDeps } from "./heard-line.ts";

/** One reply's speaker: what it needs to speak and account for each part. */
export interface Speaker {
  /** Speaks one part (at most MAX_SPEECH_CHARS characters). Failures are values; must not throw. */
  synthesize(text: string): Promise<Speech>;
  /**
   * Asked before each part with its length: the budget's hold, settled once with the characters
   * spoken (the part's cost is recorded then), or null when the synthesis failed. Refused: the
   * text stands alone. Must not throw.
   */
  reserve(characters: number): Held<number>;
  /**
   * Keeps the audio in the workspace for a channel that cannot send files (the terminal) and
   * returns its path relative to the workspace. May throw (a full disk): the part is then not sent.
   */
  save(audio: { bytes: Uint8Array; ext: string }): string;
}

class NotSpoken extends Error {
  readonly why: "failed" | "refused";
  constructor(why: "failed" | "refused", reason: string) {
    super(reason);
    this.why = why;
  }
}

/** `sink`, with its answer also spoken and sent as audio after (or, on the terminal, saved before) the text. */
export function withSpokenReply(sink: ReplySink, deps: DeliveryDeps, replyId: string, m: InboundMessage, speaker: Speaker): ReplySink {
  const canSendFiles = deps.channels.get(m.channel)?.sendFile !== undefined;
  const log = deps.log.child({ reply: replyId });
  const speak = async (text: string) => {
    const parts = speechParts(speakableText(text), MAX_SPEECH_CHARS);
    for (const [i, part] of parts.entries()) {
      try {
        await deps.outbox.sendFileOnce(replyId, [`voice:${i}`], () => sendPart(deps, m, speaker, part, i, parts.length, canSendFiles));
      } catch (error) {
        // One line for the reply, then the text stands alone: the rest is not tried.
        if (error instanceof NotSpoken) log.warn(error.why === "refused" ? "reply.voice_refused" : "reply.voice_failed", { part: i + 1, of: parts.length, reason: error.message });
        else log.warn("reply.voice_not_sent", { part: i + 1, of: parts.length, error });
        return;
      }
    }
  };
  return relaySink(sink, {
    finish: async (text, outcome = "answered") => {
      if (outcome !== "answered") return sink.finish(text, outcome);
      if (!canSendFiles) await speak(text);
      await sink.finish(text, outcome);
      if (canSendFiles) await speak(text);
    },
  });
}

async function sendPart(deps: DeliveryDeps, m: InboundMessage, speaker: Speaker, part: string, i: number, of: number, canSendFiles: boolean): Promise<string> {
  const held = speaker.reserve(part.length);
  if (held.type === "refused") throw new NotSpoken("refused", held.reason);
  const audio = await speaker.synthesize(part);
  held.settle(audio.type === "failed" ? null : part.length);
  if (audio.type === "failed") throw new NotSpoken("failed", audio.reason);
  const name = of === 1 ? `answer.${audio.ext}` : `answer-${i + 1}.${audio.ext}`;
  if (canSendFiles) {
    const id = await deps.channels.sendFile(m, { file: "(spoken answer)", data: audio.bytes, name, mime: audio.mime, asPhoto: false, voice: true });
    return id ?? "";
  }
  const path = speaker.save(audio);
  await deps.channels.note(m, `🔊 spoken answer${of === 1 ? "" : ` (${i + 1}/${of})`}: ${path}`);
  return path;
}
