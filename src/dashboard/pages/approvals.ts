// Approvals: the questions waiting for the owner (Allow once / Deny press them exactly as the
// chat buttons do), the grants in force (revoke), and the audit log of every decision.
import { actionText, decisionText, transferText, type AuditRecord } from "../../approvals/audit.ts";
import { chatText, coverText, grantText, placeText } from "../../approvals/grants.ts";
import type { OpenQuestion } from "../../approvals/service.ts";
import { localDate, localTime } from "../../process/time.ts";
import { actionButton, ago, badge, esc, named, table } from "../layout.ts";
import { field, type Page } from "../pages.ts";

/** How many decisions the audit log shows, newest first. */
const AUDIT_ROWS = 50;

export const page: Page = {
  id: "approvals",
  path: "/approvals",
  title: "Approvals",
  order: 45,
  render(host) {
    const now = host.clock();
    const timezone = host.usage.timezone;
    const nameOf = host.names();
    const open = host.approvals.open().map((q) => [
      `<code class="cmd">${esc(q.tool)}: ${esc(q.command)}</code><br><span class="muted">${esc(where(q))}</span>`,
      esc(q.reason),
      `${named(nameOf(q.session), q.session)}<br><span class="muted">${esc(ago(q.at, now))}</span>`,
      `<div class="actions">${actionButton("Allow once", "approvals/press", { key: q.key, choice: "once" }, { kind: "primary" })}${actionButton("Deny", "approvals/press", { key: q.key, choice: "deny" }, { kind: "danger" })}</div>`,
    ]);
    const grants = host.approvals.grants().map((g, i) => [
      esc(i + 1),
      `<code class="cmd">${esc(coverText(g))}</code><br><span class="muted">${esc(chatText(g.chat))}</span>`,
      g.expiresAt === null ? badge("always", "warn") : badge(`${Math.max(1, Math.ceil((g.expiresAt - now) / 60_000))} more min`, "ok"),
      `${esc(g.by)}<br><span class="muted">${esc(ago(g.at, now))}</span>`,
      actionButton("Revoke", "approvals/revoke", { at: String(g.at), pattern: g.pattern }, { kind: "danger", confirm: `Revoke the grant for "${g.pattern}"? Hearth asks again next time.` }),
    ]);
    const audit = host.approvals
      .audit(AUDIT_ROWS)
      .reverse()
      .map((r) => [
        `${esc(localDate(r.at, timezone))} ${esc(localTime(r.at, timezone))}`,
        badge(decisionText(r.decision), DECISION_KIND[r.decision] ?? "muted"),
        `<code class="cmd">${esc(actionText(r))}</code>`,
        esc(r.by ?? (transferText(r) || (["asked", "refused", "failed"].includes(r.decision) ? (r.reason ?? "") : ""))),
      ]);
    return `
<section aria-labelledby="wa"><h2 id="wa">Waiting for you</h2>${table(["Action", "Why it is asked", "Session", ""], open, "Nothing is waiting for your approval.", "Waiting for you")}
${open.length ? `<p class="muted">The same question is in your chat; answering here answers it there too.</p>` : ""}</section>
<section aria-labelledby="gr"><h2 id="gr">Grants</h2>${table(["#", "Allowed", "For", "By", ""], grants, "No grants: every risky action is asked about.", "Grants")}</section>
<section aria-labelledby="au"><h2 id="au">Decisions</h2>${table(["When", "Decision", "Action", "By or why"], audit, "No approval decisions yet.", "Decisions, newest first")}
<p class="muted">The newest ${AUDIT_ROWS}; <code>hearth grants --log</code> lists them too.</p></section>`;
  },
  actions: {
    async press(host, body) {
      const choice = field(body, "choice");
      if (choice !== "once" && choice !== "deny") throw new Error(`Unknown choice "${choice}".`);
      const answer = await host.approvals.press(field(body, "key"), choice);
      if (answer === "This request is no longer open.") return { refusal: 409, error: "This question was answered meanwhile (or timed out); nothing changed." };
      return { message: answer };
    },
    revoke(host, body) {
      const gone = host.approvals.revoke(Number(field(body, "at")), field(body, "pattern"));
      if (!gone) return { refusal: 404, error: "That grant is no longer in force." };
      return { message: `Revoked: ${grantText(gone)}.` };
    },
  },
};

const DECISION_KIND: Partial<Record<AuditRecord["decision"], "ok" | "warn" | "bad" | "muted">> = {
  asked: "warn",
  allowed_once: "ok",
  allowed_for: "ok",
  always: "ok",
  granted: "ok",
  denied: "bad",
  timed_out: "bad",
  not_asked: "bad",
  connected: "muted",
  refused: "bad",
  failed: "warn",
};

const where = (q: OpenQuestion): string => `${placeText(q.folder)}${q.hosts.length ? ` → ${q.hosts.join(", ")}` : ""}`;
