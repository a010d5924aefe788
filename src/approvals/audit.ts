// The audit log (`<home>/approvals.jsonl`): one line per decision — asked, allowed (once, for a
// while, always), denied, unanswered, stopped, covered by a grant — with who decided and when.
// Append-only; `hearth grants --log` shows it.
import { z } from "zod";
import type { Logger } from "../process/log.ts";
import { appendRecord, readJsonLines } from "../state/storage.ts";
import type { EgressRecord } from "../egress/egress.ts";

export const decisions = ["asked", "allowed_once", "allowed_for", "always", "denied", "timed_out", "stopped", "granted", "not_asked", "expired", "connected", "refused", "failed"] as const;
export type Decision = (typeof decisions)[number];

const auditSchema = z.object({
  at: z.number(),
  decision: z.enum(decisions),
  tool: z.string(),
  command: z.string(),
  folder: z.string(),
  host: z.string().nullable().optional(),
  session: z.string(),
  /** Why it was asked (the policy's reason). */
  reason: z.string().optional(),
  /** Who pressed (a name), or "grant: <pattern>" for a call a grant covered. */
  by: z.string().optional(),
  /** What the grant a lasting press made covers (`allowed_for`, `always`): the choice the owner made, in grants.ts grantText's words. */
  covers: z.string().optional(),
  /** A connection's port, and the bytes it carried out and in (egress). */
  port: z.number().optional(),
  sent: z.number().optional(),
  received: z.number().optional(),
});
export type AuditRecord = z.output<typeof auditSchema>;

export class AuditLog {
  readonly #path: string;
  readonly #log: Logger;

  constructor(path: string, log: Logger) {
    this.#path = path;
    this.#log = log;
  }

  /** Appends one record; a failed write is logged, never thrown (the decision stands). */
  append(record: AuditRecord): void {
    try {
      appendRecord(this.#path, `${JSON.stringify(record)}\n`, { durable: true });
    } catch (err) {
      this.#log.error("approvals.audit_write_failed", { error: err, decision: record.decision });
    }
  }

  read(): AuditRecord[] {
    return readJsonLines(this.#path, auditSchema, this.#log).values;
  }
}

const WORDS: Record<Decision, string> = {
  asked: "asked",
  allowed_once: "allowed once",
  allowed_for: "allowed for a while",
  always: "allowed always",
  denied: "denied",
  timed_out: "not answered: denied",
  stopped: "stopped while asking",
  granted: "run under a grant",
  not_asked: "not run: no chat to ask in",
  expired: "asked again after a restart",
  connected: "connected",
  refused: "connection refused",
  failed: "connection failed",
};

/** A decision in words: "allowed once", "not answered: denied". */
export const decisionText = (d: Decision): string => WORDS[d];

/** One connection the egress policy decided (src/egress/), as an audit record: tool "connect", the command or tool that made it. */
export function connectionRecord(r: EgressRecord, at: number): AuditRecord {
  return {
    at,
    decision: r.decision,
    tool: "connect",
    command: r.what,
    folder: "",
    host: r.host,
    port: r.port,
    session: r.session,
    sent: r.sent,
    received: r.received,
    ...(r.reason ? { reason: r.reason } : {}),
  };
}

/**
 * `2026-11-25 17:02  denied  exec: rm -r build  (by Ann) — it deletes recursively (rm -r)`;
 * a lasting press: `… allowed for a while  exec: curl … → example.com:443  (by Ann) — covers any command or fetch → example.com:443 (chat telegram:100)`;
 * a connection: `2026-11-25 17:03  connected  exec: curl https://example.com → example.com:443  (out 78 B, in 1.2 kB)`.
 */
export function auditLine(r: AuditRecord, timezone: string): string {
  const when = new Intl.DateTimeFormat("sv-SE", { timeZone: timezone, dateStyle: "short", timeStyle: "short" }).format(r.at);
  const bytes = transferText(r);
  const why = r.reason && ["asked", "refused", "failed"].includes(r.decision) ? ` — ${r.reason}` : r.covers ? ` — covers ${r.covers}` : "";
  return `${when}  ${WORDS[r.decision]}  ${actionText(r)}${r.by ? `  (by ${r.by})` : ""}${bytes ? `  (${bytes})` : ""}${why}`;
}

/** What was done, for people: "exec: rm -r build → host", or a connection's "exec: curl … → example.com:443". */
export const actionText = (r: AuditRecord): string => `${r.tool === "connect" ? r.command : `${r.tool}: ${r.command}`}${r.host ? ` → ${r.host}${r.port ? `:${r.port}` : ""}` : ""}`;

/** A connection's bytes, "out 78 B, in 1.2 kB"; "" for anything else. */
export const transferText = (r: AuditRecord): string => (r.sent !== undefined && r.decision === "connected" ? `out ${byteText(r.sent)}, in ${byteText(r.received ?? 0)}` : "");

const byteText = (n: number): string => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} kB` : `${(n / 1024 / 1024).toFixed(1)} MB`);
