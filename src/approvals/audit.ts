// The audit log (`<home>/approvals.jsonl`): one line per decision — asked, allowed (once, for a
// while, always), denied, unanswered, stopped, covered by a grant — with who decided and when.
// Append-only; `hearth grants --log` shows it.
import { z } from "zod";
import type { Logger } from "../log.ts";
import { appendRecord, readJsonLines } from "../storage.ts";

export const decisions = ["asked", "allowed_once", "allowed_for", "always", "denied", "timed_out", "stopped", "granted", "not_asked", "expired"] as const;
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
  /** Who pressed (a name), or "grant N" for a call a grant covered. */
  by: z.string().optional(),
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
};

/** A decision in words: "allowed once", "not answered: denied". */
export const decisionText = (d: Decision): string => WORDS[d];

/** `2026-11-25 17:02  denied  exec: rm -r build  (by Ann) — it deletes recursively (rm -r)` */
export function auditLine(r: AuditRecord, timezone: string): string {
  const when = new Intl.DateTimeFormat("sv-SE", { timeZone: timezone, dateStyle: "short", timeStyle: "short" }).format(r.at);
  return `${when}  ${WORDS[r.decision]}  ${r.tool}: ${r.command}${r.host ? ` → ${r.host}` : ""}${r.by ? `  (by ${r.by})` : ""}${r.reason && r.decision === "asked" ? ` — ${r.reason}` : ""}`;
}
