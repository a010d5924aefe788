// An MCP server's question to the user (elicitation, spec 2025-11-25), asked as messages the
// owner answers: one message per field (the first one carries the server's message), the
// answer checked against the field's schema and asked again when it does not fit, the schema's
// defaults applied, "decline" and "cancel" understood at any point, and no answer in time
// declining. A yes/no field and a single choice among a few come with buttons (Yes / No, one per
// choice, Decline) that answer as the typed words would; `ask` shows them where the chat has
// buttons and ignores them elsewhere. The same code asks on a terminal (`hearth mcp call`) and
// in a chat: only `ask` differs.
import type { AskChoice } from "../tool.ts";

/**
 * Sends `text` to whoever answers, with `choices` as buttons where it can show them, and
 * resolves with their answer (typed, or a pressed button's `answer`), or null when none came in
 * time (the caller's timeout). Must not throw for a missing answer.
 */
export type Ask = (text: string, choices?: readonly AskChoice[]) => Promise<string | null>;

export type ElicitOutcome =
  | { action: "accept"; content: Record<string, string | number | boolean | string[]> }
  | { action: "decline" }
  | { action: "cancel" };

interface FieldSchema {
  type?: string;
  title?: string;
  description?: string;
  format?: string;
  enum?: unknown[];
  enumNames?: string[];
  oneOf?: Array<{ const?: unknown; title?: string }>;
  items?: { enum?: unknown[]; anyOf?: Array<{ const?: unknown; title?: string }> };
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
}

export interface FormRequest {
  message: string;
  requestedSchema: { properties?: Record<string, unknown>; required?: string[] };
}

/** Times the same field is asked again after an answer that does not fit, before cancelling. */
const MAX_TRIES = 3;

/** A single choice among at most this many comes with buttons; more are typed (a number or the name). */
const MAX_BUTTON_CHOICES = 8;

/** Longer choice titles are cut on their button (Discord takes 80 characters). */
const MAX_LABEL = 40;

const DECLINE: AskChoice = { label: "Decline", answer: "decline" };

export async function elicitForm(server: string, req: FormRequest, ask: Ask): Promise<ElicitOutcome> {
  const props = Object.entries(req.requestedSchema.properties ?? {}) as Array<[string, FieldSchema]>;
  const required = new Set(req.requestedSchema.required ?? []);
  const content: Record<string, string | number | boolean | string[]> = {};
  const intro = `The MCP server "${server}" asks: ${req.message.trim()}\n(Answer "decline" to refuse, "cancel" to stop.)`;
  if (props.length === 0) {
    const a = await ask(`${intro}\nAnswer "yes" to accept.`, [{ label: "Accept", answer: "yes" }, DECLINE]);
    const verdict = control(a);
    if (verdict) return verdict;
    return yesNo(a!) === true ? { action: "accept", content } : { action: "decline" };
  }
  for (const [i, [key, field]] of props.entries()) {
    let note = "";
    for (let tries = 0; ; tries++) {
      const prompt = `${i === 0 && tries === 0 ? `${intro}\n` : ""}${note}${describeField(key, field, required.has(key))}`;
      const answer = await ask(prompt, buttonsFor(field, required.has(key)));
      const verdict = control(answer);
      if (verdict) return verdict;
      const r = parseAnswer(answer!.trim(), field, required.has(key));
      if (r.ok) {
        if (r.value !== undefined) content[key] = r.value;
        break;
      }
      if (tries + 1 >= MAX_TRIES) return { action: "cancel" };
      note = `That does not fit: ${r.error}.\n`;
    }
  }
  return { action: "accept", content };
}

/** URL mode: the link is sent; the owner accepts to open it (the server learns the rest itself). */
export async function elicitUrl(server: string, req: { message: string; url: string }, ask: Ask): Promise<ElicitOutcome> {
  const a = await ask(`The MCP server "${server}" asks you to open this link: ${req.message.trim()}\n${req.url}\nAnswer "yes" once you opened it, or "decline".`);
  const verdict = control(a);
  if (verdict) return verdict;
  return yesNo(a!) === true ? { action: "accept", content: {} } : { action: "decline" };
}

/** Null answer → decline (timeout); "decline"/"cancel" → that; otherwise null (go on). */
function control(answer: string | null): ElicitOutcome | null {
  if (answer === null) return { action: "decline" };
  const a = answer.trim().toLowerCase();
  if (a === "decline") return { action: "decline" };
  if (a === "cancel" || a === "/cancel") return { action: "cancel" };
  return null;
}

function choices(field: FieldSchema): Array<{ value: string; title: string }> | null {
  if (field.oneOf) return field.oneOf.map((o) => ({ value: String(o.const), title: o.title ?? String(o.const) }));
  if (field.enum) return field.enum.map((v, i) => ({ value: String(v), title: field.enumNames?.[i] ?? String(v) }));
  if (field.type === "array" && field.items?.anyOf) return field.items.anyOf.map((o) => ({ value: String(o.const), title: o.title ?? String(o.const) }));
  if (field.type === "array" && field.items?.enum) return field.items.enum.map((v) => ({ value: String(v), title: String(v) }));
  return null;
}

/**
 * The buttons of a field: Yes / No, or one per choice of a single choice among a few; then
 * "Default" (or "Skip" for an optional field without one) and Decline. Undefined: typed only.
 */
