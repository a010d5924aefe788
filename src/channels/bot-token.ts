// What a bot token looks like, one rule for `hearth setup` (checked before asking the platform)
// and `hearth doctor`: a token setup accepted is never one doctor calls malformed.
//   Telegram: the bot's numeric id, a colon, then about 35 of [A-Za-z0-9_-].
//   Discord: three base64url parts separated by dots.

export type BotPlatform = "telegram" | "discord";

const SHAPE: Record<BotPlatform, { re: RegExp; looks: string; fix: string }> = {
  telegram: { re: /^\d{5,}:[A-Za-z0-9_-]{30,}$/, looks: "digits, a colon, then about 35 characters", fix: "copy it again from @BotFather (/token)" },
  discord: { re: /^[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{20,}$/, looks: "three parts separated by dots", fix: "copy it again from the Developer Portal (Bot → Reset Token)" },
};

/** null when `token` has the platform's shape; else what is wrong and the fix. Never echoes the token. */
export function botTokenProblem(platform: BotPlatform, token: string): { problem: string; fix: string } | null {
  const s = SHAPE[platform];
  return s.re.test(token) ? null : { problem: `the token does not look like a bot token (${s.looks})`, fix: s.fix };
}
