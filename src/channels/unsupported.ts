// What the channels cannot hand the model in any form (pictures, documents and audio are
// attachments; videos are attachments the gateway declines): the polite one-line answer, made
// without a model call. Channel-neutral, so Telegram and Discord say the same thing.

export type UnsupportedKind = "sticker" | "location" | "contact" | "poll" | "other";

export function unsupportedReply(kind: UnsupportedKind): string {
  switch (kind) {
    case "sticker":
      return "Nice sticker! I can only read text for now, though.";
    case "location":
      return "I can't read shared locations yet, sorry. Could you write the place or address instead?";
    case "contact":
      return "I can't read shared contacts yet, sorry. Could you type the details you want me to know?";
    case "poll":
      return "I can't read polls yet, sorry. Could you write the question as a message?";
    case "other":
      return "I can only read text messages for now, sorry.";
    default:
      return kind satisfies never;
  }
}
