// What a dashboard page is, and the list of them: every module in pages/ exports one `page`,
// so adding a page is adding one file there (the navigation is built from the list).
import { readdirSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { DashboardSession } from "./access.ts";
import type { DashboardHost } from "./host.ts";

/** An action wrote its own response (a streamed chat answer). */
export const STREAMED = "streamed" as const;

/**
 * What an action answers: fields added to `{ ok: true }`, STREAMED, or a refusal with its status
 * and fields (`{ ok: false, error, … }`). A thrown error is a 400 whose message the page shows.
 */
export type ActionResult = Record<string, unknown> | typeof STREAMED | { refusal: number; error: string; [field: string]: unknown };

export interface ActionRequest {
  req: IncomingMessage;
  res: ServerResponse;
  session: DashboardSession;
}

export interface Page {
  /** The page's name in action URLs: `/api/<id>/<action>`. */
  id: string;
  /** Where it is served: `/`, `/chat`. */
  path: string;
  /** Its name in the navigation. */
  title: string;
  /** Its place in the navigation (smaller first). */
  order: number;
  /** The page's HTML (inside the layout); every value from outside passes through `esc`. */
  render(host: DashboardHost, url: URL): string | Promise<string>;
  /** State-changing requests (POST, same origin, CSRF token checked before). */
  actions?: Record<string, (host: DashboardHost, body: Record<string, unknown>, request: ActionRequest) => ActionResult | Promise<ActionResult>>;
}

let loaded: Promise<Page[]> | null = null;

/** Every page of pages/, in navigation order; imported once. */
export function loadPages(): Promise<Page[]> {
  loaded ??= (async () => {
    const dir = new URL("./pages/", import.meta.url);
    const files = readdirSync(dir).filter((f) => f.endsWith(".ts")).sort();
    const modules = await Promise.all(files.map((f) => import(new URL(f, dir).href) as Promise<{ page?: Page }>));
    return modules.flatMap((m) => (m.page ? [m.page] : [])).sort((a, b) => a.order - b.order);
  })();
  return loaded;
}

/** A string field of an action's body, trimmed; throws a message for the user when missing. */
export function field(body: Record<string, unknown>, name: string, opts: { optional?: boolean; trim?: boolean } = {}): string {
  const v = body[name];
  if (typeof v === "string" && (v.trim() || opts.optional)) return opts.trim === false ? v : v.trim();
  if (opts.optional && v === undefined) return "";
  throw new Error(`Missing "${name}".`);
}
