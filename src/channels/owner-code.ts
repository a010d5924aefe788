// The one-time code that proves who the owner is during `hearth setup`. A bot's name is public:
// anyone may write to it while the wizard waits, so "the first private message" would be a race
// a stranger can win (and did, sending /start every 300 ms). The wizard shows a fresh code on the
// owner's own terminal; only a private message carrying it can name the owner, and only within
// the handshake window. The code is not a secret worth keeping: it is spent when setup ends.
import { randomInt } from "node:crypto";

/** No 0/O, 1/I/L: read off a screen and typed on a phone. */
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/** 31^8 ≈ 8.5 × 10^11: a stranger guessing through a five-minute window gets nowhere near. */
const LENGTH = 8;

export function newOwnerCode(): string {
  let code = "";
  for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/**
 * Whether a private message's text carries `code`: the code alone, or after `/start` (Telegram's
 * deep link sends `/start CODE`; `/start@Bot CODE` in a client that adds the name). Case and
 * surrounding spaces are forgiven; nothing else, so a message merely quoting it among other words
 * does not count.
 */
export function carriesOwnerCode(text: string | undefined, code: string): boolean {
  if (!text) return false;
  const rest = text.trim().replace(/^\/start(?:@[A-Za-z0-9_]+)?(?:\s+|$)/u, "");
  return rest.trim().toUpperCase() === code;
}
