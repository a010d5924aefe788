// People: who waits for a pairing code's approval (approve or deny), who is paired (revoke),
// and each channel's access rules from config: allowed senders and groups, the DM rate limit.
import { actionButton, ago, badge, esc, table } from "../layout.ts";
import { field, type Page } from "../pages.ts";

export const page: Page = {
  id: "people",
  path: "/people",
  title: "People",
  order: 50,
  render(host) {
    const now = host.clock();
    const pending = host.people.pending().map((p) => [
      `<code>${esc(p.code)}</code>`,
      `<strong>${esc(p.name)}</strong> <span class="muted">${esc(p.channel)}:${esc(p.userId)}</span>`,
      esc(ago(p.createdAt, now)),
      `<div class="actions">${actionButton("Approve", "people/approve", { code: p.code }, { kind: "primary" })}${actionButton("Deny", "people/deny", { code: p.code }, { kind: "danger" })}</div>`,
    ]);
    const paired = host.people.paired().map((a) => [
      `<strong>${esc(a.name)}</strong>`,
      `<span class="muted">${esc(a.channel)}:${esc(a.userId)}</span>`,
      esc(ago(a.approvedAt, now)),
      actionButton("Revoke", "people/revoke", { channel: a.channel, userId: a.userId }, { kind: "danger", confirm: `Stop ${a.name} from talking to Hearth?` }),
    ]);
    const nameOf = host.names();
    const rules = host.people.rules().map((r) => [
      `<strong>${esc(r.channel)}</strong>`,
      badge(r.dmPolicy, r.dmPolicy === "disabled" ? "bad" : "ok"),
      r.allowFrom.length ? r.allowFrom.map((a) => `<code>${esc(a)}</code>`).join(" ") : "—",
      `${badge(r.groupPolicy)} ${r.groups.map((g) => (nameOf(`${r.channel}:${g}`) ? `${esc(nameOf(`${r.channel}:${g}`))} <code>${esc(g)}</code>` : `<code>${esc(g)}</code>`)).join(" ")}`,
      esc(r.dmRateLimit),
    ]);
    return `
<section aria-labelledby="pe"><h2 id="pe">Waiting for approval</h2>${table(["Code", "Who", "Asked", ""], pending, "Nobody is waiting.", "Waiting for approval")}</section>
<section aria-labelledby="pa"><h2 id="pa">Paired</h2>${table(["Name", "Account", "Since", ""], paired, "Nobody is paired yet.", "Paired")}</section>
<section aria-labelledby="ru"><h2 id="ru">Access rules</h2>${table(["Channel", "Direct messages", "Allowed senders", "Groups", "DM rate limit"], rules, "No chat channel is configured.", "Access rules")}
<p class="muted">These come from config.json; edit it there and restart Hearth.</p></section>`;
  },
  actions: {
    approve(host, body) {
      const p = host.people.approve(field(body, "code"));
      if (!p) return { refusal: 404, error: "That code is no longer pending (codes expire after an hour)." };
      return { message: `${p.name} may talk to Hearth now.` };
    },
    deny(host, body) {
      const p = host.people.deny(field(body, "code"));
      if (!p) return { refusal: 404, error: "That code is no longer pending." };
      return { message: `Denied ${p.name}.` };
    },
    revoke(host, body) {
      if (!host.people.revoke(field(body, "channel"), field(body, "userId"))) return { refusal: 404, error: "Not a paired sender." };
      return { message: "Revoked." };
    },
  },
};
