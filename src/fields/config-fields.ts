// The building blocks of the config schema, shared by config/ and the channels' descriptors:
// strict objects that suggest the key meant, secrets checked without quoting them, durations,
// time zones and prices. A channel section's shared keys are channels/access-config.ts.
import { z } from "zod";
import { secretValue, type SecretMove } from "./secret-fields.ts";

export const queueModes = ["steer", "followup", "collect", "interrupt"] as const;
export type QueueMode = (typeof queueModes)[number];
/** Where Telegram marks a message 👀 while it is being answered: private chats only, every chat, or nowhere. */
export const reactionModes = ["private", "all", "off"] as const;
export type ReactionMode = (typeof reactionModes)[number];
export const logLevels = ["debug", "info", "warn", "error"] as const;


// ── field schemas ──────────────────────────────────────────────────────────────────────────

/** A strict object whose unknown-key message suggests the key that was probably meant. */
export function strict<T extends z.core.$ZodLooseShape>(shape: T) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (iss) => (iss.code === "unrecognized_keys" ? unknownKeysMessage(iss.keys, known) : undefined),
  });
}

export const positiveInt = z.int().min(1);

// Secrets are checked without ever quoting them: these messages end up on a terminal.
const secretText = z
  .string()
  .trim()
  .min(1, "is empty")
  .refine((s) => !/\s/.test(s), "must not contain spaces or line breaks (check for a stray character)");

/**
 * A key or a token, marked as a secret (src/fields/secret-fields.ts): blanked in backups, moved to
 * `.env` by the upgrade as `move` says, registered with the log redactor.
 */
export const secret = (move: SecretMove) => secretText.meta(secretValue(move));

export const httpUrl = z
  .url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" })
  .transform((u) => u.replace(/\/+$/, ""));

export const timeZone = z
  .string()
  .trim()
  .superRefine((tz, ctx) => {
    if (!isTimeZone(tz)) {
      ctx.addIssue({
        code: "custom",
        message: `"${tz}" is not an IANA time zone (examples: "Europe/Berlin", "America/New_York", "UTC")`,
      });
    }
  })
  .transform((tz) => new Intl.DateTimeFormat("en-US", { timeZone: tz }).resolvedOptions().timeZone);

export const duration = z.preprocess(
  (v) => (v === 0 ? "0" : v),
  z
    .string()
    .trim()
    .refine((s) => parseDuration(s) !== null, 'expected a duration such as "30m", "1h" or "90s" ("0" turns it off)'),
);

export const clockTime = z
  .string()
  .regex(/^(?:[01]\d|2[0-3]):[0-5]\d$|^24:00$/, 'expected a time "HH:MM" on a 24-hour clock, e.g. "08:00"');

/** The name of an environment variable that holds a key (instead of writing the key in config.json). */
export const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected an environment variable name such as MY_API_KEY");

export const speechFormats = ["opus", "mp3", "aac", "flac", "wav"] as const;
export const voiceReplyModes = ["auto", "always", "never"] as const;

export const usd = z.number().positive("must be a positive amount of US dollars");
export const pricePerMillion = z.number().min(0, "must be a price in USD per million tokens (0 or more)");

// ── helpers ────────────────────────────────────────────────────────────────────────────────

/** This machine's IANA time zone, the default for `timezone`. */
export function systemTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

export function isTimeZone(tz: string): boolean {
  if (tz === "") return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export const durationUnits: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses a duration like "30m", "1h30m", "90s", "500ms" or "2d" into milliseconds. "0" is 0
 * (off). Returns null for anything else, including negative or fractional values.
 */
export function parseDuration(text: string): number | null {
  const s = text.trim();
  if (s === "0") return 0;
  if (!/^(?:\d+(?:ms|s|m|h|d))+$/.test(s)) return null;
  let total = 0;
  for (const [, n, unit] of s.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(n) * durationUnits[unit!]!;
  return Number.isSafeInteger(total) ? total : null;
}

export function unknownKeysMessage(keys: string[], known: string[]): string {
  const parts = keys.map((key) => {
    const guess = closestKey(key, known);
    return guess ? `"${key}" (did you mean "${guess}"?)` : `"${key}"`;
  });
  const anyGuess = keys.some((key) => closestKey(key, known));
  const list = anyGuess ? "" : `; known keys here: ${known.join(", ")}`;
  return `Unknown key${keys.length > 1 ? "s" : ""} ${parts.join(", ")}${list}`;
}

/** The known key that `key` most likely misspells: same letters in another case, or ≤ 2 edits. */
export function closestKey(key: string, known: string[]): string | undefined {
  const lower = key.toLowerCase();
  const sameCase = known.find((k) => k.toLowerCase() === lower);
  if (sameCase) return sameCase;
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best;
}

export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}
