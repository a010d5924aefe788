// The frame every page shares (navigation, the CSRF token for the page's script) and the small
// HTML helpers pages use. Everything from outside goes through `esc`.
import type { Page } from "./pages.ts";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text (or an attribute value) made safe for HTML. */
export const esc = (v: unknown): string => String(v ?? "").replace(/[&<>"']/g, (c) => ESCAPES[c]!);

export function pageDocument(o: { pages: Page[]; current: Page; csrf: string; body: string; now: number }): string {
  const nav = o.pages
    .map((p) => `<a href="${esc(p.path)}"${p === o.current ? ' aria-current="page"' : ""}>${esc(p.title)}</a>`)
    .join("");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="csrf-token" content="${esc(o.csrf)}">
<title>${esc(o.current.title)} · Hearth</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/style.css">
<script src="/static/app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<svg class="brand" viewBox="0 0 24 24" aria-hidden="true"><path d="M12 2c1 3.5-1.5 5.5-3 7.5C7.3 11.8 6 13.6 6 16a6 6 0 0 0 12 0c0-2.6-1.2-4.6-2.6-6.2-.3 1.7-1.2 2.9-2.4 3.4.6-3.6-.2-7.9-1-11.2z"/></svg><span class="brand-name">Hearth</span>
<nav aria-label="Dashboard pages">${nav}</nav>
</header>
<main id="main" tabindex="-1">
<h1>${esc(o.current.title)}</h1>
<div class="toast" role="status" aria-live="polite" hidden></div>
${o.body}
</main>
</body>
</html>
`;
}

export function loginPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="0;url=/"><title>Logged in · Hearth</title><link rel="icon" href="/static/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/static/style.css"></head>
<body><main id="main"><h1>Logged in</h1><p><a href="/">Open the dashboard</a></p></main></body></html>
`;
}

/** A table: `head` the column names, `rows` cells already escaped; `empty` when there are none. */
export function table(head: string[], rows: string[][], empty: string, label?: string): string {
  if (rows.length === 0) return `<p class="empty">${esc(empty)}</p>`;
  const th = head.map((h) => `<th scope="col">${esc(h)}</th>`).join("");
  // data-label: on a phone each row is a card whose cells name their column.
  const tr = rows.map((r) => `<tr>${r.map((c, i) => `<td${head[i] ? ` data-label="${esc(head[i])}"` : ""}><span>${c}</span></td>`).join("")}</tr>`).join("\n");
  return `<div class="table-wrap"${label ? ` role="region" aria-label="${esc(label)}" tabindex="0"` : ""}><table><thead><tr>${th}</tr></thead><tbody>\n${tr}\n</tbody></table></div>`;
}

/** "3 min ago", "2 h ago", "just now". */
export function ago(at: number, now: number): string {
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 10) return "just now";
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

export const usd = (v: number): string => (v > 0 && v < 0.01 ? `$${v.toFixed(4)}` : `$${v.toFixed(2)}`);

/** A button that posts `args` to `/api/<action>` (the page's script does it). */
export function actionButton(label: string, action: string, args: Record<string, string>, opts: { confirm?: string; kind?: "danger" | "primary" } = {}): string {
  return `<button type="button" class="btn${opts.kind ? ` ${opts.kind}` : ""}" data-action="/api/${esc(action)}" data-args="${esc(JSON.stringify(args))}"${opts.confirm ? ` data-confirm="${esc(opts.confirm)}"` : ""}>${esc(label)}</button>`;
}

/** A session or chat by its name, with its id beside it in grey; by its id alone when no name is known. */
export const named = (name: string | null, ref: string): string =>
  name ? `<strong>${esc(name)}</strong> <span class="muted">${esc(ref)}</span>` : `<strong>${esc(ref)}</strong>`;

export const badge = (text: string, kind: "ok" | "warn" | "bad" | "muted" = "muted"): string => `<span class="badge ${kind}">${esc(text)}</span>`;
