// A person of the owner's household: a name, the chat accounts that are theirs, a daily budget
// and the tools the owner lets them use. What a name and an account may look like is decided
// here, with errors that say what to type instead; people.json (registry.ts) stores them.
import { z } from "zod";
import { hearthCmd } from "../process/hearth-command.ts";
import { CONFIGURABLE_IDS, type ConfigurableId } from "../channels/registry.ts";
import { isPersonName, PERSON_NAME_RULE } from "../memory/visibility.ts";

/** The tools a person may have beyond memory and chat (memory_search, memory_get, memory_write, send_file). */
export interface PersonTools {
  /** web_search and web_fetch. */
  web: boolean;
  /** exec, in the sandbox, seeing only their own folder. */
  exec: boolean;
  /** read, write and edit, inside their own folder. */
  files: boolean;
  /** The MCP servers (config `mcp.servers` names) whose tools they may call. */
  mcp: string[];
}

export const NO_TOOLS: PersonTools = { web: false, exec: false, files: false, mcp: [] };

export interface Person {
  /** Lowercase slug (PERSON_NAME_RULE): their folder is `people/<name>/`, their session `person:<name>`. */
  name: string;
  /** `<channel>:<userId>`, as the channel names the sender; each belongs to at most one person. */
  accounts: string[];
  /** Their own daily limit in USD; absent: only the shared chats' daily limit and the owner's limits. */
  dailyUsd?: number;
  tools: PersonTools;
  addedAt: number;
}

/** A bad name, account, budget or tool, or a conflict with the registry: the message says what to do. */
export class PeopleError extends Error {
  override name = "PeopleError";
}

/** `name` checked; the error names the rule. */
export function checkName(name: string): string {
  if (isPersonName(name)) return name;
  throw new PeopleError(`${JSON.stringify(name)} is not a valid name: ${PERSON_NAME_RULE}.`);
}

/** The longest user id an account may carry (a mail address is the longest kind). */
const MAX_USER_ID = 320;

/** `channel:userId` for `userId` on `channel`, checked. */
export function accountOf(channel: string, userId: string): string {
  if (!(CONFIGURABLE_IDS as readonly string[]).includes(channel)) {
    throw new PeopleError(`${JSON.stringify(channel)} is not a chat channel; use one of ${CONFIGURABLE_IDS.join(", ")}.`);
  }
  const id = userId.trim();
  if (id === "" || id.length > MAX_USER_ID || /[\s\p{Cc}\p{Cf}]/u.test(id)) {
    throw new PeopleError(`${JSON.stringify(userId)} is not a ${channel} user id: give the id as ${channel} names the sender (no spaces), e.g. the one \`${hearthCmd("pairing list")}\` or the log shows.`);
  }
  return `${channel}:${id}`;
}

/** `telegram:1002` → its channel and user id; null when it is not one of a chat channel. */
export function splitAccount(account: string): { channel: ConfigurableId; userId: string } | null {
  const at = account.indexOf(":");
  if (at <= 0) return null;
  const channel = account.slice(0, at);
  if (!(CONFIGURABLE_IDS as readonly string[]).includes(channel)) return null;
  return { channel: channel as ConfigurableId, userId: account.slice(at + 1) };
}

/** A daily budget in USD from the command line: a positive number of dollars. */
export function checkDailyUsd(usd: number): number {
  if (!Number.isFinite(usd) || usd <= 0 || usd > 1_000_000) throw new PeopleError(`${usd} is not a daily budget: give a positive number of dollars, e.g. 2 or 0.50.`);
  return Math.round(usd * 100) / 100;
}

/** `web,exec,files,mcp:github` → PersonTools; `none` → none. */
export function parseTools(list: string): PersonTools {
  const tools: PersonTools = { web: false, exec: false, files: false, mcp: [] };
  const words = list.split(",").map((w) => w.trim()).filter(Boolean);
  if (words.length === 1 && words[0] === "none") return tools;
  if (words.length === 0) throw new PeopleError('Name the tools to allow: web, exec, files, mcp:SERVER (comma-separated), or "none".');
  for (const w of words) {
    if (w === "web" || w === "exec" || w === "files") tools[w] = true;
    else if (w.startsWith("mcp:") && /^[A-Za-z0-9_-]+$/.test(w.slice(4))) {
      if (!tools.mcp.includes(w.slice(4))) tools.mcp.push(w.slice(4));
    } else throw new PeopleError(`${JSON.stringify(w)} is not a tool a person can be allowed: use web, exec, files or mcp:SERVER (a name under mcp.servers), or "none".`);
  }
  return tools;
}

/** The tools as `people list` shows them: "web, exec, mcp:github", or "memory and chat only". */
export function describeTools(t: PersonTools): string {
  const names = [...(t.web ? ["web"] : []), ...(t.exec ? ["exec"] : []), ...(t.files ? ["files"] : []), ...t.mcp.map((s) => `mcp:${s}`)];
  return names.length > 0 ? names.join(", ") : "memory and chat only";
}

/** PersonTools as people.json and the control socket carry them. */
export const personToolsSchema: z.ZodType<PersonTools> = z.object({ web: z.boolean(), exec: z.boolean(), files: z.boolean(), mcp: z.array(z.string().regex(/^[A-Za-z0-9_-]+$/)) });

/** One person as people.json stores them. */
export const personSchema: z.ZodType<Person> = z
  .object({
    name: z.string().refine(isPersonName, { message: PERSON_NAME_RULE }),
    accounts: z.array(z.string().refine((a) => splitAccount(a) !== null, { message: "an account is <channel>:<user id>" })),
    dailyUsd: z.number().positive().optional(),
    tools: personToolsSchema.prefault(NO_TOOLS),
    addedAt: z.number(),
  }) as z.ZodType<Person>;