export function buttonsFor(field: FieldSchema, required: boolean): AskChoice[] | undefined {
  const list = choices(field);
  let picks: AskChoice[];
  if (list && field.type !== "array" && list.length <= MAX_BUTTON_CHOICES) picks = list.map((c, n) => ({ label: clipLabel(c.title), answer: String(n + 1) }));
  else if (!list && field.type === "boolean") picks = [{ label: "Yes", answer: "yes" }, { label: "No", answer: "no" }];
  else return undefined;
  if (field.default !== undefined) picks.push({ label: "Default", answer: "-" });
  else if (!required) picks.push({ label: "Skip", answer: "-" });
  return [...picks, DECLINE];
}

const clipLabel = (t: string): string => (t.length > MAX_LABEL ? `${t.slice(0, MAX_LABEL - 1)}…` : t);

export function describeField(key: string, field: FieldSchema, required: boolean): string {
  const label = field.title ?? key;
  const about = field.description ? ` — ${field.description}` : "";
  const list = choices(field);
  let how: string;
  if (field.type === "boolean") how = "yes or no";
  else if (list && field.type === "array") how = `one or more of (comma-separated): ${list.map((c, n) => `${n + 1}. ${c.title}`).join(", ")}`;
  else if (list) how = `one of: ${list.map((c, n) => `${n + 1}. ${c.title}`).join(", ")}`;
  else if (field.type === "integer" || field.type === "number") how = `a${field.type === "integer" ? "n integer" : " number"}${range(field.minimum, field.maximum)}`;
  else how = field.format ? `text (${field.format})` : "text";
  const fallback = field.default !== undefined ? `; "-" takes ${JSON.stringify(field.default)}` : required ? "" : '; "-" leaves it out';
  return `${label}${about}\n(${how}${required ? ", required" : ""}${fallback})`;
}

const range = (min?: number, max?: number): string =>
  min !== undefined && max !== undefined ? ` from ${min} to ${max}` : min !== undefined ? ` of at least ${min}` : max !== undefined ? ` of at most ${max}` : "";

function yesNo(a: string): boolean | null {
  const v = a.trim().toLowerCase();
  if (["yes", "y", "true", "ok", "oui", "ja"].includes(v)) return true;
  if (["no", "n", "false", "non", "nein"].includes(v)) return false;
  return null;
}

type Parsed = { ok: true; value: string | number | boolean | string[] | undefined } | { ok: false; error: string };

/** One answer against its field's schema; "-" takes the default (or leaves an optional field out). */
export function parseAnswer(answer: string, field: FieldSchema, required: boolean): Parsed {
  if (answer === "-" || answer === "") {
    if (field.default !== undefined) return { ok: true, value: field.default as string };
    return required ? { ok: false, error: "this field is required" } : { ok: true, value: undefined };
  }
  const list = choices(field);
  const pick = (a: string): string | null => {
    const n = Number(a);
    if (Number.isInteger(n) && n >= 1 && n <= list!.length) return list![n - 1]!.value;
    return list!.find((c) => c.value.toLowerCase() === a.toLowerCase() || c.title.toLowerCase() === a.toLowerCase())?.value ?? null;
  };
  if (field.type === "array" && list) {
    const picked = answer.split(",").map((s) => s.trim()).filter(Boolean).map(pick);
    if (picked.some((p) => p === null)) return { ok: false, error: `choose among ${list.map((c) => c.title).join(", ")}` };
    const values = [...new Set(picked as string[])];
    if (field.minItems !== undefined && values.length < field.minItems) return { ok: false, error: `choose at least ${field.minItems}` };
    if (field.maxItems !== undefined && values.length > field.maxItems) return { ok: false, error: `choose at most ${field.maxItems}` };
    return { ok: true, value: values };
  }
  if (list) {
    const v = pick(answer);
    return v === null ? { ok: false, error: `answer one of ${list.map((c) => c.title).join(", ")}` } : { ok: true, value: v };
  }
  switch (field.type) {
    case "boolean": {
      const v = yesNo(answer);
      return v === null ? { ok: false, error: "answer yes or no" } : { ok: true, value: v };
    }
    case "integer":
    case "number": {
      const n = Number(answer.replace(",", "."));
      if (!Number.isFinite(n) || (field.type === "integer" && !Number.isInteger(n))) return { ok: false, error: `answer a${field.type === "integer" ? "n integer" : " number"}` };
      if ((field.minimum !== undefined && n < field.minimum) || (field.maximum !== undefined && n > field.maximum)) return { ok: false, error: `answer a number${range(field.minimum, field.maximum)}` };
      return { ok: true, value: n };
    }
    default: {
      if (field.minLength !== undefined && answer.length < field.minLength) return { ok: false, error: `at least ${field.minLength} characters` };
      if (field.maxLength !== undefined && answer.length > field.maxLength) return { ok: false, error: `at most ${field.maxLength} characters` };
      const bad = formatError(answer, field.format);
      return bad ? { ok: false, error: bad } : { ok: true, value: answer };
    }
  }
}

function formatError(v: string, format: string | undefined): string | null {
  switch (format) {
    case "email":
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v) ? null : "answer an email address";
    case "uri":
      return URL.canParse(v) ? null : "answer a full link (https://…)";
    case "date":
      return /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v)) ? null : "answer a date as YYYY-MM-DD";
    case "date-time":
      return Number.isNaN(Date.parse(v)) ? "answer a date and time (YYYY-MM-DDTHH:MM)" : null;
    default:
      return null;
  }
}
