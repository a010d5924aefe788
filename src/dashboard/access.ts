// Who may use the dashboard: the holder of a session cookie, which only a one-time login token
// (printed by `hearth dashboard`, asked of the daemon over its owner-only control socket) buys.
// Sessions live in the daemon's memory: a restart or `hearth dashboard --rotate` ends them all.
// Failed logins are counted per source (see LoginSource), so a hostile page that fires made-up
// links at the dashboard locks only its own kind of attempt, never the owner's printed link.
import { randomBytes, timingSafeEqual } from "node:crypto";

/** How long a printed login link works. */
export const LOGIN_TOKEN_TTL_MS = 10 * 60_000;
/** Failed logins allowed per minute from one source before its logins are refused for the rest of it. */
export const MAX_FAILED_LOGINS_PER_MINUTE = 10;
const MAX_PENDING_TOKENS = 20;
const MAX_SESSIONS = 50;
/** Sources whose failures are remembered; the oldest is forgotten beyond it. */
const MAX_SOURCES = 200;

/**
 * The session cookie's name, with the port: cookies are shared by every port of a host, so two
 * dashboards (two homes) on one machine would otherwise log each other out.
 */
export const sessionCookie = (port: number): string => `hearth_session_${port}`;

/**
 * Where a login attempt comes from, for its failure count: "local" (opened from this machine:
 * the printed link, a terminal), "elsewhere" (a link on another site, which a hostile page can
 * click for the owner), or `remote:<address>` (another machine, with dashboard.allowRemote).
 */
export type LoginSource = string;

export interface DashboardSession {
  id: string;
  /** Sent by the page with every state-changing request (`x-csrf-token`). */
  csrf: string;
  createdAt: number;
}

export type LoginResult = { type: "ok"; session: DashboardSession } | { type: "refused" } | { type: "rate_limited" };

const secret = (): string => randomBytes(32).toString("base64url");

export class DashboardAccess {
  readonly #tokens = new Map<string, number>();
  readonly #sessions = new Map<string, DashboardSession>();
  readonly #failures = new Map<LoginSource, number[]>();
  readonly #clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  /** A new one-time login token, valid for LOGIN_TOKEN_TTL_MS. */
  issueToken(): string {
    const now = this.#clock();
    for (const [t, exp] of this.#tokens) if (exp <= now) this.#tokens.delete(t);
    while (this.#tokens.size >= MAX_PENDING_TOKENS) this.#tokens.delete(this.#tokens.keys().next().value!);
    const token = secret();
    this.#tokens.set(token, now + LOGIN_TOKEN_TTL_MS);
    return token;
  }

  /**
   * Trades a token for a session, once; a used, expired or made-up token is refused and counted
   * against `source`, whose logins wait once it had MAX_FAILED_LOGINS_PER_MINUTE in a minute.
   */
  login(token: string, source: LoginSource = "local"): LoginResult {
    const now = this.#clock();
    const failures = (this.#failures.get(source) ?? []).filter((at) => at > now - 60_000);
    if (failures.length >= MAX_FAILED_LOGINS_PER_MINUTE) return { type: "rate_limited" };
    const expires = this.#tokens.get(token);
    this.#tokens.delete(token);
    if (expires === undefined || expires <= now) {
      this.#failures.delete(source);
      this.#failures.set(source, [...failures, now]);
      while (this.#failures.size > MAX_SOURCES) this.#failures.delete(this.#failures.keys().next().value!);
      return { type: "refused" };
    }
    while (this.#sessions.size >= MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
    const session: DashboardSession = { id: secret(), csrf: secret(), createdAt: now };
    this.#sessions.set(session.id, session);
    return { type: "ok", session };
  }

  /** The session a request's Cookie header names in cookie `name`; null without a live one. */
  sessionOf(cookieHeader: string | undefined, name: string): DashboardSession | null {
    const id = cookieValue(cookieHeader, name);
    return id ? (this.#sessions.get(id) ?? null) : null;
  }

  /** Ends every session and forgets every unused token; returns how many sessions ended. */
  rotate(): number {
    const ended = this.#sessions.size;
    this.#sessions.clear();
    this.#tokens.clear();
    return ended;
  }
}

/** Constant-time comparison of a presented secret with the expected one. */
export function sameSecret(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return null;
}
